// KServe InferenceService predictors and Knative Serving, which KServe's
// Serverless mode runs on.
#include "rules/pods/walker.h"

namespace gpuguard::pods {

using nlohmann::json;

namespace {

constexpr std::string_view kKnativeHint =
    "; in a Knative Service, tolerations, nodeSelector and affinity are accepted only when Knative's feature "
    "flags kubernetes.podspec-tolerations, kubernetes.podspec-nodeselector and kubernetes.podspec-affinity are "
    "\"enabled\" in ConfigMap config-features (namespace knative-serving); they ship \"disabled\", and "
    "Knative's webhook then rejects the Service";
}  // namespace

bool Walker::inKnativeServing() const { return ownerGroup() == "serving.knative.dev"; }

bool kserveFieldHoldsContainer(std::string_view via) {
  for (std::string_view key : {"model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx",
                               "huggingface", "pmml", "lightgbm", "paddle"}) {
    if (via == key) return true;
  }
  return false;
}

std::string_view knativePlacementHint() { return kKnativeHint; }

// KServe builds a predictor's pod from its ServingRuntime (or
// ClusterServingRuntime): MergePodSpec (pkg/controller/v1beta1/
// inferenceservice/utils/utils.go) takes the runtime's nodeSelector,
// affinity and tolerations as the base and the predictor's pod fields as a
// strategic merge patch over them. A field the predictor leaves unset is the
// runtime's, judged when the runtime is; one it sets replaces (tolerations)
// or extends (nodeSelector, affinity) the runtime's and is judged here. An
// auto-selected runtime (no `runtime` named) is left to the rules: the
// runtimes KServe ships carry no scheduling fields.
void Walker::openToServingRuntime(PodSite& site, const json& model, const FieldPath& modelPath) const {
  if (!ownerIs("InferenceService", "serving.kserve.io/")) return;
  auto runtime = model.find("runtime");
  if (runtime == model.end() || !runtime->is_string() || runtime->get_ref<const std::string&>().empty()) return;
  openPlacementToRuntime(site, modelPath.field("runtime"));
}

// An LLMInferenceService merges the LLMInferenceServiceConfig presets its
// spec.baseRefs name under its own spec, template and worker included: their
// scheduling fields fill what the service leaves unset.
void Walker::openToBaseConfigs(PodSite& site) const {
  if (!ownerIs("LLMInferenceService", "serving.kserve.io/")) return;
  const json* spec = memberOf(ownerObject(), "spec");
  const json* baseRefs = memberOf(spec, "baseRefs");
  if (!baseRefs || !baseRefs->is_array() || baseRefs->empty()) return;
  openPlacementToRuntime(site, chain[ownerChainIndex].path->toFieldPath().field("spec").field("baseRefs"));
}

}  // namespace gpuguard::pods
