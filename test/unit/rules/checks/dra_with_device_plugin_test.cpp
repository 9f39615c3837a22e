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
using ::testing::StartsWith;
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
  // the alpha shape: source.resourceClaimTemplateName (also an error of its own, DraPodClaims)
  const auto alpha = judgeYaml(pod("[{name: accel, source: {resourceClaimTemplateName: inference-gpu}}]",
                                   "{claims: [{name: accel}], limits: {nvidia.com/gpu: 1}}"),
                               kDraOnly);
  ASSERT_EQ(alpha.size(), 2u);
  EXPECT_EQ(alpha[1].severity, Severity::Warning);
  EXPECT_THAT(alpha[1].message(), HasSubstr("through DRA (this claim) and through the device plugin"));
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

// The findings on a template's requests, without the note every beta object
// gets on its apiVersion (specified under "Versions a 1.37 API server serves").
std::vector<Finding> shapeFindings(const std::string& apiVersion, const std::string& requests) {
  std::vector<Finding> f = templateFindings(apiVersion, requests);
  std::erase_if(f, [](const Finding& x) { return x.field() == "apiVersion"; });
  return f;
}

TEST(DraClaims, AV1RequestUnderExactlyIsFine) {
  EXPECT_THAT(rulesHit(templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: "
                                              "gpu.nvidia.com\n          allocationMode: ExactCount\n          count: 2\n")),
              IsEmpty());
  EXPECT_THAT(rulesHit(shapeFindings("v1beta2", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n")),
              IsEmpty());
}

// --- a container's claims[].request ----------------------------------------------

// A template with one request named `request`, and a Pod whose container uses it with `containerRequest`.
std::string podUsingRequest(const std::string& request, const std::string& containerRequest) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu-tmpl}\nspec:\n  spec:\n"
         "    devices:\n      requests:\n      - name: " + request +
         "\n        exactly: {deviceClassName: gpu.nvidia.com}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
         "  resourceClaims: [{name: g, resourceClaimTemplateName: gpu-tmpl}]\n"
         "  containers:\n  - name: c\n    image: x\n    resources:\n      claims: [{name: g, request: " +
         containerRequest + "}]\n";
}

TEST(DraPodClaims, AContainerRequestNamingNoRequestOfTheClaimSeesNoGpu) {
  const auto f = testing::only(testing::judgeInput(podUsingRequest("gpu", "gpus"), kDraOnly), "dra-with-device-plugin");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.claims[0].request");
  EXPECT_THAT(f[0].message(), HasSubstr("request \"gpus\" names no request of ResourceClaimTemplate gpu-tmpl "
                                        "(its requests: gpu)"));
  EXPECT_THAT(f[0].message(), HasSubstr("write request: gpu"));
}

TEST(DraPodClaims, AContainerRequestOfTheClaimOrWithoutTheTemplateIsNotJudged) {
  EXPECT_THAT(testing::only(testing::judgeInput(podUsingRequest("gpu", "gpu"), kDraOnly), "dra-with-device-plugin"),
              IsEmpty());
  // Without the template in the input its requests are unknown.
  EXPECT_THAT(judgeYaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                        "  resourceClaims: [{name: g, resourceClaimTemplateName: elsewhere}]\n"
                        "  containers:\n  - {name: c, image: x, resources: {claims: [{name: g, request: gpus}]}}\n",
                        kDraOnly),
              IsEmpty());
}

TEST(DraClaims, AdminAccessNamesTheNamespaceLabelItNeeds) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
                                        "          adminAccess: true\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.adminAccess");
  EXPECT_THAT(f[0].message(), HasSubstr("resource.kubernetes.io/admin-access: \"true\""));
  EXPECT_THAT(templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
                                     "          adminAccess: false\n"),
              IsEmpty());
}

// adminAccess and the namespace label (pkg/registry/resource/utils.go AuthorizedForAdmin, v1.37.2).

// A Namespace with these labels (flow YAML, "" for none) and a claim of `kind` in it asking for admin access.
std::string adminClaimIn(const std::string& nsLabels, const std::string& kind = "ResourceClaimTemplate") {
  const std::string ns = nsLabels.empty() ? std::string()
                                          : "apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring, labels: " +
                                                nsLabels + "}\n---\n";
  const std::string request = "{devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, "
                              "adminAccess: true}}]}}";
  return ns + "apiVersion: resource.k8s.io/v1\nkind: " + kind + "\nmetadata: {name: watch, namespace: monitoring}\n" +
         (kind == "ResourceClaim" ? "spec: " + request : "spec: {spec: " + request + "}") + "\n";
}

std::vector<Finding> adminFindings(const std::string& yaml) {
  return testing::only(testing::judgeInput(yaml, kDraOnly), "dra-with-device-plugin");
}

TEST(DraClaims, AdminAccessInANamespaceOfTheInputWithoutTheLabelIsRefused) {
  const auto f = adminFindings(adminClaimIn("{team: obs}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.adminAccess");
  // The API server's words, then what to do.
  EXPECT_THAT(f[0].message(), HasSubstr("Forbidden: admin access to devices requires the "
                                        "`resource.kubernetes.io/admin-access: true` label on the containing namespace; "
                                        "namespace monitoring (in the input) has no such label"));
  EXPECT_THAT(f[0].message(), HasSubstr("kubectl label namespace monitoring resource.kubernetes.io/admin-access=true"));
  const auto claim = adminFindings(adminClaimIn("{team: obs}", "ResourceClaim"));
  ASSERT_EQ(claim.size(), 1u);
  EXPECT_EQ(claim[0].field(), "spec.devices.requests[0].exactly.adminAccess");
}

TEST(DraClaims, OnlyTheLabelValueTrueAllowsAdminAccess) {
  EXPECT_THAT(adminFindings(adminClaimIn("{resource.kubernetes.io/admin-access: \"true\"}")), IsEmpty());
  for (const char* other : {"\"True\"", "\"false\"", "\"\"", "\"yes\""}) {
    const auto f = adminFindings(adminClaimIn(std::string("{resource.kubernetes.io/admin-access: ") + other + "}"));
    ASSERT_EQ(f.size(), 1u) << other;
    EXPECT_EQ(f[0].severity, Severity::Error);
    EXPECT_THAT(f[0].message(), HasSubstr(std::string("has resource.kubernetes.io/admin-access: ") + other +
                                          ", not \"true\""));
  }
}

TEST(DraClaims, AdminAccessInANamespaceNobodyDescribesStaysAReminder) {
  // No Namespace in the input, or only another one: the label is unknown.
  for (const std::string& yaml :
       {adminClaimIn(""), "apiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n---\n" + adminClaimIn("")}) {
    const auto f = adminFindings(yaml);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].severity, Severity::Warning);
    EXPECT_THAT(f[0].message(), HasSubstr("kubectl label namespace monitoring resource.kubernetes.io/admin-access=true"));
  }
}

TEST(DraClaims, TheClustersNamespaceDecidesAsTheInputsDoes) {
  // What the webhook knows: the cluster's Namespaces (rules/cluster_facts.h).
  const auto unlabelled = testing::clusterOf("apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring}\n");
  const auto f = testing::only(testing::judgeWithCluster(adminClaimIn(""), *unlabelled, kDraOnly),
                               "dra-with-device-plugin");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("namespace monitoring (in the cluster) has no such label"));
  const auto labelled = testing::clusterOf("apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring, labels: "
                                           "{resource.kubernetes.io/admin-access: \"true\"}}\n");
  EXPECT_THAT(testing::judgeWithCluster(adminClaimIn(""), *labelled, kDraOnly), IsEmpty());
  // The input's Namespace is what will be applied: it comes first.
  EXPECT_THAT(testing::only(testing::judgeWithCluster(adminClaimIn("{team: obs}"), *labelled, kDraOnly),
                            "dra-with-device-plugin"),
              ::testing::SizeIs(1));
}

TEST(DraClaims, AListItemIsJudgedInItsOwnNamespace) {
  const std::string list = "apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring}\n---\n"
                           "apiVersion: v1\nkind: List\nitems:\n- apiVersion: resource.k8s.io/v1\n"
                           "  kind: ResourceClaim\n  metadata: {name: c, namespace: monitoring}\n"
                           "  spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: g, adminAccess: true}}]}}\n";
  const auto f = adminFindings(list);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "items[0].spec.devices.requests[0].exactly.adminAccess");
}

// The NVIDIA DRA driver's productName is the NVML name, with spaces (reference §15.2).
TEST(DraClaims, AProductNameInGfdsDashedFormMatchesNoDevice) {
  const std::string selector =
      "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n          selectors:\n"
      "          - cel: {expression: \"device.attributes['gpu.nvidia.com'].productName == 'NAME'\"}\n";
  std::string dashed = selector;
  dashed.replace(dashed.find("NAME"), 4, "NVIDIA-H100-80GB-HBM3");
  const auto f = templateFindings("v1", dashed);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression");
  EXPECT_THAT(f[0].message(), HasSubstr("'NVIDIA-H100-80GB-HBM3', GPU Feature Discovery's label form"));
  // The NVML name, dashes inside a word included, is fine.
  std::string nvml = selector;
  nvml.replace(nvml.find("NAME"), 4, "NVIDIA A100-SXM4-80GB");
  EXPECT_THAT(templateFindings("v1", nvml), IsEmpty());
}

// validateDeviceToleration (reference §15.2; the Gt wording is v1.37.2's, docs/e2e-oracle.md).
TEST(DraClaims, ADeviceTolerationWithGtIsAnUnsupportedOperator) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
                                        "          tolerations: [{key: example.com/temp, operator: Gt, value: \"80\", "
                                        "effect: NoSchedule}]\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.tolerations[0].operator");
  EXPECT_THAT(f[0].message(), StartsWith("Unsupported value: \"Gt\": supported values: \"Equal\", \"Exists\""));
}

TEST(DraClaims, ADeviceTolerationHasNoPreferNoSchedule) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
                                        "          tolerations: [{key: example.com/unhealthy, operator: Exists, "
                                        "effect: PreferNoSchedule}]\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.tolerations[0].effect");
  EXPECT_THAT(f[0].message(), StartsWith("Unsupported value: \"PreferNoSchedule\""));
  // The effects a device toleration has are fine.
  EXPECT_THAT(templateFindings("v1", "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
                                     "          tolerations: [{key: k, operator: Exists, effect: NoExecute}, "
                                     "{key: k, operator: Equal, value: v, effect: NoSchedule}, {operator: Exists}]\n"),
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
  EXPECT_THAT(rulesHit(shapeFindings("v1beta1", "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n"
                                                "        allocationMode: All\n")),
              IsEmpty());
  const auto f = shapeFindings("v1beta1", "      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly");
  EXPECT_THAT(f[0].message(), HasSubstr("exists only in resource.k8s.io/v1 and v1beta2"));
}

TEST(DraClaims, ADeviceClassIsRequired) {
  const auto f = templateFindings("v1", "      - name: gpu\n        exactly: {count: 1}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].exactly.deviceClassName");
  EXPECT_THAT(f[0].message(), HasSubstr("Required value"));
  const auto flat = shapeFindings("v1beta1", "      - name: gpu\n        count: 1\n");
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

// --- Versions a 1.37 API server serves (reference §15.2) ---------------------------

// A DRA object of this kind and version, well formed for its version.
std::string draObject(const std::string& kind, const std::string& version) {
  const std::string head = "apiVersion: resource.k8s.io/" + version + "\nkind: " + kind + "\nmetadata: {name: o}\n";
  const std::string request = version == "v1beta1" || version == "v1alpha3"
                                  ? "{name: gpu, deviceClassName: gpu.nvidia.com}"
                                  : "{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}";
  if (kind == "DeviceClass") return head + "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]}\n";
  if (kind == "ResourceClaim") return head + "spec: {devices: {requests: [" + request + "]}}\n";
  return head + "spec: {spec: {devices: {requests: [" + request + "]}}}\n";
}

TEST(DraServedVersions, BetaDraObjectsAreNotServedByADefault137ApiServer) {
  for (const std::string kind : {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}) {
    for (const std::string version : {"v1beta1", "v1beta2"}) {
      const auto f = judgeYaml(draObject(kind, version), kDraOnly);
      ASSERT_EQ(f.size(), 1u) << kind << " " << version;
      EXPECT_EQ(f[0].severity, Severity::Warning);
      EXPECT_EQ(f[0].field(), "apiVersion");
      EXPECT_EQ(f[0].value, "resource.k8s.io/" + version);
      EXPECT_THAT(f[0].message(), HasSubstr("resource.k8s.io/" + version +
                                            " is not served by a default Kubernetes 1.37 API server (needs "
                                            "--runtime-config=resource.k8s.io/" + version + "=true)"));
      EXPECT_THAT(f[0].message(), HasSubstr("kubectl answers no matches for kind \"" + kind +
                                            "\" in version \"resource.k8s.io/" + version + "\""));
      EXPECT_THAT(f[0].message(), HasSubstr("; use resource.k8s.io/v1"));
    }
  }
}

TEST(DraServedVersions, TheAdviceSaysWhatChangesInV1) {
  EXPECT_THAT(judgeYaml(draObject("ResourceClaimTemplate", "v1beta1"), kDraOnly)[0].message(),
              HasSubstr("use resource.k8s.io/v1 (requests under exactly:)"));
  EXPECT_THAT(judgeYaml(draObject("ResourceClaim", "v1beta2"), kDraOnly)[0].message(),
              HasSubstr("use resource.k8s.io/v1 (the same shape as v1beta2)"));
  EXPECT_THAT(judgeYaml(draObject("DeviceClass", "v1beta1"), kDraOnly)[0].message(),
              HasSubstr("use resource.k8s.io/v1 (the same selectors and config)"));
}

TEST(DraServedVersions, V1alpha3HoldsNoneOfTheseKinds) {
  const auto f = judgeYaml(draObject("ResourceClaim", "v1alpha3"), kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "apiVersion");
  EXPECT_THAT(f[0].message(), HasSubstr("resource.k8s.io/v1alpha3 holds no ResourceClaim in Kubernetes 1.37"));
}

TEST(DraServedVersions, V1ObjectsOtherKindsAndGroupsAreServed) {
  for (const std::string kind : {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}) {
    EXPECT_THAT(judgeYaml(draObject(kind, "v1"), kDraOnly), IsEmpty()) << kind;
  }
  // Drivers write ResourceSlices, and DeviceTaintRule is not a claim: not this rule's.
  EXPECT_THAT(judgeYaml("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n", kDraOnly),
              IsEmpty());
  EXPECT_THAT(judgeYaml("apiVersion: example.com/v1beta1\nkind: DeviceClass\nmetadata: {name: d}\n", kDraOnly),
              IsEmpty());
}

TEST(DraServedVersions, ListItemsAreReportedWhereTheyAre) {
  const auto f = judgeYaml("apiVersion: v1\nkind: List\nitems:\n- apiVersion: resource.k8s.io/v1beta1\n"
                           "  kind: DeviceClass\n  metadata: {name: d}\n",
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "items[0].apiVersion");
}

// --- KEP-5004: extended resources a DRA driver serves ------------------------------

const std::string kBothWays = pod("[{name: gpu, resourceClaimTemplateName: single-gpu}]",
                                  "{claims: [{name: gpu}], limits: {nvidia.com/gpu: 1}}");

TEST(DraExtendedResources, UnknownBackendTheWarningSaysHowToDeclareDra) {
  const auto f = judgeYaml(kBothWays, kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("stays Pending, unless a DRA driver serves nvidia.com/gpu too"));
  EXPECT_THAT(f[0].message(), HasSubstr("draExtendedResources: [nvidia.com/gpu] in the policy"));
}

TEST(DraExtendedResources, ThePolicySaysNvidiaGpuIsServedByDra) {
  // Both the claim and nvidia.com/gpu come from the DRA driver: one backend, the pod schedules.
  Policy policy = kDraOnly;
  policy.draExtendedResources = {"nvidia.com/gpu"};
  EXPECT_THAT(rulesHit(judgeYaml(kBothWays, policy)), IsEmpty());
}

TEST(DraExtendedResources, ADeviceClassInTheSameInputSaysSoToo) {
  const std::string deviceClass =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n"
      "  selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]\n"
      "  extendedResourceName: nvidia.com/gpu\n";
  EXPECT_THAT(rulesHit(testing::judgeInput(deviceClass + "---\n" + kBothWays, kDraOnly)), IsEmpty());
  // A class that serves another name changes nothing for nvidia.com/gpu.
  const std::string migClass =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: mig-1g.12gb}\nspec:\n"
      "  extendedResourceName: nvidia.com/mig-1g.12gb\n";
  EXPECT_THAT(rulesHit(testing::judgeInput(migClass + "---\n" + kBothWays, kDraOnly)),
              ElementsAre("dra-with-device-plugin"));
}

TEST(DraExtendedResources, TheImplicitDeviceClassNameBesideTheDevicePluginIsBothWays) {
  const auto f = judgeYaml(pod("", "{limits: {nvidia.com/gpu: 1, deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1}}"),
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[deviceclass.resource.kubernetes.io/gpu.nvidia.com]");
  EXPECT_THAT(f[0].message(), HasSubstr("through DRA (this resource) and through the device plugin"));
}

TEST(DraExtendedResources, ATemplateOfTheInputTellsAGpuClaimFromAnotherDevice) {
  const std::string nicTemplate =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: single-gpu}\nspec:\n"
      "  spec: {devices: {requests: [{name: nic, exactly: {deviceClassName: rdma.example.com}}]}}\n";
  EXPECT_THAT(rulesHit(testing::judgeInput(nicTemplate + "---\n" + kBothWays, kDraOnly)), IsEmpty());
}

// --- what the API server rejects (kube-apiserver v1.37.2, test/e2e/cases/oracle/dra.yaml) -----

TEST(DraPodClaims, APodClaimNamesExactlyOneSource) {
  auto f = judgeYaml(pod("[{name: gpu, resourceClaimName: rc, resourceClaimTemplateName: rct}]", "{claims: [{name: gpu}]}"),
                     kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.resourceClaims[0]");
  EXPECT_THAT(f[0].message(), StartsWith("Invalid value: {\"Name\":\"gpu\",\"ResourceClaimName\":\"rc\","
                                       "\"ResourceClaimTemplateName\":\"rct\"}: at most one of `resourceClaimName` or "
                                       "`resourceClaimTemplateName` may be specified"));
  f = judgeYaml(pod("[{name: gpu}]", "{claims: [{name: gpu}]}"), kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), StartsWith("Invalid value: {\"Name\":\"gpu\",\"ResourceClaimName\":null,"
                                       "\"ResourceClaimTemplateName\":null}: must specify one of: "
                                       "`resourceClaimName`, `resourceClaimTemplateName`"));
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: gpu, resourceClaimName: rc}]", "{claims: [{name: gpu}]}"), kDraOnly)),
              IsEmpty());
}

TEST(DraPodClaims, TheAlphaSourceShapeIsNamedAsTheCause) {
  const auto f = judgeYaml(pod("[{name: gpu, source: {resourceClaimTemplateName: t}}]", "{claims: [{name: gpu}]}"),
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("must specify one of"));
  EXPECT_THAT(f[0].message(), HasSubstr("source: is the shape of Kubernetes 1.26-1.27"));
}

TEST(DraPodClaims, AContainerListsAClaimOnce) {
  const auto f = judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: t}]", "{claims: [{name: gpu}, {name: gpu}]}"),
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.claims[1]");
  EXPECT_THAT(f[0].message(), StartsWith("Duplicate value: \"gpu\""));
  // Two requests of one claim are two entries, not a duplicate; the same request twice is.
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: t}]",
                                     "{claims: [{name: gpu, request: a}, {name: gpu, request: b}]}"),
                                 kDraOnly)),
              IsEmpty());
  // kube-apiserver v1.37.2: a request twice is "gpu/a"; the whole claim beside its requests is "gpu".
  const auto f2 = judgeYaml(pod("[{name: gpu, resourceClaimTemplateName: t}]",
                                "{claims: [{name: gpu, request: a}, {name: gpu, request: a}, {name: gpu}, "
                                "{name: gpu, request: b}]}"),
                            kDraOnly);
  ASSERT_EQ(f2.size(), 3u);
  EXPECT_EQ(f2[0].field(), "spec.containers[0].resources.claims[1]");
  EXPECT_THAT(f2[0].message(), StartsWith("Duplicate value: \"gpu/a\""));
  EXPECT_EQ(f2[1].field(), "spec.containers[0].resources.claims[2]");
  EXPECT_THAT(f2[1].message(), StartsWith("Duplicate value: \"gpu\""));
  EXPECT_EQ(f2[2].field(), "spec.containers[0].resources.claims[3]");
  EXPECT_THAT(f2[2].message(), StartsWith("Duplicate value: \"gpu\""));
}

TEST(DraPodClaims, AContainerRequestIsATopLevelRequestNeverASubRequest) {
  // kube-apiserver v1.37.2 rejects a <request>/<sub-request> reference (redteam31 A16).
  const auto f = judgeYaml(pod("[{name: g, resourceClaimTemplateName: t}]", "{claims: [{name: g, request: acc/big}]}"),
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.claims[0].request");
  EXPECT_THAT(f[0].message(), StartsWith("Invalid value: \"acc/big\": a lowercase RFC 1123 label must consist of"));
  EXPECT_THAT(f[0].message(), HasSubstr("name the request \"acc\""));
  EXPECT_THAT(judgeYaml(pod("[{name: g, resourceClaimTemplateName: t}]", "{claims: [{name: g, request: acc}]}"),
                        kDraOnly),
              IsEmpty());
}

TEST(DraClaims, ATemplatesDevicesSitUnderSpecSpec) {
  const auto f = judgeYaml(R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
)",
                           kDraOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.devices");
  EXPECT_THAT(f[0].message(), StartsWith("strict decoding error: unknown field \"spec.devices\""));
  EXPECT_THAT(f[0].message(), HasSubstr("move devices under spec.spec"));
}

TEST(DraClaims, ASubRequestNeedsAName) {
  const auto f = templateFindings("v1", "      - name: gpu\n        firstAvailable:\n"
                                        "        - {deviceClassName: gpu.nvidia.com}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].firstAvailable[0].name");
  EXPECT_THAT(f[0].message(), StartsWith("Invalid value: \"\": a lowercase RFC 1123 label must consist of lower case "
                                       "alphanumeric characters or '-', and must start and end with an alphanumeric "
                                       "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                                       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
  EXPECT_THAT(rulesHit(templateFindings("v1", "      - name: gpu\n        firstAvailable:\n"
                                              "        - {name: big, deviceClassName: gpu.nvidia.com}\n")),
              IsEmpty());
}

TEST(DraClaims, ASubRequestHasNoAdminAccess) {
  const auto f = templateFindings("v1", "      - name: gpu\n        firstAvailable:\n"
                                        "        - {name: big, deviceClassName: gpu.nvidia.com, adminAccess: true}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].firstAvailable[0].adminAccess");
  EXPECT_THAT(f[0].message(), StartsWith("strict decoding error: unknown field "
                                       "\"spec.spec.devices.requests[0].firstAvailable[0].adminAccess\""));
}

TEST(DraClaims, ARequestWithFirstAvailableNamesNoClassOfItsOwn) {
  const auto f = templateFindings("v1", "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n"
                                        "        firstAvailable: [{name: big, deviceClassName: gpu.nvidia.com}]\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.spec.devices.requests[0].deviceClassName");
  EXPECT_THAT(f[0].message(), StartsWith("strict decoding error: unknown field "
                                       "\"spec.spec.devices.requests[0].deviceClassName\""));
}

}  // namespace
}  // namespace gpuguard
