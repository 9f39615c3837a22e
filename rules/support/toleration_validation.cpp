#include "rules/support/toleration_validation.h"

#include <vector>

#include "rules/support/k8s_objects.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/names.h"
#include "rules/k8s/taints.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// What happens to a toleration ValidateTolerations rejects.
constexpr std::string_view kRejected =
    "the API server rejects the pod (inside a custom resource or a StatefulSet: the pods its controller creates), "
    "so it never reaches a GPU node";

// A toleration that can tolerate a GPU taint: its key, or an empty key (every key).
bool concernsGpuTaint(const std::string& key, const Policy& policy) {
  if (key.empty()) return !policy.gpuTaints.empty();
  for (const Taint& taint : policy.gpuTaints) {
    if (taint.key == key) return true;
  }
  return false;
}

// "spec.template.spec.tolerations" -> the Go decoder's field path, which has
// no list indexes ("spec.workerGroupSpecs.template.spec.tolerations").
std::string goFieldPath(const FieldPath& path) {
  std::string out;
  bool inIndex = false;
  for (char c : path.apiPath()) {
    if (c == '[') inIndex = true;
    else if (c == ']') inIndex = false;
    else if (!inIndex) out += c;
  }
  return out;
}

// tolerationSeconds is an *int64: what the decoder says of anything else.
std::optional<std::string> notAnInt64(const json& v) {
  if (v.is_null() || v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned()) return "number " + v.dump();  // beyond int64
  if (v.is_number_float()) {
    // YAML 300.0 reaches the API server as 300 (kubectl converts through float64).
    const double d = v.get<double>();
    if (d == static_cast<double>(static_cast<long long>(d))) return std::nullopt;
    return "number " + renderValue(v);
  }
  if (v.is_string()) return std::string("string");
  if (v.is_boolean()) return std::string("bool");
  return v.is_array() ? std::string("array") : std::string("object");
}

// Reports through `out`, each finding with a fix of no edits that says why
// (--fix prints it as "not fixed: ...").
class NoAutomaticFix final : public Reporter {
 public:
  NoAutomaticFix(Reporter& out, std::string why) : out_(out), why_(std::move(why)) {}
  void report(const FieldPath& path, FieldError error, std::string value) override {
    out_.reportFixable(path, std::move(error), std::move(value), Fix{why_, {}});
  }
  void reportFixable(const FieldPath& path, FieldError error, std::string value, Fix fix) override {
    out_.reportFixable(path, std::move(error), std::move(value), std::move(fix));
  }

 private:
  Reporter& out_;
  std::string why_;
};

// The API server's own words (ValidateTolerations, reference §6.3).
void reportUnsupportedOperator(const FieldPath& path, const std::string& op, Reporter& out) {
  std::string advice = "write operator: Exists (tolerates every value of the key) or Equal with the taint's value";
  if (lowercase(op) == "exists" || lowercase(op) == "equal") advice = "operators are case-sensitive: " + advice;
  if (op == "Lt" || op == "Gt") {
    advice = "Lt and Gt need the alpha feature gate TaintTolerationComparisonOperators, off by default; " + advice;
  }
  out.report(path.field("operator"),
             FieldError::notSupported(renderValue(json(op)), "supported values: \"Equal\", \"Exists\"; " +
                                                                 std::string(kRejected) + "; " + advice),
             renderValue(json(op)));
}

void reportUnsupportedEffect(const FieldPath& path, const std::string& effect, Reporter& out) {
  out.report(path.field("effect"),
             FieldError::notSupported(renderValue(json(effect)),
                                      "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"; " +
                                          std::string(kRejected) +
                                          "; write the GPU taint's effect exactly (NoSchedule), or leave effect "
                                          "out to tolerate every effect"),
             renderValue(json(effect)));
}

void checkOperatorAndValue(const json& t, const FieldPath& path, const std::string& op,
                                  const std::string& value, Reporter& out) {
  if (op == "Exists" && !value.empty()) {
    // The API server shows the whole toleration as the invalid value.
    out.report(path.field("operator"),
               FieldError::invalid(renderValue(t),
                                   "value must be empty when `operator` is 'Exists'; " + std::string(kRejected) +
                                       "; remove value: " + renderValue(json(value)) +
                                       " (Exists tolerates every value of the key)"),
               renderValue(t));
    return;
  }
  if (op != "Equal" && !op.empty()) return;  // other operators tolerate nothing: the Required finding says so
  const std::vector<std::string> errors = labelValueErrors(value);
  if (errors.empty()) return;
  const std::string message = joined(errors, ";");  // ValidateTolerations joins with ";"
  out.report(path.field("operator"),
             FieldError::invalid(renderValue(json(value)),
                                 message + "; " + std::string(kRejected) +
                                     "; write the taint's value exactly, or use operator: Exists without a value"),
             renderValue(json(value)));
}

void checkSeconds(const json& seconds, const FieldPath& path, const FieldPath& listPath, Reporter& out) {
  const std::optional<std::string> got = notAnInt64(seconds);
  if (!got) return;
  std::string fix = "write a whole number of seconds, unquoted";
  if (seconds.is_string()) {
    if (const auto n = parseGoInt(seconds.get_ref<const std::string&>())) {
      fix = "write tolerationSeconds: " + std::to_string(*n) + ", unquoted";
    }
  }
  out.report(path,
             FieldError::invalid(renderValue(seconds),
                                 "json: cannot unmarshal " + *got + " into Go struct field Toleration." +
                                     goFieldPath(listPath) +
                                     ".tolerationSeconds of type int64; the API server cannot decode the object "
                                     "(inside a custom resource: the pods its controller creates); " + fix),
             renderValue(seconds));
}

// ValidateTolerations, in its order, for a toleration of a GPU taint.
void checkToleration(const json& t, const FieldPath& listPath, std::size_t i, const Policy& policy,
                            Reporter& out) {
  const auto key = tolerationField(t, "key");
  const auto op = tolerationField(t, "operator");
  const auto value = tolerationField(t, "value");
  const auto effect = tolerationField(t, "effect");
  if (!key || !op || !value || !effect || !concernsGpuTaint(*key, policy)) return;
  const FieldPath path = listPath.index(i);
  const auto seconds = t.find("tolerationSeconds");
  const bool secondsSet = seconds != t.end() && !seconds->is_null();

  if (key->empty() && *op != "Exists") {
    out.report(path.field("operator"),
               FieldError::invalid(renderValue(json(*op)),
                                   "operator must be Exists when `key` is empty, which means \"match all "
                                       "values and all keys\"; " + std::string(kRejected) +
                                       "; write operator: Exists without a value to tolerate every taint, or "
                                       "key: " + policy.gpuTaints.front().key + " to tolerate the GPU taint"),
               renderValue(json(*op)));
  }
  if (secondsSet && *effect != "NoExecute") {
    out.report(path.field("effect"),
               FieldError::invalid(renderValue(json(*effect)),
                                   "effect must be 'NoExecute' when `tolerationSeconds` is set; " +
                                       std::string(kRejected) +
                                       "; remove tolerationSeconds (it only limits how long a NoExecute taint is "
                                       "tolerated before eviction)"),
               renderValue(json(*effect)));
  }
  if (!supportedTolerationOperator(*op)) reportUnsupportedOperator(path, *op, out);
  checkOperatorAndValue(t, path, *op, *value, out);
  if (!supportedTolerationEffect(*effect)) reportUnsupportedEffect(path, *effect, out);
  if (secondsSet) checkSeconds(*seconds, path.field("tolerationSeconds"), listPath, out);
}

}  // namespace

// A string field as the API server decodes it: absent and null are "";
// nullopt for another type (a decode error, not this rule's business).
std::optional<std::string> tolerationField(const json& t, std::string_view name) {
  auto it = t.find(name);
  if (it == t.end() || it->is_null()) return std::string();
  if (!it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// The operators and effects ValidateTolerations accepts. Lt and Gt need the
// alpha gate TaintTolerationComparisonOperators, off on a default 1.37 API
// server (reference §15.2), which then lists only Equal and Exists.
bool supportedTolerationOperator(const std::string& op) { return op.empty() || op == "Equal" || op == "Exists"; }
bool supportedTolerationEffect(const std::string& effect) {
  return effect.empty() || effect == "NoSchedule" || effect == "PreferNoSchedule" || effect == "NoExecute";
}

void checkGpuTolerations(const PodSite& site, const Policy& policy, Reporter& out) {
  const json* tolerations = site.tolerations.value;
  if (!tolerations || !tolerations->is_array()) return;
  NoAutomaticFix rejected(out, "a toleration the API server rejects: which edit was meant is a guess; fix it by hand");
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const json& t = (*tolerations)[i];
    if (t.is_object()) checkToleration(t, site.tolerations.path, i, policy, rejected);
  }
}

}  // namespace gpuguard::checks
