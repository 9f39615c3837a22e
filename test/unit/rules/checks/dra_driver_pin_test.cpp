// A CEL selector on the NVIDIA DRA driver's driverVersion or cudaDriverVersion
// attribute pins the driver as a GFD label selector does
// (kubernetes-gpu-semantics.md §15.2): gpu-missing-driver-pin is satisfied.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::judgeInput;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"gpu-missing-driver-pin"});

std::string input(const std::string& selectors) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n"
         "    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n" +
         selectors +
         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: c, "
         "resourceClaimTemplateName: t}]\n  containers:\n  - name: app\n    image: busybox\n"
         "    resources: {claims: [{name: c}]}\n";
}

TEST(DraDriverPin, ADriverVersionSelectorPinsTheDriver) {
  EXPECT_THAT(judgeInput(input("          selectors:\n          - cel:\n              expression: "
                               "\"device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0\"\n"),
                         kRule),
              IsEmpty());
  EXPECT_THAT(judgeInput(input("          selectors:\n          - cel:\n              expression: "
                               "\"device.attributes['gpu.nvidia.com'].cudaDriverVersion.isGreaterThan(semver('12.4.0'))\"\n"),
                         kRule),
              IsEmpty());
}

TEST(DraDriverPin, OtherSelectorsDoNot) {
  EXPECT_THAT(rulesHit(judgeInput(input("          selectors:\n          - cel:\n              expression: "
                                        "\"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'\"\n"),
                                  kRule)),
              ElementsAre("gpu-missing-driver-pin"));
  EXPECT_THAT(rulesHit(judgeInput(input(""), kRule)), ElementsAre("gpu-missing-driver-pin"));
}

}  // namespace
}  // namespace gpuguard
