#include "rules/support/gpu_operator_config.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "rules/k8s/go_strconv.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/taints.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {

using nlohmann::json;

void checkClusterPolicy(const CheckContext& ctx, const json& object, const FieldPath& base, Reporter& out) {
  if (stringOr(object, "kind") != "ClusterPolicy" || !stringOr(object, "apiVersion").starts_with("nvidia.com/")) return;
  const json* spec = objectAt(object, "spec");
  const json* daemonsets = spec ? objectAt(*spec, "daemonsets") : nullptr;
  const json* tolerations = daemonsets ? arrayAt(*daemonsets, "tolerations") : nullptr;
  // An empty or absent list leaves the operands' own (the chart default
  // tolerates nvidia.com/gpu:NoSchedule); a set one replaces them all.
  if (!tolerations || tolerations->empty()) return;
  for (const Taint& taint : ctx.policy.gpuTaints) {
    if (taint.effect == "PreferNoSchedule") continue;
    bool tolerated = false;
    for (const json& t : *tolerations) tolerated = tolerated || toleratesTaint(t, taint);
    if (tolerated) continue;
    out.report(base.field("spec").field("daemonsets").field("tolerations"),
               FieldError::required("spec.daemonsets.tolerations replaces the tolerations of every GPU Operator "
                                    "operand DaemonSet (driver, container toolkit, device plugin, GPU Feature "
                                    "Discovery, DCGM exporter, MIG manager, validator), and this list does not "
                                    "tolerate the GPU node taint " + describeTaint(taint) +
                                    ", so none of them runs on the tainted GPU nodes: no driver, no nvidia.com/gpu; "
                                    "add {key: " + taint.key + ", operator: Exists, effect: " + taint.effect +
                                    "} (the chart's default)"));
  }
}

namespace {

// "  replicas: 1" -> 1; nullopt for any other line.
std::optional<long long> replicasOn(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t-");
  if (i == std::string_view::npos || line.substr(i, 9) != "replicas:") return std::nullopt;
  std::string_view rest = line.substr(i + 9);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) rest.remove_suffix(1);
  if (const std::size_t hash = rest.find(" #"); hash != std::string_view::npos) rest = rest.substr(0, hash);
  return parseGoInt(rest);
}

}  // namespace

void checkSharingConfigMap(const json& object, const FieldPath& base, Reporter& out) {
  if (stringOr(object, "kind") != "ConfigMap") return;
  const json* data = objectAt(object, "data");
  if (!data) return;
  for (const auto& [key, value] : data->items()) {
    if (!value.is_string()) continue;
    const std::string& text = value.get_ref<const std::string&>();
    if (text.find("sharing:") == std::string::npos ||
        (text.find("timeSlicing:") == std::string::npos && text.find(" mps:") == std::string::npos &&
         text.find("\nmps:") == std::string::npos)) {
      continue;
    }
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::optional<long long> replicas = replicasOn(std::string_view(text).substr(start, end - start));
      if (replicas && *replicas < 2) {
        out.report(base.field("data").key(key),
                   FieldError::invalid(std::to_string(*replicas),
                                       "a device plugin sharing config (timeSlicing or mps) with replicas: " +
                                           std::to_string(*replicas) +
                                           ": the plugin refuses it (\"number of replicas must be >= 2\") and "
                                           "advertises no GPUs on the nodes that use it; set replicas to 2 or "
                                           "more, or drop the sharing section to give whole GPUs"),
                   std::to_string(*replicas));
        break;
      }
      start = end + 1;
    }
  }
}

}  // namespace gpuguard::checks
