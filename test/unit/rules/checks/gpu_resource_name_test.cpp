// gpu-resource-name: misspellings of nvidia.com/gpu that validate (or, in
// custom resources, go unchecked) and leave the pod Pending forever.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::gpuPod;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kNameOnly = onlyRules({"gpu-resource-name"});

std::vector<Finding> nameFindings(const std::string& name, const Policy& policy = kNameOnly) {
  return judgeYaml(gpuPod("limits:\n  \"" + name + "\": 1"), policy);
}

class MisspeltGpuResource : public ::testing::TestWithParam<const char*> {};

TEST_P(MisspeltGpuResource, IsReportedWithTheRightName) {
  const std::string name = GetParam();
  const auto f = nameFindings(name);
  ASSERT_EQ(f.size(), 1u) << name;
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[" + name + "]");
  EXPECT_EQ(f[0].value, name);
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"" + name + "\""));
  EXPECT_THAT(f[0].message(), HasSubstr("use nvidia.com/gpu"));
}

INSTANTIATE_TEST_SUITE_P(
    CommonMistakes, MisspeltGpuResource,
    ::testing::Values(
        // case variants: valid names nothing advertises (§2.1: nvidia.com/GPU → Pending)
        "nvidia.com/GPU", "nvidia.com/Gpu", "NVIDIA.com/gpu", "Nvidia.com/gpu",
        // plural and doubled vendor
        "nvidia.com/gpus", "nvidia.com/nvidia-gpu",
        // the wrong domain
        "nvidia/gpu", "nvidia/gpus", "nvidia.io/gpu", "nvida.com/gpu", "nvidia.co/gpu", "nvidia.org/gpu",
        // no domain at all (rejected for Pods; unchecked in custom resources)
        "gpu", "gpus", "nvidia.com.gpu", "nvidia-gpu",
        // the pre-device-plugin accelerator resource
        "alpha.kubernetes.io/nvidia-gpu"));

TEST(GpuResourceName, CaseVariantsSayNamesAreCaseSensitive) {
  const auto f = nameFindings("nvidia.com/GPU");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("case-sensitive"));
  EXPECT_THAT(f[0].message(), HasSubstr("stays Pending with \"Insufficient nvidia.com/GPU\""));
}

TEST(GpuResourceName, SharedCaseVariantPointsAtTheSharedName) {
  const auto f = nameFindings("nvidia.com/GPU.shared");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("use nvidia.com/gpu.shared"));
}

TEST(GpuResourceName, NamesWithoutADomainQuoteTheApiServer) {
  const auto f = nameFindings("gpu");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("must be a standard resource type or fully qualified"));
}

// --- names the API server rejects (validateContainerResourceName, §2.1) --------

TEST(GpuResourceName, ARequestsPrefixIsNotAnExtendedResourceName) {
  const auto f = nameFindings("requests.nvidia.com/gpu");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[requests.nvidia.com/gpu]");
  EXPECT_EQ(f[0].value, "requests.nvidia.com/gpu");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"requests.nvidia.com/gpu\": doesn't follow extended resource "
                                      "name standard (requests.<name> is how a ResourceQuota names a resource"));
  EXPECT_THAT(f[0].message(), HasSubstr("use nvidia.com/gpu"));
}

TEST(GpuResourceName, StrayWhitespaceQuotesIsQualifiedNameAndTheExtendedNameStandard) {
  const auto f = nameFindings("nvidia.com/gpu ");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].message(),
            "Invalid value: \"nvidia.com/gpu \": name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'); doesn't follow extended "
            "resource name standard (the name has leading or trailing whitespace): the API server rejects Pods and "
            "workload templates that name it, and inside a custom resource the pods its operator creates; use "
            "nvidia.com/gpu");
  const auto leading = nameFindings(" nvidia.com/gpu");
  ASSERT_EQ(leading.size(), 1u);
  EXPECT_THAT(leading[0].message(), HasSubstr("prefix part a lowercase RFC 1123 subdomain must consist of"));
}

TEST(GpuResourceName, AnUpperCaseDomainIsRejectedNotJustUnadvertised) {
  const auto f = nameFindings("NVIDIA.com/gpu");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(),
              HasSubstr("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                        "'example.com', regex used for validation is "
                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); doesn't follow "
                        "extended resource name standard (resource names are case-sensitive)"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("Insufficient")));
}

TEST(GpuResourceName, EveryGpuResourceOfThePolicyIsRecognisedBehindTheMistake) {
  const auto shared = nameFindings("requests.nvidia.com/gpu.shared");
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_THAT(shared[0].message(), HasSubstr("use nvidia.com/gpu.shared"));
  const auto mig = nameFindings("requests.nvidia.com/mig-1g.10gb");
  ASSERT_EQ(mig.size(), 1u);
  EXPECT_THAT(mig[0].message(), HasSubstr("use nvidia.com/mig-1g.10gb"));
  const auto both = nameFindings("requests.nvidia.com/GPU");
  ASSERT_EQ(both.size(), 1u);
  EXPECT_THAT(both[0].message(), HasSubstr("ResourceQuota names a resource, not a container; resource names are "
                                         "case-sensitive): "));
}

TEST(GpuResourceName, RejectedNamesOfOtherResourcesAreLeftToTheApiServer) {
  // Invalid too, but not a GPU of the policy nor a known misspelling of one.
  EXPECT_THAT(rulesHit(nameFindings("requests.amd.com/gpu")), IsEmpty());
  EXPECT_THAT(rulesHit(nameFindings("example.com/fpga ")), IsEmpty());
  // A MIG name with '+' is mig-resource-name's, which knows the profile grammar.
  EXPECT_THAT(rulesHit(nameFindings("nvidia.com/mig-1g.10gb+me")), IsEmpty());
  // A name the policy lists exactly is accepted as it is.
  Policy custom = kNameOnly;
  custom.gpuResources.push_back("requests.nvidia.com/gpu");
  EXPECT_THAT(rulesHit(nameFindings("requests.nvidia.com/gpu", custom)), IsEmpty());
}

class RealGpuResource : public ::testing::TestWithParam<const char*> {};

TEST_P(RealGpuResource, IsLeftAlone) {
  EXPECT_THAT(rulesHit(nameFindings(GetParam())), IsEmpty()) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(
    AdvertisedBySomeDevicePlugin, RealGpuResource,
    ::testing::Values("nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "amd.com/gpu",
                      "gpu.intel.com/i915", "nvidia.com/gpucores", "nvidia.com/gpumem", "nvidia.com/gpumem-percentage",
                      "example.com/gpu", "aws.amazon.com/neuron", "cpu", "memory"));

TEST(GpuResourceName, NamesListedExactlyInThePolicyAreAccepted) {
  Policy custom = kNameOnly;
  custom.gpuResources.push_back("nvidia/gpu");
  EXPECT_THAT(rulesHit(nameFindings("nvidia/gpu", custom)), IsEmpty());
  EXPECT_THAT(rulesHit(nameFindings("nvidia/gpu")), ElementsAre("gpu-resource-name"));
}

TEST(GpuResourceName, WorkloadTemplatesAndRequestsAreChecked) {
  const auto f = judgeYaml(gpuPod("limits:\n  nvidia.com/GPU: 1\nrequests:\n  nvidia.com/GPU: 1", "Deployment"),
                           kNameOnly);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].resources.limits[nvidia.com/GPU]");
  EXPECT_EQ(f[1].field(), "spec.template.spec.containers[0].resources.requests[nvidia.com/GPU]");
}

TEST(GpuResourceName, ALoneContainerOfACustomResourceMayUseItsOwnBareNames) {
  // A container-like object outside a pod spec: its `resources` may be the
  // custom resource's own format, so only domain misspellings are reported.
  const std::string lone = R"(apiVersion: example.com/v1
kind: Model
metadata: {name: m}
spec:
  resources:
    limits: {gpu: 1}
)";
  EXPECT_THAT(rulesHit(judgeYaml(lone, kNameOnly)), IsEmpty());
  const std::string misspelt = R"(apiVersion: example.com/v1
kind: Model
metadata: {name: m}
spec:
  resources:
    limits: {nvidia.com/GPU: 1}
)";
  EXPECT_THAT(rulesHit(judgeYaml(misspelt, kNameOnly)), ElementsAre("gpu-resource-name"));
}

}  // namespace
}  // namespace gpuguard
