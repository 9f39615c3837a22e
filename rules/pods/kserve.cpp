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

}  // namespace gpuguard::pods
