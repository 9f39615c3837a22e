// dra-with-device-plugin: a pod gets its GPUs through DRA or through the
// device plugin, not both; container claims name a pod claim; and
// ResourceClaim / ResourceClaimTemplate requests have the shape of their
// resource.k8s.io version (kubernetes-gpu-semantics.md §11).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kDraOnly = onlyRules({"dra-with-device-plugin"});

// A Pod with the given resourceClaims entries and container resources (flow YAML).
std::string pod(const std::string& resourceClaims, const std::string& resources) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" +
         (resourceClaims.empty() ? std::string() : "  resourceClaims: " + resourceClaims + "\n") +
         "  containers:\n  - name: ctr\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources: " + resources +
         "\n";
}

// --- DRA and the device plugin in one pod --------------------------------------

TEST(DraWithDevicePlugin, GpusFromBothIsAWarningOnTheClaim) {
  const auto f = judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: single-gpu}]",
                               "{claims: [{name: gpu}], limits: {nvidia.com/gpu: 1}}"),
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "dra-with-device-plugin");
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.resourceClaims[0]");
  EXPECT_EQ(f[0].value, "gpu");
  EXPECT_THAT(f[0].message(), HasSubstr("through DRA (this claim) and through the device plugin "
                                      "(spec.containers[0].resources.limits[nvidia.com/gpu])"));
  EXPECT_THAT(f[0].message(), HasSubstr("ask for all the pod's GPUs one way"));
}

TEST(DraWithDevicePlugin, AGpuClaimIsRecognisedByItsTemplateOrClaimName) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: accel, resourceClaimTemplateName: two-gpus}]",
                                     "{claims: [{name: accel}], limits: {nvidia.com/gpu: 1}}"),
                                 kDraOnly)),
              ElementsAre("dra-with-device-plugin"));
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: accel, resourceClaimName: shared-GPU-claim}]",
                                     "{claims: [{name: accel}], limits: {nvidia.com/mig-1g.10gb: 1}}"),
                                 kDraOnly)),
              ElementsAre("dra-with-device-plugin"));
  // the alpha shape: source.resourceClaimTemplateName
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: accel, source: {resourceClaimTemplateName: inference-gpu}}]",
                                     "{claims: [{name: accel}], limits: {nvidia.com/gpu: 1}}"),
                                 kDraOnly)),
              ElementsAre("dra-with-device-plugin"));
}

TEST(DraWithDevicePlugin, NonGpuClaimsBesideDevicePluginGpusAreThePatternForGb200) {
  // IMEX channels of a ComputeDomain and RDMA NICs through DRA, GPUs through
  // the device plugin (NVIDIA k8s-dra-driver-gpu and GKE A4X examples).
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: compute-domain-channel, resourceClaimTemplateName: cd-channel}, "
                                     "{name: rdma, resourceClaimTemplateName: all-mrdma}]",
                                     "{claims: [{name: compute-domain-channel}, {name: rdma}], "
                                     "limits: {nvidia.com/gpu: 4}}"),
                                 kDraOnly)),
              IsEmpty());
}

TEST(DraWithDevicePlugin, GpusFromDraAloneAreFine) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: single-gpu}]", "{claims: [{name: gpu}]}"),
                                 kDraOnly)),
              IsEmpty());
}

TEST(DraWithDevicePlugin, GpusFromTheDevicePluginAloneAreFine) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("", "{limits: {nvidia.com/gpu: 1}}"), kDraOnly)), IsEmpty());
}

TEST(DraWithDevicePlugin, AZeroGpuLimitIsNoDevicePluginGpu) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: single-gpu}]",
                                     "{claims: [{name: gpu}], limits: {nvidia.com/gpu: 0}}"),
                                 kDraOnly)),
              IsEmpty());
}

TEST(DraWithDevicePlugin, CustomResourceTemplatesAreChecked) {
  const auto f = judgeYaml(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            resourceClaims: [{name: gpus, resourceClaimTemplateName: gpus}]
            containers:
            - name: c
              image: x
              resources: {claims: [{name: gpus}], limits: {nvidia.com/gpu: 8}}
)",
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.replicatedJobs[0].template.spec.template.spec.resourceClaims[0]");
}

// --- container claims name a pod claim ------------------------------------------

TEST(DraWithDevicePlugin, AContainerClaimMustBeDeclaredByThePod) {
  const auto f = judgeYaml(pod("[{name: gpus, resourceClaimTemplateName: t}]", "{claims: [{name: gpu}]}"), kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.claims[0]");
  EXPECT_EQ(f[0].value, "gpu");
  EXPECT_THAT(f[0].message(), HasSubstr("Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims: gpus"));
}

TEST(DraWithDevicePlugin, AContainerClaimWithoutPodClaimsSaysTheListIsEmpty) {
  const auto f = judgeYaml(pod("", "{claims: [{name: gpu}]}"), kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("must be one of the names in pod.spec.resourceClaims which is empty"));
}

TEST(DraWithDevicePlugin, AContainerClaimNeedsAName) {
  const auto f = judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: t}]", "{claims: [{request: r}]}"), kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.claims[0].name");
  EXPECT_THAT(f[0].message(), HasSubstr("Required value"));
}

TEST(DraWithDevicePlugin, ThePolicyCanMakeEveryFindingAWarning) {
  Policy p = kDraOnly;
  p.rules["dra-with-device-plugin"] = RuleSetting::Warning;
  const auto f = judgeYaml(pod("", "{claims: [{name: gpu}]}"), p);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
}

// --- ResourceClaimTemplate and ResourceClaim ------------------------------------

std::string claimTemplate(const std::string& apiVersion, const std::string& requests) {
  return "apiVersion: resource.k8s.io/" + apiVersion +
         "\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n    devices:\n      requests:\n" +
         requests;
}

std::vector<Finding> templateFindings(const std::string& apiVersion, const std::string& requests) {
  return judgeYaml(claimTemplate(apiVersion, requests), kDraOnly);
}

TEST(DraClaims, AV1RequestUnderExactlyIsFine) {
  EXPECT_THAT(rulesHit(templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: "
                                              "gpu.nvidia.com\n          allocationMode: ExactCount\n          count: 2\n")),
              IsEmpty());
  EXPECT_THAT(rulesHit(templateFindings("v1beta2", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n")),
              IsEmpty());
}

TEST(DraClaims, AV1RequestInTheV1beta1ShapeIsTheMigrationMistake) {
  const auto f = templateFindings("v1", "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n        count: 2\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0]");
  EXPECT_THAT(f[0].message(), HasSubstr("under exactly:"));
  EXPECT_THAT(f[0].message(), HasSubstr("v1beta1 shape"));
}

TEST(DraClaims, AV1RequestWithNeitherExactlyNorFirstAvailableIsRequired) {
  const auto f = templateFindings("v1", "      - name: gpu\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("Required value: exactly one of `exactly` or `firstAvailable` is required"));
}

TEST(DraClaims, AV1RequestWithBothExactlyAndFirstAvailableIsReported) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: a}\n"
                                        "        firstAvailable: [{name: x, deviceClassName: b}]\n");
  ASSERT_EQ(f.size(), 1u);
  // the API server's own words (kube-apiserver 1.37, test/e2e/cases/oracle/dra.yaml rc-both)
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, "
                                      "but multiple fields are set"));
}

TEST(DraClaims, AV1beta1RequestIsFlat) {
  EXPECT_THAT(rulesHit(templateFindings("v1beta1", "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n"
                                                   "        allocationMode: All\n")),
              IsEmpty());
  const auto f = templateFindings("v1beta1", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly");
  EXPECT_THAT(f[0].message(), HasSubstr("exists only in resource.k8s.io/v1 and v1beta2"));
}

TEST(DraClaims, ADeviceClassIsRequired) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {count: 1}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.deviceClassName");
  EXPECT_THAT(f[0].message(), HasSubstr("Required value"));
  const auto flat = templateFindings("v1beta1", "      - name: gpu\n        count: 1\n");
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].field(), "spec.spec.devices.requests[0].deviceClassName");
}

TEST(DraClaims, ANegativeCountIsAnErrorEvenThoughTheRuleWarns) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: -1}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.count");
  EXPECT_EQ(f[0].value, "-1");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: -1: must be greater than zero"));
}

TEST(DraClaims, ACountOfZeroIsDefaultedToOneAndWarned) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 0}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("defaults count 0 to 1"));
}

TEST(DraClaims, APositiveCountOrNoCountIsFine) {
  EXPECT_THAT(rulesHit(templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: g, count: 1}\n")),
              IsEmpty());
  EXPECT_THAT(rulesHit(templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: g}\n")), IsEmpty());
}

TEST(DraClaims, ACountWithAllocationModeAllIsReported) {
  const auto f = templateFindings(
      "v1", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 2}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("must not be specified when allocationMode is 'All'"));
  EXPECT_THAT(rulesHit(templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: g, "
                                              "allocationMode: All, count: 0}\n")),
              IsEmpty());
}

TEST(DraClaims, AnUnknownAllocationModeIsReported) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: g, allocationMode: Exact}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.allocationMode");
  EXPECT_THAT(f[0].message(), HasSubstr("Unsupported value: \"Exact\": supported values: \"All\", \"ExactCount\""));
}

TEST(DraClaims, ACountThatIsNotAWholeNumberIsReported) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {deviceClassName: g, count: \"2\"}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("whole number"));
}

TEST(DraClaims, FirstAvailableSubRequestsAreChecked) {
  const auto f = templateFindings("v1", "      - name: gpu\n        firstAvailable:\n"
                                        "        - {name: big, deviceClassName: gpu.nvidia.com, count: 2}\n"
                                        "        - {name: small, count: -2}\n");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].firstAvailable[1].deviceClassName");
  EXPECT_EQ(f[1].field(), "spec.spec.devices.requests[0].firstAvailable[1].count");
}

TEST(DraClaims, AResourceClaimHasItsRequestsOneLevelUp) {
  const auto f = judgeYaml(R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
)",
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.devices.requests[0]");
}

TEST(DraClaims, ListItemsAreChecked) {
  const auto f = judgeYaml(R"(apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: c}
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: g, count: -3}}
)",
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "items[0].spec.devices.requests[0].exactly.count");
}

TEST(DraClaims, OlderApiVersionsAndOtherGroupsAreNotChecked) {
  EXPECT_THAT(rulesHit(templateFindings("v1alpha2", "      - name: gpu\n")), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(R"(apiVersion: example.com/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec: {spec: {devices: {requests: [{name: gpu}]}}}
)",
                                 kDraOnly)),
              IsEmpty());
}

}  // namespace
}  // namespace gpuguard
