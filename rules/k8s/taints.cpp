#include "rules/k8s/taints.h"

#include <algorithm>
#include <iterator>
#include <string_view>

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

std::optional<Toleration> readToleration(const json& toleration) {
  if (!toleration.is_object()) return std::nullopt;
  return Toleration{stringOr(toleration, "key"), stringOr(toleration, "operator"), stringOr(toleration, "value"),
                    stringOr(toleration, "effect")};
}

namespace {

enum class Field { Key, Operator, Value, Effect };

// Toleration.ToleratesTaint over a toleration's fields, each read only when
// needed: most tolerations of a pod already fail on the effect or the key.
template <typename Read>
bool tolerates(const Read& read, const Taint& taint) {
  if (const auto effect = read(Field::Effect); !effect.empty() && effect != taint.effect) return false;
  if (const auto key = read(Field::Key); !key.empty() && key != taint.key) return false;
  const auto op = read(Field::Operator);
  if (op == "Exists") return true;
  if (op.empty() || op == "Equal") return taint.value && read(Field::Value) == *taint.value;
  if ((op == "Lt" || op == "Gt") && taint.value) {
    // Kubernetes >= 1.35 (alpha gate): canonical decimal integers on both sides.
    auto t = parseCanonicalInt(*taint.value), v = parseCanonicalInt(std::string(read(Field::Value)));
    if (!t || !v) return false;
    return op == "Lt" ? *t < *v : *t > *v;
  }
  return false;
}

}  // namespace

bool toleratesTaint(const Toleration& toleration, const Taint& taint) {
  return tolerates(
      [&](Field f) -> std::string_view {
        switch (f) {
          case Field::Key: return toleration.key;
          case Field::Operator: return toleration.op;
          case Field::Value: return toleration.value;
          case Field::Effect: return toleration.effect;
        }
        return {};
      },
      taint);
}

bool toleratesTaint(const json& toleration, const Taint& taint) {
  if (!toleration.is_object()) return false;
  return tolerates(
      [&](Field f) -> std::string_view {
        static constexpr const char* kNames[] = {"key", "operator", "value", "effect"};
        const std::string* s = stringAt(toleration, kNames[static_cast<int>(f)]);
        return s ? std::string_view(*s) : std::string_view();
      },
      taint);
}

bool isNodeLifecycleTaint(const Taint& taint) {
  static constexpr std::string_view kPrefixes[] = {"node.kubernetes.io/", "node.cloudprovider.kubernetes.io/",
                                                   "karpenter.sh/", "ToBeDeletedByClusterAutoscaler",
                                                   "DeletionCandidateOfClusterAutoscaler"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view p) { return taint.key.starts_with(p); });
}

std::string describeTaint(const Taint& taint) {
  const std::string value = taint.value.value_or("");
  return taint.key + (value.empty() ? "" : "=" + value) + ":" + taint.effect;
}

}  // namespace gpuguard
