#include "rules/support/toleration_near_miss.h"

#include <optional>
#include <vector>

#include "rules/support/k8s_objects.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/taints.h"
#include "text/edit_distance.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// A key the author meant as the taint's: only letter case apart, or a few
// edits on a key long enough that they are typos, not another name.
std::optional<std::string> keyMiss(const std::string& key, const Taint& taint) {
  if (key.empty() || key == taint.key) return std::nullopt;  // empty: every key
  if (lowercase(key) == lowercase(taint.key)) {
    return "the key " + key + " is not " + taint.key + " (keys are case-sensitive)";
  }
  const std::size_t distance = text::editDistance(key, taint.key);
  if (distance == 0 || distance > 3 || distance * 4 > taint.key.size()) return std::nullopt;
  return "the key " + key + " is not " + taint.key;
}

// What keeps `t` from tolerating `taint`, one reason per difference; nullopt
// when its key is unrelated to the taint's (no near miss at all).
std::optional<std::vector<std::string>> misses(const json& t, const Taint& taint) {
  std::vector<std::string> why;
  if (const auto key = keyMiss(stringOr(t, "key"), taint)) {
    why.push_back(*key);
  } else if (!stringOr(t, "key").empty() && stringOr(t, "key") != taint.key) {
    return std::nullopt;
  }
  const std::string effect = stringOr(t, "effect");
  if (!effect.empty() && effect != taint.effect) {
    why.push_back("it tolerates the effect " + effect + ", not " + taint.effect + " (leave effect out, or write " +
                  taint.effect + ")");
  }
  const std::string op = stringOr(t, "operator");
  const std::string value = stringOr(t, "value");
  if (op.empty() || op == "Equal") {
    if (!taint.value) {
      why.push_back("operator " + (op.empty() ? std::string("Equal (the default)") : op) + " with value \"" + value +
                    "\" matches one taint value, and the policy's gpuTaints leave the GPU nodes' value open (only "
                    "operator Exists tolerates every value)");
    } else if (value != *taint.value) {
      why.push_back("operator " + (op.empty() ? std::string("Equal (the default)") : op) + " with value \"" + value +
                    "\" does not match the taint's value \"" + *taint.value + "\"");
    }
  } else if (op != "Exists") {
    why.push_back("the operator \"" + op + "\" is neither Exists nor Equal, and tolerates nothing");
  }
  return why;
}

// A toleration that would match, written inside a container of the pod.
std::string insideContainer(const PodSite& site, const Taint& taint) {
  if (site.misplaced.tolerations.value) return "";  // misplacedNote names it
  for (const ContainerRef& c : site.containers) {
    const json* list = arrayAt(*c.container, "tolerations");
    if (!list) continue;
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (!toleratesTaint((*list)[i], taint)) continue;
      return "; the closest is " + c.path.field("tolerations").index(i).apiPath() + " " + renderValue((*list)[i]) +
             ": it would match, but a container has no tolerations field (kubectl's strict field validation "
             "rejects it, and otherwise it is dropped): move it to " + site.tolerations.path.apiPath();
    }
  }
  return "";
}

}  // namespace

std::string nearMissNote(const PodSite& site, const Taint& taint) {
  const json* list = site.tolerations.value && site.tolerations.value->is_array() ? site.tolerations.value : nullptr;
  std::optional<std::size_t> best;
  std::vector<std::string> bestWhy;
  for (std::size_t i = 0; list && i < list->size(); ++i) {
    if (!(*list)[i].is_object()) continue;
    std::optional<std::vector<std::string>> why = misses((*list)[i], taint);
    if (!why || why->empty()) continue;
    if (!best || why->size() < bestWhy.size()) {
      best = i;
      bestWhy = std::move(*why);
    }
  }
  if (!best) return insideContainer(site, taint);
  return "; the closest is " + site.tolerations.path.index(*best).apiPath() + " " + renderValue((*list)[*best]) +
         ": " + joined(bestWhy, ", and ");
}

}  // namespace gpuguard::checks
