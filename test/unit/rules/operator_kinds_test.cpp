// Kinds whose controllers build the pods from fields of their own
// (kubernetes-gpu-semantics.md §14.14, §14.15): NVIDIA Dynamo's
// DynamoGraphDeployment v1alpha1 and Spark's SparkApplication carry the GPU
// count outside any ResourceRequirements, and Knative Services take pod
// scheduling fields only behind feature flags.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/pod_specs.h"
#include "rules/resources.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeFile;
using testing::judgeYaml;
using testing::only;
using testing::onlyRules;
using testing::rulesHit;

// --- DynamoGraphDeployment (nvidia.com/v1alpha1) --------------------------------

std::string dynamo(const std::string& service) {
  return "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\nspec:\n  services:\n"
         "    Frontend:\n      componentType: frontend\n      extraPodSpec:\n        mainContainer:\n"
         "          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0\n"
         "    VllmWorker:\n" + service;
}

const std::string kWorker =
    "      componentType: worker\n      resources:\n        limits:\n          gpu: \"2\"\n"
    "      extraPodSpec:\n        mainContainer:\n          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0\n"
    "          command: [python3, -m, dynamo.vllm]\n"
    "          args: [--model, Qwen/Qwen3-0.6B, --tensor-parallel-size, \"2\"]\n";

TEST(DynamoGraphDeployment, EachServiceIsOnePodWhoseGpuLimitIsNvidiaComGpu) {
  const auto graph = nlohmann::json::parse(R"({"apiVersion":"nvidia.com/v1alpha1",
    "kind":"DynamoGraphDeployment","spec":{"services":{"W":{"resources":{"limits":{"gpu":"2"},
    "requests":{"custom":{"example.com/nic":"1"}}},"extraPodSpec":{"mainContainer":{"image":"x"},
    "tolerations":[{"operator":"Exists"}]}}}}})");
  const auto sites = findPodSites(graph);  // it points into `graph`
  ASSERT_EQ(sites.size(), 1u);  // not the service as a container, nor extraPodSpec as another pod
  ASSERT_EQ(sites[0].containers.size(), 1u);
  const ContainerResources& r = resourcesOf(sites[0].containers[0], false);
  ASSERT_NE(r.limit("nvidia.com/gpu"), nullptr);
  EXPECT_EQ(r.limit("nvidia.com/gpu")->path.apiPath(), "spec.services.W.resources.limits.gpu");
  ASSERT_NE(r.request("example.com/nic"), nullptr);
  EXPECT_EQ(r.request("example.com/nic")->path.apiPath(), "spec.services.W.resources.requests.custom[example.com/nic]");
  EXPECT_EQ(sites[0].containers[0].image(), "x");
  EXPECT_EQ(sites[0].tolerations.path.apiPath(), "spec.services.W.extraPodSpec.tolerations");
  EXPECT_EQ(sites[0].nodeSelector.path.apiPath(), "spec.services.W.extraPodSpec.nodeSelector");
}

TEST(DynamoGraphDeployment, AServiceWithGpusNeedsTheTolerationInExtraPodSpec) {
  const auto f = only(judgeYaml(dynamo(kWorker)), "gpu-missing-toleration");
  ASSERT_EQ(f.size(), 1u);  // the frontend asks for no GPU
  EXPECT_EQ(f[0].field(), "spec.services.VllmWorker.extraPodSpec.tolerations");
}

TEST(DynamoGraphDeployment, TheGpuCountIsJudgedAsAQuantity) {
  std::string half = kWorker;
  half.replace(half.find("gpu: \"2\""), 8, "gpu: \"0.5\"");
  const auto f = only(judgeYaml(dynamo(half)), "gpu-fractional");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.services.VllmWorker.resources.limits.gpu");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"0.5\""));
}

TEST(DynamoGraphDeployment, TheEnginesParallelismMustMatchTheServicesGpus) {
  const Policy tp = onlyRules({"tensor-parallel-gpu-count"});
  EXPECT_THAT(judgeYaml(dynamo(kWorker), tp), IsEmpty());
  std::string one = kWorker;
  one.replace(one.find("gpu: \"2\""), 8, "gpu: \"1\"");
  const auto f = judgeYaml(dynamo(one), tp);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.services.VllmWorker.extraPodSpec.mainContainer.args[2]");
}

TEST(DynamoGraphDeployment, MultinodeServicesSpreadOneReplicaOverNodeCountPods) {
  const std::string multinode =
      "      multinode: {nodeCount: 2}\n      resources:\n        limits:\n          gpu: \"8\"\n"
      "      extraPodSpec:\n        mainContainer:\n          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0\n"
      "          command: [python3, -m, dynamo.vllm, --model, m, --tensor-parallel-size, \"16\"]\n";
  EXPECT_THAT(judgeYaml(dynamo(multinode), onlyRules({"tensor-parallel-gpu-count"})), IsEmpty());
}

TEST(DynamoGraphDeployment, V1beta1ComponentsArePlainPodTemplates) {
  const std::string yaml =
      "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\nspec:\n  components:\n"
      "  - name: W\n    podTemplate:\n      spec:\n        containers:\n        - name: main\n          image: x\n"
      "          resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
  const auto f = only(judgeYaml(yaml), "gpu-missing-toleration");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.components[0].podTemplate.spec.tolerations");
}

// --- SparkApplication (sparkoperator.k8s.io/v1beta2) ------------------------------

std::string spark(const std::string& executor, const std::string& kind = "SparkApplication") {
  const bool scheduled = kind == "ScheduledSparkApplication";
  const std::string pad = scheduled ? "    " : "  ";
  std::string body = pad + "driver: {cores: 1}\n" + pad + "executor:\n";
  for (std::size_t start = 0; start < executor.size();) {
    const std::size_t nl = executor.find('\n', start);
    body += pad + "  " + executor.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
  return "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: " + kind + "\nmetadata: {name: s}\nspec:\n" +
         (scheduled ? "  schedule: \"@daily\"\n  template:\n    type: Python\n" : "  type: Python\n") + body;
}

TEST(SparkApplication, TheExecutorsGpuBecomesALimitOfThatResource) {
  const auto f = only(judgeYaml(spark("instances: 2\ngpu: {name: nvidia.com/gpu, quantity: 1}\n")),
                      "gpu-missing-toleration");
  ASSERT_EQ(f.size(), 1u);  // the driver asks for none
  EXPECT_EQ(f[0].field(), "spec.executor.tolerations");
}

TEST(SparkApplication, ATolerationAndPinOnTheExecutorSatisfyTheRules) {
  const auto f = judgeYaml(spark("gpu: {name: nvidia.com/gpu, quantity: 1}\n"
                                 "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
                                 "nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"));
  EXPECT_THAT(rulesHit(f), IsEmpty());
}

TEST(SparkApplication, TheApplicationsNodeSelectorAppliesToItsPods) {
  const std::string yaml = spark("gpu: {name: nvidia.com/gpu, quantity: 1}\n"
                                 "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n") +
                           "  nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n";
  EXPECT_THAT(only(judgeYaml(yaml), "gpu-missing-driver-pin"), IsEmpty());
}

TEST(SparkApplication, TheGpuQuantityIsJudgedWhereItIsWritten) {
  const auto f = only(judgeYaml(spark("gpu: {name: nvidia.com/gpu, quantity: 16}\n")), "gpu-count-exceeds-node");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.executor.gpu.quantity");
}

TEST(SparkApplication, AScheduledApplicationsTemplateIsRead) {
  const auto f = only(judgeYaml(spark("gpu: {name: nvidia.com/gpu, quantity: 1}\n", "ScheduledSparkApplication")),
                      "gpu-missing-toleration");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.executor.tolerations");
}

TEST(SparkApplication, AGpuWithoutAResourceNameIsNotGuessed) {
  EXPECT_THAT(rulesHit(judgeYaml(spark("gpu: {quantity: 1}\n"))), IsEmpty());
}

TEST(SparkApplication, OtherKindsWithDriverAndExecutorFieldsAreNotSpark) {
  const std::string yaml =
      "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n"
      "  executor: {gpu: {name: nvidia.com/gpu, quantity: 1}}\n";
  EXPECT_THAT(rulesHit(judgeYaml(yaml)), IsEmpty());
}

// --- Knative Serving ------------------------------------------------------------

const std::string kKnativeService =
    "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
    "      containers:\n      - image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
    "        resources: {limits: {nvidia.com/gpu: \"1\"}}\n";

TEST(KnativeService, MissingSchedulingFieldsNameTheFeatureFlags) {
  const auto f = judgeYaml(kKnativeService);
  const auto tol = only(f, "gpu-missing-toleration");
  ASSERT_EQ(tol.size(), 1u);
  EXPECT_EQ(tol[0].field(), "spec.template.spec.tolerations");
  EXPECT_THAT(tol[0].message(), HasSubstr("kubernetes.podspec-tolerations"));
  EXPECT_THAT(tol[0].message(), HasSubstr("ConfigMap config-features (namespace knative-serving)"));
  const auto pin = only(f, "gpu-missing-driver-pin");
  ASSERT_EQ(pin.size(), 1u);
  EXPECT_THAT(pin[0].message(), HasSubstr("kubernetes.podspec-nodeselector"));
}

TEST(KnativeService, OtherKindsGetNoKnativeNote) {
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
      "  - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  for (const Finding& f : judgeYaml(pod)) EXPECT_THAT(f.message(), ::testing::Not(HasSubstr("Knative"))) << f.rule;
}

// --- NIMService (apps.nvidia.com/v1alpha1): GPUs through DRA -----------------

// Red team 33 C6 (NVIDIA/k8s-nim-operator config/samples/nim/serving/advanced/dra):
// the operator makes spec.draResources the pod's resourceClaims, so a NIMService
// asking a GPU that way needs what a Deployment with that claim needs.
const std::string kGpuClaimTemplate =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpu-template}\nspec:\n"
    "  spec:\n    devices:\n      requests:\n      - name: gpu\n"
    "        exactly: {allocationMode: ExactCount, count: 1, deviceClassName: gpu.nvidia.com}\n---\n";

std::string nimService(const std::string& draResources) {
  return "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: llm}\nspec:\n"
         "  image: {repository: nvcr.io/nim/meta/llama-3.2-1b-instruct, tag: \"1.12.0\"}\n  replicas: 1\n"
         "  draResources:\n" + draResources;
}

const Policy kPlacementRules = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"});

TEST(NimService, ADraResourceNamingAGpuClaimTemplateIsJudgedLikeThePodsResourceClaims) {
  const auto nim = judgeFile(kGpuClaimTemplate + nimService("  - resourceClaimTemplateName: gpu-template\n"),
                             kPlacementRules);
  EXPECT_THAT(rulesHit(nim), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  const std::string deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
      "      resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-template}]\n"
      "      containers:\n      - name: c\n        image: nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0\n"
      "        resources: {claims: [{name: gpu}]}\n";
  const auto same = judgeFile(kGpuClaimTemplate + deployment, kPlacementRules);
  ASSERT_EQ(nim.size(), same.size());
  for (std::size_t i = 0; i < nim.size(); ++i) EXPECT_EQ(nim[i].severity, same[i].severity) << nim[i].rule;
  EXPECT_EQ(nim[0].field(), "spec.tolerations");
}

TEST(NimService, AClaimCreationSpecAsksItsDevicesOfGpuNvidiaComByDefault) {
  const std::string created = "  - claimCreationSpec:\n      devices:\n      - name: gpu\n";
  EXPECT_THAT(rulesHit(judgeYaml(nimService(created), onlyRules({"gpu-missing-toleration"}))),
              ElementsAre("gpu-missing-toleration"));
  const std::string otherVendor =
      "  - claimCreationSpec:\n      devices:\n      - {name: gpu, deviceClassName: gpu.amd.com}\n";
  EXPECT_THAT(judgeYaml(nimService(otherVendor), kPlacementRules), IsEmpty());
}

TEST(NimService, WithItsGpuTolerationADraNimServiceIsFine) {
  const std::string tolerated = nimService("  - resourceClaimTemplateName: gpu-template\n") +
                                "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n";
  EXPECT_THAT(judgeFile(kGpuClaimTemplate + tolerated, onlyRules({"gpu-missing-toleration"})), IsEmpty());
}

// --- LLMInferenceService (serving.kserve.io): KServe's Managed DRA ----------------

// Red team 33 C6, second half (kserve/kserve docs/samples/llmisvc/managed-dra):
// with serving.kserve.io/exp-dra-device-class on an LLMInferenceService, KServe's
// controller creates a ResourceClaimTemplate <name>-managed-dra of one request of
// exp-dra-device-count devices (default 1) of that class, adds a pod claim
// "managed-device" of it to every workload pod template (spec.template,
// spec.worker, spec.prefill.*; not the router's scheduler) and lists it in the
// container exp-dra-container-name names, else the first
// (pkg/controller/v1alpha2/llmisvc/managed_dra.go). So the service uses GPUs
// as a Deployment with that claim does.
std::string llmService(const std::string& annotations, const std::string& mainArgs = "[m]") {
  return "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata:\n  name: qwen\n"
         "  annotations:\n" + annotations +
         "spec:\n  model: {uri: \"hf://Qwen/Qwen2.5-7B-Instruct\", name: Qwen/Qwen2.5-7B-Instruct}\n"
         "  router:\n    scheduler:\n      template:\n        containers: [{name: epp, image: epp:1}]\n"
         "  template:\n    containers:\n    - {name: sidecar, image: \"busybox:1.36\"}\n"
         "    - name: main\n      image: vllm/vllm-openai:v0.10.1\n      args: " + mainArgs + "\n"
         "      resources: {limits: {cpu: \"8\", memory: 64Gi}}\n";
}

const std::string kTwoGpusOnMain =
    "    serving.kserve.io/exp-dra-device-class: gpu.nvidia.com\n    serving.kserve.io/exp-dra-device-count: \"2\"\n"
    "    serving.kserve.io/exp-dra-container-name: main\n";

TEST(KServeManagedDra, TheAnnotationsAreGpuUseAsTheClaimKServeAddsWouldBe) {
  const auto service = judgeFile(llmService(kTwoGpusOnMain), kPlacementRules);
  EXPECT_THAT(rulesHit(service), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  // What the controller makes of it: the template and the pod claim in the main container.
  const std::string deployment =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: qwen-managed-dra}\nspec:\n"
      "  spec:\n    devices:\n      requests:\n      - name: device\n"
      "        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n---\n"
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: qwen}\nspec:\n  template:\n    spec:\n"
      "      resourceClaims: [{name: managed-device, resourceClaimTemplateName: qwen-managed-dra}]\n"
      "      containers:\n      - {name: sidecar, image: \"busybox:1.36\"}\n"
      "      - name: main\n        image: vllm/vllm-openai:v0.10.1\n        args: [m]\n"
      "        resources: {claims: [{name: managed-device}]}\n";
  const auto same = judgeFile(deployment, kPlacementRules);
  ASSERT_EQ(service.size(), same.size());
  for (std::size_t i = 0; i < service.size(); ++i) EXPECT_EQ(service[i].severity, same[i].severity) << service[i].rule;
  EXPECT_EQ(service[0].field(), "spec.template.tolerations");
}

TEST(KServeManagedDra, TheNamedContainerGetsTheDeviceCount) {
  const Policy tp = onlyRules({"tensor-parallel-gpu-count"});
  const auto four = judgeYaml(llmService(kTwoGpusOnMain, "[m, --tensor-parallel-size, \"4\"]"), tp);
  ASSERT_THAT(rulesHit(four), ElementsAre("tensor-parallel-gpu-count"));
  EXPECT_THAT(four[0].message(), HasSubstr("the container gets 2 GPUs"));
  EXPECT_THAT(judgeYaml(llmService(kTwoGpusOnMain, "[m, --tensor-parallel-size, \"2\"]"), tp), IsEmpty());
  // Without exp-dra-container-name the first container (the sidecar) gets them: main has none.
  const std::string toFirst =
      "    serving.kserve.io/exp-dra-device-class: gpu.nvidia.com\n    serving.kserve.io/exp-dra-device-count: \"2\"\n";
  EXPECT_THAT(judgeYaml(llmService(toFirst, "[m, --tensor-parallel-size, \"4\"]"), tp), IsEmpty());
}

TEST(KServeManagedDra, AnnotationsKServesWebhookRejectsOrNoneAskNothing) {
  for (const std::string& annotations :
       {std::string("    serving.kserve.io/exp-dra-device-count: \"2\"\n"),  // no device class
        std::string("    serving.kserve.io/exp-dra-device-class: gpu.nvidia.com\n"
                    "    serving.kserve.io/exp-dra-device-count: \"0\"\n"),
        std::string("    serving.kserve.io/exp-dra-device-class: gpu.nvidia.com\n"
                    "    serving.kserve.io/exp-dra-device-count: two\n"),
        std::string("    serving.kserve.io/exp-dra-device-class: gpu.amd.com\n"),  // another vendor's GPUs
        std::string("    example.com/other: x\n")}) {
    EXPECT_THAT(judgeYaml(llmService(annotations), kPlacementRules), IsEmpty()) << annotations;
  }
}

// --- the documented kinds --------------------------------------------------------

TEST(WorkloadKinds, EveryRowSaysWhereThePodsAndTheGpusAre) {
  ASSERT_FALSE(workloadKinds().empty());
  for (const WorkloadKind& k : workloadKinds()) {
    EXPECT_FALSE(k.kinds.empty());
    EXPECT_FALSE(k.apiGroup.empty()) << k.kinds;
    EXPECT_FALSE(k.pods.empty()) << k.kinds;
    EXPECT_FALSE(k.gpus.empty()) << k.kinds;
  }
}

}  // namespace
}  // namespace gpuguard
