// Scheduling fields an operator takes from a runtime the object names: a
// Kubeflow TrainJob's runtimeRef (ClusterTrainingRuntime), a KServe
// predictor's ServingRuntime, an LLMInferenceService's baseRefs. The runtime
// is the base its operator merges the pod over, so what the object leaves
// unset is the runtime's: opaque (PodField::opaque), never reported missing,
// and /mutate adds no toleration that would replace the runtime's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/pod_specs.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;

// The findings of the rules that judge tolerations and node selection, as "rule at field".
std::vector<std::string> schedulingFindings(const std::string& yaml) {
  const Policy p = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"});
  std::vector<std::string> out;
  for (const Finding& f : judgeYaml(yaml, p)) out.push_back(f.rule + " at " + f.field());
  return out;
}

const PodSite onlySite(const std::string& yaml) {
  std::vector<PodSite> sites = findPodSites(yaml::parseStream(yaml).documents.at(0).value);
  EXPECT_EQ(sites.size(), 1u);
  return sites.empty() ? PodSite{} : sites.front();
}

// --- Kubeflow Trainer ---------------------------------------------------------

// The red team's TrainJob (session 31, A4): its runtime torch-distributed-gpu
// tolerates the GPU taint and pins the driver; the TrainJob overrides nothing.
const char* const kTrainJob =
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: llama-ft, namespace: ml}\nspec:\n"
    "  runtimeRef: {name: torch-distributed-gpu}\n  trainer:\n    image: nvcr.io/nvidia/pytorch:25.01-py3\n"
    "    command: [torchrun, train.py]\n    numNodes: 2\n    resourcesPerNode:\n      limits: {nvidia.com/gpu: 8}\n";

TEST(RuntimeSuppliedFields, ATrainJobTakesWhatNoOverrideSetsFromItsRuntime) {
  EXPECT_THAT(schedulingFindings(kTrainJob), IsEmpty());
  const PodSite site = onlySite(kTrainJob);
  EXPECT_TRUE(site.tolerations.opaque);
  EXPECT_TRUE(site.nodeSelector.opaque);
  EXPECT_TRUE(site.affinity.opaque);
  EXPECT_EQ(site.tolerations.value, nullptr);  // nothing written here stands for all the pod gets
  EXPECT_EQ(site.tolerations.path.apiPath(), "spec.runtimeRef");
}

TEST(RuntimeSuppliedFields, AnOverridesTolerationsAddToTheRuntimesAndItsNodeSelectorIsJudged) {
  std::string yaml = std::string(kTrainJob) +
                     "  podTemplateOverrides:\n  - targetJobs: [{name: node}]\n    spec:\n"
                     "      tolerations: [{key: dedicated, operator: Exists}]\n"
                     "      nodeSelector: {team: ml}\n";
  const PodSite site = onlySite(yaml);
  EXPECT_TRUE(site.tolerations.opaque);
  ASSERT_NE(site.tolerations.value, nullptr);  // still read for what is written wrong
  EXPECT_FALSE(site.nodeSelector.opaque);      // written: the override's, judged here
  EXPECT_THAT(schedulingFindings(yaml), IsEmpty());
}

TEST(RuntimeSuppliedFields, ATrainJobWithoutARuntimeGetsOnlyWhatItWrites) {
  std::string fragment = kTrainJob;
  fragment.erase(fragment.find("  runtimeRef"), fragment.find("  trainer") - fragment.find("  runtimeRef"));
  EXPECT_THAT(schedulingFindings(fragment), ElementsAre("gpu-missing-toleration at spec.podSpecOverrides[0].tolerations",
                                                        "gpu-missing-driver-pin at spec.podSpecOverrides[0].nodeSelector"));
}

// --- KServe -----------------------------------------------------------------

// The red team's InferenceService (A4) naming the ClusterServingRuntime
// vllm-gpu, which carries the toleration and the driver pin.
std::string inferenceService(const std::string& predictorLines, const std::string& runtimeLine) {
  return "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: qwen, namespace: ml}\n"
         "spec:\n  predictor:\n" + predictorLines +
         "    model:\n      modelFormat: {name: huggingface}\n" + runtimeLine +
         "      storageUri: hf://Qwen/Qwen2.5-7B-Instruct\n      resources:\n        limits: {nvidia.com/gpu: \"1\"}\n";
}

TEST(RuntimeSuppliedFields, AKServePredictorNamingItsRuntimeTakesTheRuntimesSchedulingFields) {
  EXPECT_THAT(schedulingFindings(inferenceService("", "      runtime: vllm-gpu\n")), IsEmpty());
  EXPECT_EQ(onlySite(inferenceService("", "      runtime: vllm-gpu\n")).tolerations.path.apiPath(),
            "spec.predictor.model.runtime");
}

TEST(RuntimeSuppliedFields, TolerationsThePredictorWritesReplaceTheRuntimesAndAreJudged) {
  // MergePodSpec: the predictor's pod spec is a strategic merge patch over
  // the runtime's, and PodSpec.tolerations has no merge key: the list replaces.
  const std::string yaml = inferenceService(
      "    tolerations: [{key: dedicated, operator: Exists}]\n    nodeSelector: "
      "{nvidia.com/cuda.driver-version.major: \"570\"}\n",
      "      runtime: vllm-gpu\n");
  EXPECT_THAT(schedulingFindings(yaml), ElementsAre("gpu-missing-toleration at spec.predictor.tolerations"));
}

TEST(RuntimeSuppliedFields, AnAutoSelectedKServeRuntimeIsNotAssumedToTolerate) {
  // The runtimes KServe ships carry no scheduling fields.
  EXPECT_THAT(schedulingFindings(inferenceService("", "")),
              ElementsAre("gpu-missing-toleration at spec.predictor.tolerations",
                          "gpu-missing-driver-pin at spec.predictor.nodeSelector"));
}

TEST(RuntimeSuppliedFields, MutateAddsNoTolerationThatWouldReplaceTheRuntimes) {
  // /mutate applies the fixes of findings; with none, the predictor keeps
  // its runtime's tolerations.
  for (const Finding& f : judgeYaml(inferenceService("", "      runtime: vllm-gpu\n"))) {
    EXPECT_FALSE(f.fix && !f.fix->edits.empty()) << f.rule << " at " << f.field();
  }
}

std::string llmInferenceService(const std::string& baseRefs) {
  return "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: qwen, namespace: ml}\n"
         "spec:\n" + baseRefs +
         "  model: {uri: hf://Qwen/Qwen2.5-7B-Instruct}\n  template:\n    containers:\n    - name: main\n"
         "      resources:\n        limits: {nvidia.com/gpu: \"1\"}\n";
}

TEST(RuntimeSuppliedFields, AnLLMInferenceServiceTakesWhatItLeavesUnsetFromItsBaseConfigs) {
  EXPECT_THAT(schedulingFindings(llmInferenceService("  baseRefs:\n  - name: h100-gpu-defaults\n")), IsEmpty());
  EXPECT_EQ(onlySite(llmInferenceService("  baseRefs:\n  - name: h100-gpu-defaults\n")).tolerations.path.apiPath(),
            "spec.baseRefs");
  EXPECT_THAT(schedulingFindings(llmInferenceService("")),
              ElementsAre("gpu-missing-toleration at spec.template.tolerations",
                          "gpu-missing-driver-pin at spec.template.nodeSelector"));
}

// --- with the cluster's facts ---------------------------------------------------

TEST(RuntimeSuppliedFields, WithClusterFactsTheReachOfARuntimeScheduledPodIsNotJudged) {
  // A tainted H100 node on driver 535: the pod as written tolerates nothing
  // and selects nothing, but the runtime decides both.
  const auto cluster = testing::clusterOf(testing::gpuNode({.name = "gpu-1",
                                                            .driver = "535",
                                                            .taints = testing::kGpuPresentTaint,
                                                            .machine = "cpu: \"64\", memory: 512Gi, pods: \"110\""}));
  const Policy p = onlyRules({"gpu-unschedulable", "cuda-driver-too-old", "gpu-missing-toleration"});
  EXPECT_THAT(testing::judgeWithCluster(kTrainJob, *cluster, p), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
