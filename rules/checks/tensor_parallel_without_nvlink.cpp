// tensor-parallel-without-nvlink: tensor parallelism on nodes whose GPUs have
// no NVLink.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "rules/checks/checks.h"
#include "rules/serving/launch.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

constexpr RuleDoc kDoc{
    .id = "tensor-parallel-without-nvlink",
    .defaultSeverity = Severity::Warning,
    .summary = "Tensor parallelism over GPUs that have no NVLink (L4, L40S, T4, A10G...).",
    .description =
        "Tensor parallelism splits every layer across GPUs and all-reduces activations after each one; without "
        "NVLink that traffic crosses PCIe, and throughput often ends up below a single GPU's. vLLM's docs "
        "recommend pipeline parallelism on GPUs without NVLink (the L40S is their example). The rule fires when "
        "tensor parallelism > 1 (vLLM --tensor-parallel-size, SGLang --tp-size, TGI --num-shard) meets a node "
        "selection that only admits PCIe-only GPUs: every ORed required term (with nodeSelector) restricts the "
        "GPU model to cards that have no NVLink at all: T4, A2, A10, A10G, A16, L4, L40, L40S, RTX 4090, RTX 6000 "
        "Ada, RTX PRO 6000 and RTX PRO 4500 Blackwell (PCIe Gen5, no NVLink), V100 PCIe, P4. The GPU model is read from nvidia.com/gpu.product (GFD), "
        "cloud.google.com/gke-accelerator (nvidia-l4, nvidia-tesla-t4, nvidia-tesla-p4), "
        "karpenter.k8s.aws/instance-gpu-name (t4, a10g, l4, l40s), and instance types whose GPU is certain: AWS "
        "g4dn (T4), g5 (A10G), g5g (T4G), g6 (L4), g6e (L40S), g7e (RTX PRO 6000 Blackwell), g7 (RTX PRO 4500 "
        "Blackwell), also with SageMaker's ml. prefix, and GCP g2 (L4) and g4 (RTX PRO 6000 Blackwell). Cards that take an optional 2-way NVLink bridge (A100 PCIe, H100 PCIe, H100 NVL, A30, A40, RTX "
        "A6000) are never reported: whether a bridge is fitted is not in any label. GFD does not label NVLink.",
    .remediation =
        "Use pipeline parallelism across the GPUs instead (vLLM: --tensor-parallel-size 1 "
        "--pipeline-parallel-size N; SGLang: --tp-size 1 --pp-size N), or select GPUs with NVLink (A100/H100 "
        "SXM) for tensor parallelism.",
    .wrongExample =
        "spec:\n  nodeSelector:\n    cloud.google.com/gke-accelerator: nvidia-l4\n"
        "  containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.8.5\n"
        "    args: [\"--model=google/gemma-2-27b-it\", \"--tensor-parallel-size=2\"]\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 2\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    cloud.google.com/gke-accelerator: nvidia-l4\n"
        "  containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.8.5\n"
        "    args: [\"--model=google/gemma-2-27b-it\", \"--tensor-parallel-size=1\", "
        "\"--pipeline-parallel-size=2\"]\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 2\n",
};

// The PCIe-only GPU a label value names, or "" when it names something else
// (or we are not sure).
std::string pcieOnlyGpu(std::string_view key, std::string_view value) {
  if (key == "nvidia.com/gpu.product") {
    if (value.find("-MIG-") != std::string_view::npos) return "";
    if (value.ends_with("-SHARED")) value.remove_suffix(7);
    for (std::string_view prefix : {"NVIDIA-", "Tesla-"}) {
      if (value.starts_with(prefix)) {
        value.remove_prefix(prefix.size());
        break;
      }
    }
    static constexpr std::array<std::string_view, 12> kExact{
        "T4", "A2", "A10", "A10G", "A16", "L4", "L40", "L40S", "P4", "T4G", "GeForce-RTX-4090",
        "RTX-6000-Ada-Generation"};
    if (std::find(kExact.begin(), kExact.end(), value) != kExact.end()) return std::string(value);
    for (std::string_view family : {"V100-PCIE", "RTX-PRO-6000-Blackwell", "RTX-PRO-4500-Blackwell"}) {
      if (value.starts_with(family)) return std::string(value);
    }
    return "";
  }
  if (key == "cloud.google.com/gke-accelerator") {
    if (value == "nvidia-l4") return "L4";
    if (value == "nvidia-tesla-t4") return "T4";
    if (value == "nvidia-tesla-p4") return "P4";
    return "";
  }
  if (key == "karpenter.k8s.aws/instance-gpu-name") {
    if (value == "t4") return "T4";
    if (value == "a10g") return "A10G";
    if (value == "l4") return "L4";
    if (value == "l40s") return "L40S";
    return "";
  }
  if (key == "node.kubernetes.io/instance-type" || key == "beta.kubernetes.io/instance-type") {
    if (value.starts_with("ml.")) value.remove_prefix(3);  // SageMaker HyperPod
    if (value.starts_with("g2-")) return "L4";             // GCP G2
    if (value.starts_with("g4-")) return "RTX PRO 6000 Blackwell";  // GCP G4
    const std::string_view family = value.substr(0, value.find('.'));
    if (family.size() == value.size()) return "";
    if (family == "g4dn") return "T4";
    if (family == "g5") return "A10G";
    if (family == "g5g") return "T4G";
    if (family == "g6") return "L4";
    if (family == "g6e") return "L40S";
    if (family == "g7e") return "RTX PRO 6000 Blackwell";
    if (family == "g7") return "RTX PRO 4500 Blackwell";
    return "";
  }
  return "";
}

struct PcieEvidence {
  std::string gpus;      // "L4" or "L4, T4"
  std::string evidence;  // describeRequirement(...)
};

// A term is PCIe-only when one of its requirements admits PCIe-only GPU models alone.
std::optional<PcieEvidence> pcieOnlyTerm(const NodeTerm& term) {
  for (const NodeRequirement& r : term.requirements) {
    if (r.op != "In" || r.values.empty()) continue;
    std::string gpus;
    bool all = true;
    for (const std::string& v : r.values) {
      const std::string gpu = pcieOnlyGpu(r.key, v);
      if (gpu.empty()) {
        all = false;
        break;
      }
      if (gpus.find(gpu) == std::string::npos) gpus += (gpus.empty() ? "" : ", ") + gpu;
    }
    if (all) return PcieEvidence{gpus, describeRequirement(r, term)};
  }
  return std::nullopt;
}

class TensorParallelWithoutNvlink final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      std::optional<PcieEvidence> pcie;
      bool decided = false, allPcie = true;
      for (const NodeTerm& term : nodeSelectionTerms(site)) {
        if (term.matchesNothing) continue;
        auto e = pcieOnlyTerm(term);
        decided = true;
        if (!e) {
          allPcie = false;
          break;
        }
        if (!pcie) pcie = e;
      }
      if (!decided || !allPcie || !pcie) continue;

      for (const ContainerRef& c : site.containers) {
        if (c.kind == ContainerKind::Ephemeral || c.kind == ContainerKind::Init) continue;
        const auto launch = findServingLaunch(c);
        if (!launch || launch->engine == ServingEngine::Torchrun) continue;  // torchrun states no tensor parallelism
        const ParallelFlag& flag = launch->engine == ServingEngine::Tgi ? launch->numShard : launch->tensor;
        if (!flag.value || *flag.value < 2) continue;
        const long long tp = *flag.value;
        const std::string shown = renderValue(json(flag.text));
        std::string advice;
        switch (launch->engine) {
          case ServingEngine::Vllm:
            advice = "prefer pipeline parallelism (--tensor-parallel-size 1 --pipeline-parallel-size " +
                     std::to_string(tp) + "), or GPUs with NVLink (A100/H100 SXM) for tensor parallelism";
            break;
          case ServingEngine::SGLang:
            advice = "prefer pipeline parallelism (--tp-size 1 --pp-size " + std::to_string(tp) +
                     "), or GPUs with NVLink (A100/H100 SXM) for tensor parallelism";
            break;
          case ServingEngine::Tgi:
            advice = "TGI has no pipeline parallelism: prefer GPUs with NVLink (A100/H100 SXM), or a model (or "
                     "quantisation) that fits on fewer GPUs";
            break;
          case ServingEngine::Torchrun:
            continue;
        }
        // The value, then where it came from when it is an environment variable.
        const std::string envNote = flag.name.starts_with("-") ? "" : " (" + flag.name + ")";
        out.report(flag.path,
                   FieldError::invalid(shown + envNote,
                                       "tensor parallelism over " + std::to_string(tp) + " " + pcie->gpus + " GPUs (" +
                                           pcie->evidence +
                                           "), which have no NVLink, so every layer's all-reduce crosses PCIe and "
                                           "throughput suffers; " + advice),
                   shown);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeTensorParallelWithoutNvlink() { return std::make_unique<TensorParallelWithoutNvlink>(); }

}  // namespace gpuguard::checks
