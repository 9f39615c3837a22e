#include "rules/k8s/taints.h"

#include "rules/k8s/go_strconv.h"
#include "rules/k8s/json_access.h"

namespace gpuguard {
namespace {

using nlohmann::json;

// A decimal integer written the one way strconv.FormatInt writes it: no "+",
// no leading zeros, no "-0".
std::optional<long long> parseCanonicalInt(const std::string& s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0') || s[0] == '+' || s == "-0") return std::nullopt;
  return parseGoInt(s);
}

}  // namespace

bool toleratesTaint(const json& toleration, const Taint& taint) {
  if (!toleration.is_object()) return false;
  const std::string effect = stringOr(toleration, "effect");
  if (!effect.empty() && effect != taint.effect) return false;
  const std::string key = stringOr(toleration, "key");
  if (!key.empty() && key != taint.key) return false;
  const std::string op = stringOr(toleration, "operator");
  if (op == "Exists") return true;
  if (op.empty() || op == "Equal") return taint.value && stringOr(toleration, "value") == *taint.value;
  if ((op == "Lt" || op == "Gt") && taint.value) {
    // Kubernetes >= 1.35 (alpha gate): canonical decimal integers on both sides.
    auto t = parseCanonicalInt(*taint.value), v = parseCanonicalInt(stringOr(toleration, "value"));
    if (!t || !v) return false;
    return op == "Lt" ? *t < *v : *t > *v;
  }
  return false;
}

std::string describeTaint(const Taint& taint) {
  const std::string value = taint.value.value_or("");
  return taint.key + (value.empty() ? "" : "=" + value) + ":" + taint.effect;
}

}  // namespace gpuguard
