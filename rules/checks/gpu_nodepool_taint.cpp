// gpu-nodepool-taint: a Karpenter NodePool that launches GPU nodes without
// the GPU taint, so any pod can land on them.
#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "rules/checks/checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/taints.h"
#include "rules/k8s/node_selection.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuTaints"};

constexpr RuleDoc kDoc{
    .id = "gpu-nodepool-taint",
    .defaultSeverity = Severity::Warning,
    .summary = "A Karpenter NodePool that selects GPU instances but does not taint its nodes with the GPU taint.",
    .description =
        "Karpenter (and EKS Auto Mode, which runs it for you) launches nodes from a NodePool's template; the "
        "template's taints are what keeps other pods off. A NodePool whose requirements select GPU instances but "
        "whose spec.template.spec.taints lack the GPU taint (the policy's gpuTaints, by default nvidia.com/gpu "
        "with effect NoSchedule, any value) lets every pod land on the expensive nodes, where they keep GPUs "
        "idle and block consolidation; GPU pods are expected to tolerate the taint (gpu-missing-toleration). "
        "startupTaints do not count: Karpenter expects them to be removed once the node is ready. GPU selection "
        "is recognised from requirements (operators In, Exists, Gt): karpenter.k8s.aws/ and eks.amazonaws.com/ "
        "instance-family with an NVIDIA family (p2, p3, p3dn, p4d, p4de, p5*, p6*, g3, g3s, g4dn, g5, g5g, g6, "
        "g6e, g6f, gr6, gr6f, g7e), instance-category p or g, instance-gpu-count (Exists, Gt >= 0, In > 0), "
        "instance-gpu-name, instance-gpu-manufacturer nvidia; karpenter.azure.com/sku-gpu-count, sku-gpu-name, "
        "sku-gpu-manufacturer nvidia and sku-family N*; node.kubernetes.io/instance-type with an AWS NVIDIA "
        "family, a GCE GPU machine family (a2-, a3-, a4-, a4x-, g2-, g4-) or an Azure N-series size "
        "(Standard_NC..., Standard_ND..., Standard_NV...; not the AMD ND MI300X, NGads V620 and NVv4 sizes); "
        "cloud.google.com/gke-accelerator; "
        "and nvidia.com/gpu* node labels. AMD-only selections (g4ad, manufacturer amd) are not reported. Kinds: "
        "karpenter.sh/v1 and v1beta1 NodePool (spec.template.spec) and the older v1alpha5 Provisioner (spec). "
        "DRA: Karpenter's scheduling simulation long ignored DRA ResourceClaims (kubernetes-sigs/karpenter: "
        "pods with DRA requirements are skipped, ignoreDRARequests), so a pod asking for GPUs through a "
        "resource claim may get no node launched at all; AWS documents DRA support from Karpenter 1.15 behind "
        "feature gates (alpha), and EKS Auto Mode first did not support DRA and later (Kubernetes 1.36+) ships "
        "the NVIDIA DRA driver and keeps the DRA driver and the device plugin from managing GPUs on the same "
        "node. These facts are not in gpuguard's reference and change with versions: check your Karpenter / "
        "Auto Mode release before relying on DRA for GPUs on Karpenter-provisioned nodes; the device plugin's "
        "nvidia.com/gpu with this taint is the conventional setup.",
    .remediation =
        "Add the GPU taint to the NodePool's template (spec.template.spec.taints: [{key: nvidia.com/gpu, "
        "effect: NoSchedule}]) and give GPU pods the matching toleration.",
    .wrongExample =
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
        "      requirements:\n      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}\n",
    .rightExample =
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
        "      requirements:\n      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6]}\n"
        "      taints:\n      - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}\n",
    .policyKeys = kPolicyKeys,
};

// AWS instance families with NVIDIA GPUs (g4ad is AMD, inf/trn are Neuron).
bool isAwsNvidiaFamily(std::string_view family) {
  constexpr std::array<std::string_view, 16> kFamilies{"p2",  "p3",  "p3dn", "p4d", "p4de", "g3",  "g3s", "g4dn",
                                                       "g5",  "g5g", "g6",   "g6e", "g6f",  "gr6", "gr6f", "g7e"};
  if (std::find(kFamilies.begin(), kFamilies.end(), family) != kFamilies.end()) return true;
  return family.starts_with("p5") || family.starts_with("p6");
}

// Azure's N-series VM sizes (Standard_NC24ads_A100_v4, Standard_ND96isr_H100_v5;
// reference §15.6), without the AMD ones (ND MI300X, NGads V620, NVv4).
bool isAzureNvidiaSize(std::string_view type) {
  const std::string lower = lowercase(type);
  if (!lower.starts_with("standard_n")) return false;
  if (lower.find("mi300") != std::string::npos || lower.find("v620") != std::string::npos) return false;
  return !(lower.starts_with("standard_nv") && lower.ends_with("as_v4"));
}

bool isGpuInstanceType(std::string_view type) {
  if (isAzureNvidiaSize(type)) return true;
  const std::size_t dot = type.find('.');
  if (dot != std::string_view::npos && isAwsNvidiaFamily(type.substr(0, dot))) return true;
  for (std::string_view prefix : {"a2-", "a3-", "a4-", "a4x-", "g2-", "g4-"}) {
    if (type.starts_with(prefix)) return true;
  }
  return false;
}

std::optional<long long> integer(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string afterDomain(std::string_view key, std::string_view domain) {
  return key.starts_with(domain) ? std::string(key.substr(domain.size())) : std::string();
}

// Does one requirement admit GPU instances (NVIDIA ones, where the vendor shows)?
bool selectsGpu(const json& requirement) {
  const std::string* keyPtr = stringAt(requirement, "key");
  const std::string* opPtr = stringAt(requirement, "operator");
  if (!keyPtr || !opPtr) return false;
  const std::string& key = *keyPtr;
  const std::string& op = *opPtr;
  std::vector<std::string> values;
  if (const json* vs = arrayAt(requirement, "values")) {
    for (const json& v : *vs) {
      if (v.is_string()) values.push_back(lowercase(v.get<std::string>()));
    }
  }
  auto anyValue = [&](auto&& pred) { return std::any_of(values.begin(), values.end(), pred); };
  const bool in = op == "In" && !values.empty();
  const bool exists = op == "Exists";

  std::string attribute = afterDomain(key, "karpenter.k8s.aws/");
  if (attribute.empty()) attribute = afterDomain(key, "eks.amazonaws.com/");
  if (!attribute.empty()) {
    if (attribute == "instance-family") return in && anyValue([](const std::string& v) { return isAwsNvidiaFamily(v); });
    if (attribute == "instance-category") {
      return in && anyValue([](const std::string& v) { return v == "p" || v == "g"; });
    }
    if (attribute == "instance-gpu-count") {
      if (exists) return true;
      if (op == "Gt" && values.size() == 1) return integer(values[0]).value_or(-1) >= 0;
      return in && anyValue([](const std::string& v) { return integer(v).value_or(0) > 0; });
    }
    if (attribute == "instance-gpu-name") return exists || in;
    if (attribute == "instance-gpu-manufacturer") {
      return exists || (in && anyValue([](const std::string& v) { return v == "nvidia"; }));
    }
    return false;
  }
  const std::string azure = afterDomain(key, "karpenter.azure.com/");
  if (!azure.empty()) {
    if (azure == "sku-gpu-count") {
      if (exists) return true;
      if (op == "Gt" && values.size() == 1) return integer(values[0]).value_or(-1) >= 0;
      return in && anyValue([](const std::string& v) { return integer(v).value_or(0) > 0; });
    }
    if (azure == "sku-gpu-name") return exists || in;
    if (azure == "sku-gpu-manufacturer") return exists || (in && anyValue([](const std::string& v) { return v == "nvidia"; }));
    if (azure == "sku-family") return in && anyValue([](const std::string& v) { return v.starts_with("n"); });
    return false;
  }
  if (key == "node.kubernetes.io/instance-type" || key == "beta.kubernetes.io/instance-type") {
    return in && anyValue([](const std::string& v) { return isGpuInstanceType(v); });
  }
  if (key == "cloud.google.com/gke-accelerator") return exists || in;
  if (key.starts_with("nvidia.com/gpu")) {
    return exists || (in && anyValue([](const std::string& v) { return v != "false"; }));
  }
  return false;
}

std::string describeRequirement(const json& r) {
  std::string out = (stringAt(r, "key") ? *stringAt(r, "key") : "") + " " +
                    (stringAt(r, "operator") ? *stringAt(r, "operator") : "");
  if (const json* vs = arrayAt(r, "values")) {
    std::string list;
    for (const json& v : *vs) list += (list.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
    out += " [" + list + "]";
  }
  return out;
}

bool hasTaint(const json* taints, const Taint& want) {
  if (!taints) return false;
  return std::any_of(taints->begin(), taints->end(), [&](const json& t) {
    const std::string* key = stringAt(t, "key");
    const std::string* effect = stringAt(t, "effect");
    const std::string* value = stringAt(t, "value");
    return key && *key == want.key && effect && *effect == want.effect &&
           (!want.value || (value ? *value : std::string()) == *want.value);
  });
}

class GpuNodepoolTaint final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    forEachObject(ctx.object, [&](const json& obj, const FieldPath& base) { checkPool(ctx, obj, base, out); });
  }

 private:
  static void checkPool(const CheckContext& ctx, const json& obj, const FieldPath& base, Reporter& out) {
    const std::string* kind = stringAt(obj, "kind");
    const std::string* apiVersion = stringAt(obj, "apiVersion");
    if (!kind || !apiVersion || !apiVersion->starts_with("karpenter.sh/")) return;
    const json* spec = objectAt(obj, "spec");
    if (!spec) return;
    const json* nodeSpec = nullptr;
    FieldPath nodePath = base.field("spec");
    if (*kind == "NodePool") {
      const json* tmpl = objectAt(*spec, "template");
      nodeSpec = tmpl ? objectAt(*tmpl, "spec") : nullptr;
      nodePath = nodePath.field("template").field("spec");
    } else if (*kind == "Provisioner") {
      nodeSpec = spec;
    }
    if (!nodeSpec) return;
    const json* requirements = arrayAt(*nodeSpec, "requirements");
    if (!requirements) return;
    std::string selection;  // every requirement that selects GPUs, for the message
    for (const json& r : *requirements) {
      if (selectsGpu(r)) selection += (selection.empty() ? "" : ", ") + describeRequirement(r);
    }
    if (selection.empty()) return;
    const json* taints = arrayAt(*nodeSpec, "taints");
    const json* startupTaints = arrayAt(*nodeSpec, "startupTaints");
    for (const Taint& taint : ctx.policy.gpuTaints) {
      if (hasTaint(taints, taint)) continue;
      std::string note;
      if (hasTaint(startupTaints, taint)) {
        note = " (it is only among startupTaints, which are removed once the node is ready)";
      }
      const std::string suggested = "{key: " + taint.key + (taint.value ? ", value: \"" + *taint.value + "\"" : "") +
                                    ", effect: " + taint.effect + "}";
      out.report(nodePath.field("taints"),
                 FieldError::required("this " + *kind + " launches GPU nodes (" + selection +
                                          ") but does not taint them " + describeTaint(taint) + note +
                                          ", so any pod can land on the expensive nodes; add " + suggested +
                                          " to taints and give GPU pods the matching toleration"));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuNodepoolTaint() { return std::make_unique<GpuNodepoolTaint>(); }

}  // namespace gpuguard::checks
