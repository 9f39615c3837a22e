// Which DeviceClass is NVIDIA's is decided by what the input says - the
// driver its selectors name - never by a substring of its name; the name
// stays the last resort when the input holds no class, and findings then say
// they guessed (kubernetes-gpu-semantics.md §15.2). A claim template a
// ComputeDomain creates is an IMEX channel, not a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/gpu_use.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeInput;
using testing::onlyRules;
using testing::rulesHit;

const Policy kNodeRules = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"});

std::string deviceClass(const std::string& name, const std::string& driver, const std::string& extra = "") {
  return "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: " + name +
         "}\nspec:\n  selectors:\n  - cel:\n      expression: \"device.driver == '" + driver + "'" + extra +
         "\"\n---\n";
}

std::string claimTemplate(const std::string& name, const std::string& className) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         "}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: r\n        exactly: {deviceClassName: " +
         className + "}\n---\n";
}

std::string claimPod(const std::string& templateName) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: c, "
         "resourceClaimTemplateName: " + templateName +
         "}]\n  containers:\n  - name: app\n    image: busybox\n    resources: {claims: [{name: c}]}\n";
}

TEST(DeviceClassEvidence, TheSelectorsDriverMakesAClassNvidiasWhateverItsName) {
  const auto f = judgeInput(deviceClass("accelerators", "gpu.nvidia.com") + claimTemplate("t", "accelerators") +
                                claimPod("t"),
                            kNodeRules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("a guess")));
}

TEST(DeviceClassEvidence, OtherDriversClassesAreNoNvidiaGpusEvenNamedGpu) {
  for (const char* driver : {"gpu.amd.com", "gpu.intel.com", "gpu.example.com"}) {
    EXPECT_THAT(judgeInput(deviceClass("gpu", driver) + claimTemplate("gpu-claim", "gpu") + claimPod("gpu-claim"),
                           kNodeRules),
                IsEmpty())
        << driver;
  }
}

TEST(DeviceClassEvidence, MigClassesAreGpusButNotWholeOnes) {
  const Policy policy;
  InputFacts input;
  const auto add = [&](const std::string& yaml) { input.add(yaml::parseStream(yaml).documents.front().value); };
  add(deviceClass("mig.nvidia.com", "gpu.nvidia.com", " && device.attributes['gpu.nvidia.com'].type == 'mig'"));
  add(deviceClass("whole", "gpu.nvidia.com", " && device.attributes['gpu.nvidia.com'].type == 'gpu'"));
  const GpuFacts facts{policy, input};
  EXPECT_TRUE(facts.isGpuClass("mig.nvidia.com"));
  EXPECT_FALSE(facts.isWholeGpuClass("mig.nvidia.com"));
  EXPECT_TRUE(facts.isWholeGpuClass("whole"));
  EXPECT_FALSE(facts.isGuessedClass("whole"));
  EXPECT_TRUE(facts.isGuessedClass("gpu.nvidia.com")) << "not in the input: known by name only";
}

TEST(DeviceClassEvidence, WithoutTheClassTheNameDecidesAndTheFindingSaysItGuessed) {
  const auto f = judgeInput(claimTemplate("t", "gpu.nvidia.com") + claimPod("t"), kNodeRules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_THAT(f[0].message(), HasSubstr("a guess, so a warning: no DeviceClass or claim template in view says what"));
  EXPECT_THAT(f[1].message(), HasSubstr("a guess"));
  // A guess never denies: an AMD pod whose claim is named "gpu" has no NVIDIA taint to tolerate.
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[1].severity, Severity::Warning);
  // Once the class is in view it decides, and the missing toleration is the error it is.
  const auto known = judgeInput(deviceClass("gpu.nvidia.com", "gpu.nvidia.com", "") + claimTemplate("t", "gpu.nvidia.com") +
                                    claimPod("t"),
                                kNodeRules);
  ASSERT_THAT(rulesHit(known), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_EQ(known[0].severity, Severity::Error);
  // Other vendors' class names are no NVIDIA GPU even unseen.
  EXPECT_THAT(judgeInput(claimTemplate("t", "gpu.amd.com") + claimPod("t"), kNodeRules), IsEmpty());
  EXPECT_THAT(judgeInput(claimTemplate("t", "gpu.intel.com") + claimPod("t"), kNodeRules), IsEmpty());
}

TEST(DeviceClassEvidence, AComputeDomainsChannelTemplateIsAnImexChannelNotAGpu) {
  const std::string computeDomain =
      "apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: cd}\nspec:\n"
      "  numNodes: 2\n  channel:\n    resourceClaimTemplate:\n      name: gpu-domain-channel\n---\n";
  EXPECT_THAT(judgeInput(computeDomain + claimPod("gpu-domain-channel"), kNodeRules), IsEmpty());
  // Without the ComputeDomain, "gpu" in the name is all there is.
  EXPECT_THAT(rulesHit(judgeInput(claimPod("gpu-domain-channel"), kNodeRules)),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
}

TEST(DeviceClassEvidence, CelDriverNamesReadsBothQuotesAndSpacing) {
  EXPECT_THAT(celDriverNames("device.driver == 'gpu.nvidia.com' && device.attributes['x'].type == 'gpu'"),
              ElementsAre("gpu.nvidia.com"));
  EXPECT_THAT(celDriverNames("device.driver==\"gpu.amd.com\""), ElementsAre("gpu.amd.com"));
  EXPECT_THAT(celDriverNames("device.driver != 'x' || device.driver == 'y'"), ElementsAre("y"));
  EXPECT_THAT(celDriverNames("device.driver == 'unterminated"), IsEmpty());
}

TEST(DeviceClassEvidence, CelDriverNamesReadsTheDriverWrittenFirstAndInAList) {
  // Red team 32 B4: kube-scheduler allocates gpu.nvidia.com devices for each of these.
  EXPECT_THAT(celDriverNames("'gpu.nvidia.com' == device.driver"), ElementsAre("gpu.nvidia.com"));
  EXPECT_THAT(celDriverNames("\"gpu.nvidia.com\"==device.driver"), ElementsAre("gpu.nvidia.com"));
  EXPECT_THAT(celDriverNames("device.driver in ['gpu.nvidia.com', \"mig.nvidia.com\"]"),
              ElementsAre("gpu.nvidia.com", "mig.nvidia.com"));
  // Not a comparison for equality: nothing is named.
  EXPECT_THAT(celDriverNames("'x' != device.driver"), IsEmpty());
  EXPECT_THAT(celDriverNames("device.driver in []"), IsEmpty());
  EXPECT_THAT(celDriverNames("device.driverVersion in ['x'] || 'y' == device.driverVersion"), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
