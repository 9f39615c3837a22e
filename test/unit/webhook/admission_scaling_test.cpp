// The cost of a review grows linearly with the shape of the request (issue
// 23: /mutate was quadratic in the number of edits, 24 s for a 4,000-container
// pod). Checked by ratio (test/unit/cpu_growth.h): 8N against N.
#include <gtest/gtest.h>

#include "test/unit/cpu_growth.h"
#include "test/unit/webhook/admission_test_support.h"
#include "rules/fix.h"
#include "webhook/admission.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using namespace admission_test;
using testing::growth;
using testing::kSuperLinearRatio;

constexpr std::size_t kSmall = 250;

// A Deployment with n GPU containers that ask in requests only: /mutate adds
// a limit to each, and a toleration: n + 1 edits.
json wideDeployment(std::size_t n, bool fixed) {
  json containers = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    json resources = {{"requests", {{"nvidia.com/gpu", "1"}}}};
    if (fixed) resources["limits"] = {{"nvidia.com/gpu", "1"}};
    containers.push_back({{"name", "c" + std::to_string(i)}, {"image", "nvcr.io/nvidia/cuda:12.4.1-base"},
                          {"resources", resources}});
  }
  json spec = {{"containers", containers}, {"nodeSelector", {{"nvidia.com/cuda.driver-version.major", "550"}}}};
  if (fixed) spec["tolerations"] = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "wide"}, {"namespace", "ml"}}},
          {"spec", {{"template", {{"spec", spec}}}}}};
}

TEST(AdmissionScaling, ToJsonPatchIsLinearInTheNumberOfEdits) {
  const double ratio = growth(kSmall, [](std::size_t n) {
    const json object = wideDeployment(n, false);
    std::vector<JsonEdit> edits;
    const FieldPath containers = FieldPath{}.field("spec").field("template").field("spec").field("containers");
    for (std::size_t i = 0; i < n; ++i) {
      edits.push_back(JsonEdit::setMember(containers.index(i).field("resources"), "limits", {{"nvidia.com/gpu", "1"}}));
    }
    const json patch = toJsonPatch(edits, object);
    ASSERT_EQ(patch.size(), n);
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the edits cost " << ratio << "x the CPU time";
}

TEST(AdmissionScaling, MutateOfACreateIsLinearInTheNumberOfContainers) {
  const double ratio = growth(kSmall, [](std::size_t n) {
    const Reply r = mutateRaw(reviewBody(wideDeployment(n, false)));
    ASSERT_EQ(r.result.patchOperations, n + 1);
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the containers cost " << ratio << "x the CPU time";
}

TEST(AdmissionScaling, MutateOfAnUpdateIsLinearInTheNumberOfContainers) {
  // Every limit is new (the old object had them), so each finding's identity
  // is looked up among the old object's.
  const double ratio = growth(kSmall, [](std::size_t n) {
    Request rq;
    rq.operation = "UPDATE";
    rq.oldObject = wideDeployment(n, true);
    json updated = wideDeployment(n, false);
    updated["spec"]["template"]["spec"]["tolerations"] = rq.oldObject["spec"]["template"]["spec"]["tolerations"];
    const Reply r = mutateRaw(reviewBody(updated, rq));
    ASSERT_EQ(r.result.patchOperations, n);
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the containers cost " << ratio << "x the CPU time";
}

TEST(AdmissionScaling, ValidateOfAnUpdateIsLinearInTheNumberOfFindings) {
  const double ratio = growth(kSmall, [](std::size_t n) {
    Request rq;
    rq.operation = "UPDATE";
    rq.oldObject = wideDeployment(n, false);
    const Reply r = reviewRaw(reviewBody(wideDeployment(n, false), rq));
    ASSERT_TRUE(r.allowed());  // every finding is pre-existing
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the findings cost " << ratio << "x the CPU time";
}

}  // namespace
}  // namespace gpuguard::webhook
