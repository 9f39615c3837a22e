// Where the pods are: every kind that carries a pod spec is found, built-in
// or custom, and a finding names the field the way the API server would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/pod_specs.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::only;
using testing::onlyRules;

// A container asking for half a GPU, indented to sit at `indent` spaces.
std::string halfGpuContainer(int indent) {
  const std::string pad(indent, ' ');
  return pad + "- name: c\n" + pad + "  image: busybox\n" + pad + "  resources:\n" + pad + "    limits:\n" + pad +
         "      nvidia.com/gpu: 0.5\n";
}

struct KindCase {
  const char* name;
  std::string yaml;
  const char* expectedField;
};

// How GoogleTest and ctest show each case (instead of its bytes).
void PrintTo(const KindCase& c, std::ostream* os) { *os << c.name; }

std::vector<KindCase> kindCases() {
  return {
      {"Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n" + halfGpuContainer(2),
       "spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"PodTemplate",
       "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\ntemplate:\n  spec:\n    containers:\n" +
           halfGpuContainer(4),
       "template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"Deployment",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n" +
           halfGpuContainer(6),
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"ReplicaSet",
       "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  template:\n    spec:\n      containers:\n" +
           halfGpuContainer(6),
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"StatefulSet",
       "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      containers:\n" +
           halfGpuContainer(6),
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"DaemonSet",
       "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      containers:\n" +
           halfGpuContainer(6),
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"Job",
       "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers:\n" +
           halfGpuContainer(6),
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"CronJob",
       "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n"
       "    spec:\n      template:\n        spec:\n          containers:\n" +
           halfGpuContainer(10),
       "spec.jobTemplate.spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"ReplicationController",
       "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: r}\nspec:\n  template:\n    spec:\n"
       "      containers:\n" +
           halfGpuContainer(6),
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"List",
       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n"
       "    containers:\n" +
           halfGpuContainer(4),
       "items[0].spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"RayCluster",
       "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n  headGroupSpec:\n    template:\n"
       "      spec:\n        containers:\n        - {name: head, image: rayproject/ray}\n  workerGroupSpecs:\n"
       "  - groupName: gpu\n    template:\n      spec:\n        containers:\n" +
           halfGpuContainer(8),
       "spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"RayJob",
       "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\nspec:\n  rayClusterSpec:\n    workerGroupSpecs:\n"
       "    - template:\n        spec:\n          containers:\n" +
           halfGpuContainer(10),
       "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"RayService",
       "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: r}\nspec:\n  rayClusterConfig:\n"
       "    workerGroupSpecs:\n    - template:\n        spec:\n          containers:\n" +
           halfGpuContainer(10),
       "spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"PyTorchJob",
       "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n  pytorchReplicaSpecs:\n"
       "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n" +
           halfGpuContainer(10),
       "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"TFJob",
       "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nspec:\n  tfReplicaSpecs:\n    Worker:\n"
       "      template:\n        spec:\n          containers:\n" +
           halfGpuContainer(10),
       "spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"MPIJob",
       "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m}\nspec:\n  mpiReplicaSpecs:\n"
       "    Worker:\n      template:\n        spec:\n          containers:\n" +
           halfGpuContainer(10),
       "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"TrainJob",
       "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n  trainer:\n"
       "    image: pytorch/pytorch\n    resourcesPerNode:\n      limits:\n        nvidia.com/gpu: 0.5\n",
       "spec.trainer.resourcesPerNode.limits[nvidia.com/gpu]"},
      {"JobSet",
       "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: j}\nspec:\n  replicatedJobs:\n"
       "  - name: w\n    template:\n      spec:\n        template:\n          spec:\n            containers:\n" +
           halfGpuContainer(12),
       "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"LeaderWorkerSet",
       "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n"
       "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n        containers:\n" +
           halfGpuContainer(8),
       "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"InferenceService",
       "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: i}\nspec:\n  predictor:\n"
       "    model:\n      modelFormat: {name: huggingface}\n      resources:\n        limits:\n"
       "          nvidia.com/gpu: 0.5\n",
       "spec.predictor.model.resources.limits[nvidia.com/gpu]"},
      {"VolcanoJob",
       "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n  tasks:\n  - name: t\n"
       "    template:\n      spec:\n        containers:\n" +
           halfGpuContainer(8),
       "spec.tasks[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]"},
      {"ArgoWorkflow",
       "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: w-}\nspec:\n  entrypoint: main\n"
       "  templates:\n  - name: main\n    container:\n      image: nvidia/cuda\n      resources:\n        limits:\n"
       "          nvidia.com/gpu: 0.5\n",
       "spec.templates[0].container.resources.limits[nvidia.com/gpu]"},
  };
}

class EveryKindWithPods : public ::testing::TestWithParam<KindCase> {};

TEST_P(EveryKindWithPods, HalfAGpuIsFoundAtTheApiServersFieldPath) {
  const KindCase& c = GetParam();
  const auto fractional = only(judgeYaml(c.yaml), "gpu-fractional");
  ASSERT_EQ(fractional.size(), 1u) << c.yaml;
  EXPECT_EQ(fractional[0].field(), c.expectedField);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EveryKindWithPods, ::testing::ValuesIn(kindCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(PodSites, OnlyAPodsOwnSpecIsDefaultedLikeAPod) {
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"c"}]}})");
  const auto dep = nlohmann::json::parse(
      R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})");
  ASSERT_EQ(findPodSites(pod).size(), 1u);
  EXPECT_TRUE(findPodSites(pod)[0].isPod);
  ASSERT_EQ(findPodSites(dep).size(), 1u);
  EXPECT_FALSE(findPodSites(dep)[0].isPod);
}

TEST(PodSites, InitContainersWithRestartPolicyAlwaysAreSidecars) {
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","spec":{
    "initContainers":[{"name":"init"},{"name":"side","restartPolicy":"Always"}],
    "containers":[{"name":"app"}],"ephemeralContainers":[{"name":"debug"}]}})");
  const auto sites = findPodSites(pod);
  ASSERT_EQ(sites.size(), 1u);
  std::vector<ContainerKind> kinds;
  for (const auto& c : sites[0].containers) kinds.push_back(c.kind);
  EXPECT_THAT(kinds, ElementsAre(ContainerKind::Init, ContainerKind::Sidecar, ContainerKind::App,
                                 ContainerKind::Ephemeral));
}

TEST(PodSites, AnArgoTemplateTakesTolerationsFromTheNearestEnclosingObject) {
  const auto wf = nlohmann::json::parse(R"({"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","spec":{
    "tolerations":[{"operator":"Exists"}],
    "templates":[{"name":"a","container":{"image":"x","resources":{"limits":{"nvidia.com/gpu":1}}}},
                 {"name":"b","nodeSelector":{"k":"v"},
                  "container":{"image":"x","resources":{"limits":{"nvidia.com/gpu":1}}}}]}})");
  const auto sites = findPodSites(wf);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].tolerations.path.apiPath(), "spec.tolerations");
  EXPECT_EQ(sites[0].nodeSelector.value, nullptr);
  EXPECT_EQ(sites[1].nodeSelector.path.apiPath(), "spec.templates[1].nodeSelector");
}

// --- where a site's scheduling fields live ------------------------------------
// Tolerations, nodeSelector and affinity belong to the pod. Sites that are not
// a PodSpec (an Argo containerSet or container, a KServe model, a TrainJob
// trainer) take them from where their operator reads them, and findings point
// there: the same fields written inside a Container are dropped (the Container
// type has none), so they tolerate nothing.

// The scheduling findings, as "rule at field".
std::vector<std::string> schedulingFindings(const std::string& yaml) {
  const Policy p = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-toleration-without-request"});
  std::vector<std::string> out;
  for (const Finding& f : judgeYaml(yaml, p)) out.push_back(f.rule + " at " + f.field());
  return out;
}

const char* const kTolerates = "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]";
const char* const kPinned = "{nvidia.com/cuda.driver-version.major: \"550\"}";

// An Argo Workflow whose one template has the given lines (4-space indented).
std::string argoWorkflow(const std::string& templateLines) {
  return "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: w-}\nspec:\n"
         "  entrypoint: main\n  templates:\n  - name: main\n" +
         templateLines;
}

const char* const kGpuContainerSet =
    "    containerSet:\n      containers:\n"
    "      - {name: a, image: nvidia/cuda:12.4.1-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}\n"
    "      - {name: b, image: busybox}\n";

TEST(ArgoContainerSet, IsOnePodOfItsContainersScheduledByItsTemplate) {
  const auto wf = yaml::parseStream(argoWorkflow(std::string("    tolerations: ") + kTolerates + "\n" +
                                                 kGpuContainerSet));
  const auto sites = findPodSites(wf.documents.at(0).value);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].specPath.apiPath(), "spec.templates[0].containerSet");
  ASSERT_EQ(sites[0].containers.size(), 2u);
  EXPECT_EQ(sites[0].containers[1].path.apiPath(), "spec.templates[0].containerSet.containers[1]");
  EXPECT_EQ(sites[0].containers[1].kind, ContainerKind::App);
  ASSERT_NE(sites[0].tolerations.value, nullptr);
  EXPECT_EQ(sites[0].tolerations.path.apiPath(), "spec.templates[0].tolerations");
  EXPECT_EQ(sites[0].nodeSelector.path.apiPath(), "spec.templates[0].nodeSelector");
}

TEST(ArgoContainerSet, TheTemplatesTolerationsAndNodeSelectorCount) {
  EXPECT_THAT(schedulingFindings(argoWorkflow(std::string("    nodeSelector: ") + kPinned + "\n    tolerations: " +
                                              kTolerates + "\n" + kGpuContainerSet)),
              IsEmpty());
}

TEST(ArgoContainerSet, WithoutTolerationsIsReportedAtItsTemplate) {
  EXPECT_THAT(schedulingFindings(argoWorkflow(std::string("    nodeSelector: ") + kPinned + "\n" + kGpuContainerSet)),
              ElementsAre("gpu-missing-toleration at spec.templates[0].tolerations"));
}

TEST(ArgoContainerSet, InheritsTheWorkflowsTolerations) {
  std::string yaml = argoWorkflow(std::string("    nodeSelector: ") + kPinned + "\n" + kGpuContainerSet);
  yaml.replace(yaml.find("  entrypoint"), 0, std::string("  tolerations: ") + kTolerates + "\n");
  EXPECT_THAT(schedulingFindings(yaml), IsEmpty());
}

// A TrainJob asking for 8 GPUs per node, with the given lines under spec.
// It names no runtime (a fragment, as a kustomize patch holds one): with
// spec.runtimeRef, what no override sets is the runtime's
// (runtime_supplied_fields_test.cpp), and these tests show where the
// TrainJob's own fields are read and findings point.
std::string gpuTrainJob(const std::string& specLines, const std::string& gpus = "nvidia.com/gpu: 8") {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
         "  trainer:\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    numNodes: 2\n"
         "    resourcesPerNode: {limits: {" + gpus + "}}\n" +
         specLines;
}

TEST(TrainJob, TheTrainerIsScheduledByThePodSpecOverrideForItsNodeJob) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob(std::string("  podSpecOverrides:\n  - targetJobs: [{name: node}]\n") +
                                             "    nodeSelector: " + kPinned + "\n    tolerations: " + kTolerates +
                                             "\n")),
              IsEmpty());
}

TEST(TrainJob, WithoutOverridesIsReportedWhereTheOverrideWouldBeWritten) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob("")),
              ElementsAre("gpu-missing-toleration at spec.podSpecOverrides[0].tolerations",
                          "gpu-missing-driver-pin at spec.podSpecOverrides[0].nodeSelector"));
}

TEST(TrainJob, AnOverrideForTheNodeJobWithoutTolerationsIsWhereTheyGo) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob(std::string("  podSpecOverrides:\n") +
                                             "  - targetJobs: [{name: dataset-initializer}]\n    tolerations: " +
                                             kTolerates + "\n  - targetJobs: [{name: node}]\n    nodeSelector: " +
                                             kPinned + "\n")),
              ElementsAre("gpu-missing-toleration at spec.podSpecOverrides[1].tolerations"));
}

TEST(TrainJob, AnOverrideForOnlyTheInitializersDoesNotScheduleTheTrainer) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob(std::string("  podSpecOverrides:\n") +
                                             "  - targetJobs: [{name: dataset-initializer}, {name: model-initializer}]\n"
                                             "    nodeSelector: " + kPinned + "\n    tolerations: " + kTolerates +
                                             "\n")),
              ElementsAre("gpu-missing-toleration at spec.podSpecOverrides[1].tolerations",
                          "gpu-missing-driver-pin at spec.podSpecOverrides[1].nodeSelector"));
}

// A runtime may name its trainer's job otherwise; targetJobs is required, but
// a hand-written override may lack it. Either way the override may be the
// trainer's, and reading it so avoids a false alarm.
TEST(TrainJob, AnOverrideForAnUnknownJobOrForNoJobInParticularCounts) {
  const std::string scheduling =
      std::string("    nodeSelector: ") + kPinned + "\n    tolerations: " + kTolerates + "\n";
  EXPECT_THAT(schedulingFindings(gpuTrainJob("  podSpecOverrides:\n  - targetJobs: [{name: trainer}]\n" + scheduling)),
              IsEmpty());
  EXPECT_THAT(schedulingFindings(gpuTrainJob("  podSpecOverrides:\n  - serviceAccountName: train\n" + scheduling)),
              IsEmpty());
}

TEST(TrainJob, AnOverridesContainersAreAPartialOverrideNotAPod) {
  const std::string yaml =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
      "  runtimeRef: {name: torch-distributed-gpu}\n  trainer: {numNodes: 2}\n"
      "  podSpecOverrides:\n  - targetJobs: [{name: node}]\n"
      "    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "    containers:\n    - name: node\n      env: [{name: NCCL_DEBUG, value: INFO}]\n";
  EXPECT_TRUE(findPodSites(yaml::parseStream(yaml).documents.at(0).value).empty());
  EXPECT_THAT(schedulingFindings(yaml), IsEmpty());
}

TEST(TrainJob, AGpuTolerationForACpuOnlyTrainerIsStillReported) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob(std::string("  podSpecOverrides:\n  - targetJobs: [{name: node}]\n") +
                                                 "    tolerations: " + kTolerates + "\n",
                                             "cpu: 4")),
              ElementsAre("gpu-toleration-without-request at spec.podSpecOverrides[0].tolerations[0]"));
}

TEST(TrainJob, TolerationsWrittenInsideTheTrainerDoNotCount) {
  std::string yaml = gpuTrainJob(std::string("  podSpecOverrides:\n  - targetJobs: [{name: node}]\n") +
                                 "    nodeSelector: " + kPinned + "\n");
  yaml.replace(yaml.find("    numNodes"), 0, std::string("    tolerations: ") + kTolerates + "\n");
  EXPECT_THAT(schedulingFindings(yaml), ElementsAre("gpu-missing-toleration at spec.podSpecOverrides[0].tolerations"));
}

// Current Kubeflow Trainer replaced podSpecOverrides with spec.runtimePatches
// (kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go): each patch,
// keyed by manager, patches replicated jobs by name, and a job's
// template.spec.template.spec is a partial pod spec (PodSpecPatch).

// A runtime patch by `manager` with one replicated job item per entry of
// `jobs` ({job name, lines of its pod spec patch at 20 spaces}), as lines
// under spec. An empty name leaves the item's name out.
std::string runtimePatch(const std::string& manager,
                         const std::vector<std::pair<std::string, std::string>>& jobs) {
  std::string out = "  - manager: " + manager + "\n    trainingRuntimeSpec:\n      template:\n        spec:\n"
                    "          replicatedJobs:\n";
  for (const auto& [name, podSpecLines] : jobs) {
    out += name.empty() ? "          - template:\n" : "          - name: " + name + "\n            template:\n";
    out += "              spec:\n                template:\n                  spec:\n" + podSpecLines;
  }
  return out;
}

std::string podSpecLine(const std::string& key, const std::string& value) {
  return "                    " + key + ": " + value + "\n";
}

const std::string kNcclDebugContainer =
    podSpecLine("containers", "[{name: node, env: [{name: NCCL_DEBUG, value: INFO}]}]");

TEST(TrainJob, TheTrainerIsScheduledByTheRuntimePatchForItsNodeJob) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob("  runtimePatches:\n" +
                                             runtimePatch("me", {{"node", podSpecLine("nodeSelector", kPinned) +
                                                                              podSpecLine("tolerations", kTolerates) +
                                                                              kNcclDebugContainer}}))),
              IsEmpty());
}

TEST(TrainJob, RuntimePatchesOfSeveralManagersAddUp) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob(
                  "  runtimePatches:\n" +
                  runtimePatch("kueue.x-k8s.io/manager", {{"node", podSpecLine("nodeSelector", kPinned)}}) +
                  runtimePatch("me", {{"node", podSpecLine("tolerations", kTolerates)}}))),
              IsEmpty());
}

TEST(TrainJob, ARuntimePatchsPodSpecIsAPartialPatchNotAPod) {
  const std::string yaml =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
      "  runtimeRef: {name: torch-distributed-gpu}\n  trainer: {numNodes: 2}\n  runtimePatches:\n" +
      runtimePatch("me", {{"node", podSpecLine("tolerations", kTolerates) + kNcclDebugContainer}});
  EXPECT_TRUE(findPodSites(yaml::parseStream(yaml).documents.at(0).value).empty());
  EXPECT_THAT(schedulingFindings(yaml), IsEmpty());
}

TEST(TrainJob, ARuntimePatchForTheNodeJobWithoutTolerationsIsWhereTheyGo) {
  const std::string patch = runtimePatch("me", {{"dataset-initializer", podSpecLine("tolerations", kTolerates)},
                                                {"node", podSpecLine("nodeSelector", kPinned)}});
  EXPECT_THAT(schedulingFindings(gpuTrainJob("  runtimePatches:\n" + patch)),
              ElementsAre("gpu-missing-toleration at "
                          "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[1].template.spec."
                          "template.spec.tolerations"));
}

TEST(TrainJob, ARuntimePatchForOnlyTheInitializersAndLauncherDoesNotScheduleTheTrainer) {
  const std::string scheduling = podSpecLine("nodeSelector", kPinned) + podSpecLine("tolerations", kTolerates);
  EXPECT_THAT(schedulingFindings(gpuTrainJob(
                  "  runtimePatches:\n" +
                  runtimePatch("me", {{"model-initializer", scheduling}, {"launcher", scheduling}}))),
              ElementsAre("gpu-missing-toleration at spec.runtimePatches[1].trainingRuntimeSpec.template.spec."
                          "replicatedJobs[0].template.spec.template.spec.tolerations",
                          "gpu-missing-driver-pin at spec.runtimePatches[1].trainingRuntimeSpec.template.spec."
                          "replicatedJobs[0].template.spec.template.spec.nodeSelector"));
}

// The name is required, but a custom runtime may call its trainer's job
// otherwise, and a hand-written patch may leave it out: reading such a patch
// as the trainer's avoids a false alarm.
TEST(TrainJob, ARuntimePatchForAnUnknownJobOrWithoutAJobNameCounts) {
  const std::string scheduling = podSpecLine("nodeSelector", kPinned) + podSpecLine("tolerations", kTolerates);
  EXPECT_THAT(schedulingFindings(gpuTrainJob("  runtimePatches:\n" + runtimePatch("me", {{"trainer", scheduling}}))),
              IsEmpty());
  EXPECT_THAT(schedulingFindings(gpuTrainJob("  runtimePatches:\n" + runtimePatch("me", {{"", scheduling}}))),
              IsEmpty());
}

TEST(TrainJob, ARuntimePatchForTheNodeJobWithoutAPodSpecIsWhereItGoes) {
  const std::string labelsOnly = "  runtimePatches:\n  - manager: me\n    trainingRuntimeSpec:\n      template:\n"
                                 "        spec:\n          replicatedJobs:\n          - name: node\n"
                                 "            template:\n              metadata: {labels: {team: a}}\n";
  EXPECT_THAT(schedulingFindings(gpuTrainJob(labelsOnly)),
              ElementsAre("gpu-missing-toleration at spec.runtimePatches[0].trainingRuntimeSpec.template.spec."
                          "replicatedJobs[0].template.spec.template.spec.tolerations",
                          "gpu-missing-driver-pin at spec.runtimePatches[0].trainingRuntimeSpec.template.spec."
                          "replicatedJobs[0].template.spec.template.spec.nodeSelector"));
}

TEST(TrainJob, AGpuTolerationInARuntimePatchForACpuOnlyTrainerIsStillReported) {
  EXPECT_THAT(schedulingFindings(gpuTrainJob(
                  "  runtimePatches:\n" + runtimePatch("me", {{"node", podSpecLine("tolerations", kTolerates)}}),
                  "cpu: 4")),
              ElementsAre("gpu-toleration-without-request at spec.runtimePatches[0].trainingRuntimeSpec.template."
                          "spec.replicatedJobs[0].template.spec.template.spec.tolerations[0]"));
}

// With neither field, the TrainJob does not tell which Trainer release it is
// written for: the finding says where each one takes the field.
TEST(TrainJob, WithNeitherOverridesNorPatchesTheMessageNamesBothPlaces) {
  const Policy p = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"});
  const std::vector<Finding> findings = judgeYaml(gpuTrainJob(""), p);
  ASSERT_EQ(findings.size(), 2u);
  for (const Finding& f : findings) {
    EXPECT_THAT(f.message(), HasSubstr("spec.podTemplateOverrides entry with targetJobs [{name: node}]")) << f.rule;
    EXPECT_THAT(f.message(), HasSubstr("a spec.podSpecOverrides entry in older releases")) << f.rule;
    EXPECT_THAT(f.message(), HasSubstr("spec.runtimePatches")) << f.rule;
    EXPECT_THAT(f.message(), HasSubstr("replicatedJobs item named node, in template.spec.template.spec")) << f.rule;
  }
}

TEST(TrainJob, WithAPatchForTheTrainerTheMessageNeedsNoDirections) {
  const Policy p = onlyRules({"gpu-missing-toleration"});
  const std::vector<Finding> findings = judgeYaml(
      gpuTrainJob("  runtimePatches:\n" + runtimePatch("me", {{"node", podSpecLine("nodeSelector", kPinned)}})), p);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message(), Not(HasSubstr("podSpecOverrides")));
}

// A KServe InferenceService whose predictor has the given lines and a `model`
// (or legacy framework key) asking for a GPU.
std::string kservePredictor(const std::string& predictorLines, const std::string& modelKey = "model",
                            const std::string& modelLines = "") {
  return "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: llm}\nspec:\n"
         "  predictor:\n" +
         predictorLines + "    " + modelKey + ":\n      modelFormat: {name: huggingface}\n" + modelLines +
         "      resources: {limits: {nvidia.com/gpu: 1}}\n";
}

TEST(SingleContainerSites, AKServeModelIsScheduledByItsPredictor) {
  EXPECT_THAT(schedulingFindings(kservePredictor(std::string("    nodeSelector: ") + kPinned + "\n    tolerations: " +
                                                 kTolerates + "\n")),
              IsEmpty());
  EXPECT_THAT(schedulingFindings(kservePredictor("")),
              ElementsAre("gpu-missing-toleration at spec.predictor.tolerations",
                          "gpu-missing-driver-pin at spec.predictor.nodeSelector"));
}

TEST(SingleContainerSites, AKServeFrameworkPredictorIsScheduledByItsPredictorToo) {
  EXPECT_THAT(schedulingFindings(kservePredictor(std::string("    nodeSelector: ") + kPinned + "\n", "pytorch")),
              ElementsAre("gpu-missing-toleration at spec.predictor.tolerations"));
}

TEST(SingleContainerSites, TolerationsInsideAKServeModelDoNotCount) {
  EXPECT_THAT(schedulingFindings(kservePredictor(std::string("    nodeSelector: ") + kPinned + "\n", "model",
                                                 std::string("      tolerations: ") + kTolerates + "\n")),
              ElementsAre("gpu-missing-toleration at spec.predictor.tolerations"));
}

const char* const kGpuArgoContainer =
    "    container:\n      image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
    "      resources: {limits: {nvidia.com/gpu: 1}}\n";

TEST(SingleContainerSites, AnArgoContainerIsReportedAtItsTemplate) {
  EXPECT_THAT(schedulingFindings(argoWorkflow(kGpuArgoContainer)),
              ElementsAre("gpu-missing-toleration at spec.templates[0].tolerations",
                          "gpu-missing-driver-pin at spec.templates[0].nodeSelector"));
}

TEST(SingleContainerSites, SchedulingFieldsInsideAnArgoContainerDoNotCountAndAreExplained) {
  const std::string yaml =
      argoWorkflow(std::string(kGpuArgoContainer) + "      tolerations: " + kTolerates + "\n      nodeSelector: " +
                   kPinned + "\n");
  EXPECT_THAT(schedulingFindings(yaml), ElementsAre("gpu-missing-toleration at spec.templates[0].tolerations",
                                                    "gpu-missing-driver-pin at spec.templates[0].nodeSelector"));
  const auto tol = only(judgeYaml(yaml), "gpu-missing-toleration");
  ASSERT_EQ(tol.size(), 1u);
  EXPECT_THAT(tol[0].message(), HasSubstr("; spec.templates[0].container.tolerations does not count"));
  const auto pin = only(judgeYaml(yaml), "gpu-missing-driver-pin");
  ASSERT_EQ(pin.size(), 1u);
  EXPECT_THAT(pin[0].message(), HasSubstr("; spec.templates[0].container.nodeSelector does not count"));
}

// NIMService's spec is the single container and the pod at once: its own
// tolerations are where the NIM operator reads them.
TEST(SingleContainerSites, AnObjectThatIsAlsoThePodKeepsItsOwnFields) {
  const std::string yaml = std::string(
                               "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: n}\nspec:\n"
                               "  image: {repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: 1.0.0}\n"
                               "  resources: {limits: {nvidia.com/gpu: 1}}\n  nodeSelector: ") +
                           kPinned + "\n  tolerations: " + kTolerates + "\n";
  EXPECT_THAT(schedulingFindings(yaml), IsEmpty());
}

TEST(PodSites, TheHeadAndWorkerGroupsOfARayClusterSpecAreMarkedWhateverObjectEmbedsIt) {
  // AIBrix's RayClusterFleet: spec.template.spec is a KubeRay RayClusterSpec.
  const auto fleet = nlohmann::json::parse(R"({"apiVersion":"orchestration.aibrix.ai/v1alpha1",
    "kind":"RayClusterFleet","spec":{"template":{"spec":{
      "headGroupSpec":{"template":{"spec":{"containers":[{"name":"head"}]}}},
      "workerGroupSpecs":[{"template":{"spec":{"containers":[{"name":"worker"}]}}}]}}}})");
  const auto sites = findPodSites(fleet);  // it points into `fleet`
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_TRUE(sites[0].inRayClusterSpec);
  EXPECT_TRUE(sites[1].inRayClusterSpec);
  EXPECT_EQ(sites[1].specPath.apiPath(), "spec.template.spec.workerGroupSpecs[0].template.spec");

  const auto deployment = nlohmann::json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}})");
  const auto plain = findPodSites(deployment);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].inRayClusterSpec);
}

TEST(PodSites, HostileNestingIsBoundedNotRecursedForever) {
  nlohmann::json deep = nlohmann::json::object();
  nlohmann::json* cur = &deep;
  for (int i = 0; i < 10000; ++i) cur = &((*cur)["a"] = nlohmann::json::object());
  EXPECT_TRUE(findPodSites(deep).empty());
}

TEST(PodSites, ManagedFieldsAndStatusAreNotSearched) {
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"managedFields":[{"fieldsV1":{"containers":[{"name":"x"}]}}]},
    "status":{"containers":[{"name":"y"}]},
    "spec":{"containers":[{"name":"c"}]}})");
  EXPECT_EQ(findPodSites(pod).size(), 1u);
}

}  // namespace
}  // namespace gpuguard
