// KServe InferenceService predictors and Knative Serving, which KServe's
// Serverless mode runs on.
#include <algorithm>

#include "rules/k8s/go_strconv.h"
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

namespace {

// strings.TrimSpace, for the ASCII whitespace YAML leaves in a value.
std::string_view trimmed(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  const std::size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// A string member of an object; null when absent or of another type.
const std::string* stringMember(const json* object, std::string_view key) {
  if (!object || !object->is_object()) return nullptr;
  const auto it = object->find(key);
  return it != object->end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// The ResourceClaimTemplate KServe's controller creates from the exp-dra-*
// annotations (pkg/controller/v1alpha2/llmisvc/managed_dra.go
// expectedManagedDRATemplate, pkg/validation/managed_dra.go): one request
// "device" of exp-dra-device-class, exp-dra-device-count devices (strconv.Atoi
// of the trimmed value, 1 when absent or blank), each non-empty line of
// exp-dra-cel-selector a CEL selector. Written as a claimCreationSpec; null
// when KServe's webhook rejects the annotations (no class, a count below 1
// or not a number), so that no pod is made.
json managedDraPodClaim(const json* annotations) {
  const std::string* deviceClass = stringMember(annotations, "serving.kserve.io/exp-dra-device-class");
  if (!deviceClass || trimmed(*deviceClass).empty()) return nullptr;
  long long count = 1;
  if (const std::string* raw = stringMember(annotations, "serving.kserve.io/exp-dra-device-count");
      raw && !trimmed(*raw).empty()) {
    const std::optional<long long> parsed = parseGoInt(trimmed(*raw));
    if (!parsed || *parsed < 1) return nullptr;
    count = *parsed;
  }
  json cel = json::array();
  if (const std::string* raw = stringMember(annotations, "serving.kserve.io/exp-dra-cel-selector")) {
    std::string_view rest = *raw;
    while (!rest.empty()) {
      const std::size_t end = std::min(rest.find('\n'), rest.size());
      if (const std::string_view line = trimmed(rest.substr(0, end)); !line.empty()) cel.push_back(std::string(line));
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
  }
  json device = {{"name", "device"}, {"deviceClassName", std::string(trimmed(*deviceClass))}, {"count", count},
                 {"celExpressions", std::move(cel)}};
  return {{"name", "managed-device"}, {"claimCreationSpec", {{"devices", json::array({std::move(device)})}}}};
}

}  // namespace

// KServe's Managed DRA (injectManagedDRAIntoConfig): the controller adds a
// pod claim "managed-device" of its template <name>-managed-dra to every
// workload pod template of the merged config (spec.template, spec.worker,
// spec.prefill.template, spec.prefill.worker; not the router's scheduler)
// and lists it in the container exp-dra-container-name names, else the first
// container (none when the named one is absent).
void Walker::addManagedDraClaim(PodSite& site, const json& podSpec) const {
  if (!ownerIs("LLMInferenceService", "serving.kserve.io/")) return;
  const json* owner = ownerObject();
  const json* spec = memberOf(owner, "spec");
  const json* prefill = memberOf(spec, "prefill");
  const bool workload = &podSpec == memberOf(spec, "template") || &podSpec == memberOf(spec, "worker") ||
                        &podSpec == memberOf(prefill, "template") || &podSpec == memberOf(prefill, "worker");
  if (!workload) return;
  const json* annotations = memberOf(memberOf(owner, "metadata"), "annotations");
  json podClaim = managedDraPodClaim(annotations);
  if (podClaim.is_null()) return;
  std::string container;
  const std::string* named = stringMember(annotations, "serving.kserve.io/exp-dra-container-name");
  const json* containers = memberOf(&podSpec, "containers");
  if (containers && containers->is_array() && !containers->empty()) {
    const std::string want = named ? std::string(trimmed(*named)) : std::string();
    for (const json& c : *containers) {
      const std::string* name = stringMember(&c, "name");
      if (want.empty() || (name && *name == want)) {
        container = name ? *name : std::string();
        break;
      }
    }
  }
  const FieldPath path = chain[ownerChainIndex].path->toFieldPath().field("metadata").field("annotations").key(
      "serving.kserve.io/exp-dra-device-class");
  site.operatorClaim = std::make_shared<const OperatorClaim>(OperatorClaim{std::move(podClaim), path, container});
}

}  // namespace gpuguard::pods
