// gpu-count-exceeds-node: one pod asking for more GPUs than any node holds.
#include <algorithm>
#include <optional>

#include "rules/checks/checks.h"
#include "rules/semantics.h"

namespace gpuguard::checks {
namespace {

constexpr RuleDoc kDoc{
    .id = "gpu-count-exceeds-node",
    .defaultSeverity = Severity::Warning,
    .summary = "A pod that asks for more whole GPUs than any node holds (policy maxGpusPerNode, default 8).",
    .description =
        "A pod runs on one node, so it can never get more GPUs than a node has: it stays Pending with "
        "\"Insufficient nvidia.com/gpu\", and a cluster autoscaler finds no node group that fits. The count is "
        "the pod's effective request as the scheduler computes it (component-helpers PodRequests): the larger "
        "of the sum over app containers and restartable init containers (sidecars), and the peak of the init "
        "phase, where each init container runs beside the sidecars declared before it. Each whole-GPU resource "
        "of the policy's gpuResources is counted on its own; MIG slices (nvidia.com/mig-*) and time-sliced "
        "*.shared resources are not, since a node advertises many of them per GPU. The largest nodes have 8 "
        "GPUs (p5, a3-highgpu-8g, ND H100 v5; GB200 NVL72 nodes have 4), hence the default; clusters whose "
        "device plugin replicates nvidia.com/gpu by time-slicing without renaming can advertise more and should "
        "raise maxGpusPerNode.",
    .remediation =
        "Ask for at most maxGpusPerNode GPUs per pod and spread the work over several pods (a multi-node "
        "PyTorchJob, JobSet, LeaderWorkerSet or RayCluster with more workers), or set maxGpusPerNode in the "
        "policy if your nodes hold more GPUs.",
    .wrongExample = "resources:\n  limits:\n    nvidia.com/gpu: 16\n",
    .rightExample =
        "# two pods of 8 GPUs each, e.g. a PyTorchJob with 2 workers\nresources:\n  limits:\n    nvidia.com/gpu: 8\n",
};

// Whole GPUs: a policy GPU resource that is neither a MIG slice nor shared.
bool isWholeGpu(const Policy& policy, std::string_view name) {
  return policy.isGpuResource(name) && name.find("/mig-") == std::string_view::npos && !name.ends_with(".shared");
}

// "containers[1]" for a container of the site (its path below the pod spec).
std::string shortName(const PodSite& site, const ContainerRef& c) {
  const std::string spec = site.specPath.apiPath();
  std::string path = c.path.apiPath();
  if (!spec.empty() && path.starts_with(spec + ".")) path.erase(0, spec.size() + 1);
  return path;
}

class GpuCountExceedsNode final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    const auto wholeGpu = [&](std::string_view name) { return isWholeGpu(ctx.policy, name); };
    for (const PodSite& site : ctx.sites) {
      for (const ResourceUnits& u : podRequestUnitsByName(site, wholeGpu)) {
        if (u.units > ctx.policy.maxGpusPerNode) report(site, u.name, u.units, ctx.policy, out);
      }
    }
  }

 private:
  static void report(const PodSite& site, const std::string& name, long long total, const Policy& policy,
                     Reporter& out) {
    // Report on the biggest request: the line to change.
    std::optional<FieldPath> biggest;
    long long biggestUnits = 0;
    std::string parts;
    int contributors = 0;
    for (const ContainerRef& c : site.containers) {
      if (c.kind == ContainerKind::Ephemeral) continue;
      const ContainerResources& r = resourcesOf(c, false);
      const long long n = requestedUnits(r, name);
      if (n <= 0) continue;
      ++contributors;
      parts += (parts.empty() ? "" : ", ") + shortName(site, c) + ": " + std::to_string(n);
      if (n > biggestUnits) {
        biggestUnits = n;
        biggest = (r.limit(name) ? r.limit(name) : r.request(name))->path;
      }
    }
    if (!biggest) return;
    std::string detail = "the pod needs " + std::to_string(total) + " " + name + " at once";
    if (contributors > 1) detail += " (" + parts + ")";
    detail += ", more than any node holds (policy maxGpusPerNode: " + std::to_string(policy.maxGpusPerNode) +
               "), so it stays Pending with \"Insufficient " + name + "\"; ask for at most " +
               std::to_string(policy.maxGpusPerNode) +
               " per pod and spread the work over more pods, or raise maxGpusPerNode if your nodes hold more";
    out.report(*biggest, FieldError::invalid(std::to_string(total), detail), std::to_string(total));
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuCountExceedsNode() { return std::make_unique<GpuCountExceedsNode>(); }

}  // namespace gpuguard::checks
