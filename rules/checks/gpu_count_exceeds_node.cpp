// gpu-count-exceeds-node: one pod asking for more GPUs than any node holds.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rules/checks/checks.h"
#include "rules/cluster_reach.h"
#include "rules/k8s/json_access.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_constraints.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 6> kPolicyKeys{"gpuResources", "draExtendedResources", "maxGpusPerNode", "assumeExtendedResourceToleration", "assumePodTolerationRestriction", "assumePodNodeSelector"};

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
        "raise maxGpusPerNode. GPUs from DRA count too: a deviceclass.resource.kubernetes.io/<class> resource of a "
        "whole-GPU DeviceClass on its own, like a GPU resource, and the resourceClaims of the pod together, all "
        "allocated on its node, when the input holds their templates (per request ExactCount's count, default 1; "
        "firstAvailable counts its smallest alternative; allocationMode All and MIG classes are not counted). "
        "With the cluster's facts (gpuguard-lint --facts or --cluster, the webhook's watched cache) the limit is "
        "the largest status.allocatable of the resource among the nodes the pod can reach (nodeSelector, "
        "required node affinity, tolerations against taints) and the GPUs per node of the Karpenter NodePools it "
        "can reach (karpenter.k8s.aws/instance-gpu-count, spec.limits; maxGpusPerNode when a pool does not "
        "say), instead of maxGpusPerNode; the finding names those nodes. Without them, a node selection that "
        "states the nodes' GPU count replaces maxGpusPerNode, in both directions: nvidia.com/gpu.count (GFD), "
        "karpenter.k8s.aws/instance-gpu-count or eks.amazonaws.com/instance-gpu-count (In: the largest value; "
        "Lt N: N - 1), or an instance type whose count is certain in node.kubernetes.io/instance-type "
        "(Google Cloud a2-/a3- machine types name it, a2-megagpu-16g holds 16; p4d.24xlarge, p5.48xlarge hold 8), "
        "or a GKE accelerator in cloud.google.com/gke-accelerator (Compute Engine's largest machine for it: "
        "nvidia-tesla-a100 16, nvidia-gb200 4, nvidia-tesla-t4, -p4 and -p100 4, the other current ones 8); "
        "the largest over the ORed terms, each term bounded by its smallest requirement.",
    .remediation =
        "Ask for at most maxGpusPerNode GPUs per pod and spread the work over several pods (a multi-node "
        "PyTorchJob, JobSet, LeaderWorkerSet or RayCluster with more workers), or set maxGpusPerNode in the "
        "policy if your nodes hold more GPUs.",
    .wrongExample = "resources:\n  limits:\n    nvidia.com/gpu: 16\n",
    .rightExample =
        "# two pods of 8 GPUs each, e.g. a PyTorchJob with 2 workers\nresources:\n  limits:\n    nvidia.com/gpu: 8\n",
    .policyKeys = kPolicyKeys,
    .withoutFacts = "the policy's maxGpusPerNode",
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

// GPUs per node of the instance types whose count is certain: Google Cloud
// names it in the machine type (a2-highgpu-4g: 4, a2-megagpu-16g: 16,
// reference §15.6); the AWS 8-GPU sizes.
std::optional<long long> instanceTypeGpus(const std::string& type) {
  for (std::string_view family : {"a2-highgpu-", "a2-megagpu-", "a2-ultragpu-", "a3-highgpu-", "a3-megagpu-",
                                  "a3-ultragpu-"}) {
    if (!type.starts_with(family) || !type.ends_with("g")) continue;
    const std::string digits = type.substr(family.size(), type.size() - family.size() - 1);
    if (isCanonicalUnsigned(digits) && digits.size() <= 3) return std::stoll(digits);
  }
  for (std::string_view eight : {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge"}) {
    if (type == eight) return 8;
  }
  return std::nullopt;
}

// The most GPUs of a GKE accelerator (cloud.google.com/gke-accelerator) one
// Compute Engine machine holds (Compute Engine "GPU machine types": A2
// Standard a2-megagpu-16g: 16 A100 40GB; A2 Ultra, A3 High/Mega/Ultra, A4,
// G2 (g2-standard-96), N1 with V100: 8; A4X: 4 GB200 GPUs; N1 with T4, P4 or
// P100: 4). Other accelerators: nullopt, no bound.
std::optional<long long> gkeAcceleratorGpus(std::string_view accelerator) {
  static constexpr std::array<std::pair<std::string_view, long long>, 12> kMost{{
      {"nvidia-tesla-a100", 16}, {"nvidia-a100-80gb", 8}, {"nvidia-h100-80gb", 8}, {"nvidia-h100-mega-80gb", 8},
      {"nvidia-h200-141gb", 8},  {"nvidia-b200", 8},      {"nvidia-gb200", 4},     {"nvidia-l4", 8},
      {"nvidia-tesla-v100", 8},  {"nvidia-tesla-t4", 4},  {"nvidia-tesla-p4", 4},  {"nvidia-tesla-p100", 4},
  }};
  for (const auto& [name, most] : kMost) {
    if (name == accelerator) return most;
  }
  return std::nullopt;
}

// The most GPUs a node with these label values holds, from one requirement
// of a term; nullopt when the requirement does not bound it.
std::optional<long long> requirementBound(const NodeRequirement& r) {
  const bool countLabel = r.key == "nvidia.com/gpu.count" || r.key == "karpenter.k8s.aws/instance-gpu-count" ||
                          r.key == "eks.amazonaws.com/instance-gpu-count";
  const bool typeLabel = r.key == "node.kubernetes.io/instance-type" || r.key == "beta.kubernetes.io/instance-type" ||
                         r.key == "cloud.google.com/gke-accelerator";
  if (countLabel && r.op == "Lt" && r.values.size() == 1) {
    const auto n = parseGoInt(r.values.front());
    return n && *n > std::numeric_limits<long long>::min() ? std::optional<long long>(std::max(*n - 1, 0LL))
                                                             : std::nullopt;
  }
  if ((!countLabel && !typeLabel) || r.op != "In" || r.values.empty()) return std::nullopt;
  long long most = 0;
  for (const std::string& v : r.values) {
    std::optional<long long> n;
    if (countLabel) {
      if (!isCanonicalUnsigned(v)) continue;  // matches no node's count
      n = std::stoll(v);
    } else {
      n = r.key == "cloud.google.com/gke-accelerator" ? gkeAcceleratorGpus(v) : instanceTypeGpus(v);
      if (!n) return std::nullopt;  // a type whose count is unknown: no bound
    }
    most = std::max(most, *n);
  }
  return most;
}

// What the pod's node selection says of the GPUs a node holds: the largest
// bound over the ORed terms, each term's the smallest of its requirements;
// nullopt when some term does not bound it.
struct SelectedNodes {
  long long most = 0;
  std::string evidence;  // "nodeSelector node.kubernetes.io/instance-type=a2-megagpu-16g"
};
std::optional<SelectedNodes> selectedNodeGpus(const PodSite& site) {
  std::optional<SelectedNodes> out;
  for (const NodeTerm& term : nodeSelectionTerms(site)) {
    if (term.matchesNothing) continue;
    std::optional<SelectedNodes> here;
    for (const NodeRequirement& r : term.requirements) {
      const auto bound = requirementBound(r);
      if (bound && (!here || *bound < here->most)) here = SelectedNodes{*bound, describeRequirement(r, term)};
    }
    if (!here) return std::nullopt;
    if (!out || here->most > out->most) out = here;
  }
  return out;
}

class GpuCountExceedsNode final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    const GpuFacts gpu = ctx.gpu();
    const auto wholeGpu = [&](std::string_view name) {
      if (name.starts_with(kDeviceClassResourcePrefix)) {
        return gpu.isWholeGpuClass(name.substr(kDeviceClassResourcePrefix.size()));
      }
      return isWholeGpu(ctx.policy, name);
    };
    for (const PodSite& site : ctx.sites) {
      // A pod too large to judge against the facts is judged without them.
      const bool withFacts = ctx.cluster && ctx.cluster->listed(FactKind::Node) && ctx.reach(site).notJudged.empty();
      for (const ResourceUnits& u : podRequestUnitsByName(site, wholeGpu)) {
        if (withFacts) {
          const ReachableMost most = reachableMost(ctx.reach(site), u.name, ctx);
          if (u.units > (most.most < 0 ? ctx.policy.maxGpusPerNode : most.most)) {
            report(site, u.name, u.units, limitOf(most, ctx), out);
          }
        } else if (const NodeLimit limit = selectionLimit(site, ctx.policy); u.units > limit.most) {
          report(site, u.name, u.units, limit, out);
        }
      }
      reportClaims(site, gpu, out);
    }
  }

 private:
  struct NodeLimit {
    long long most = 0;
    std::string text;  // "policy maxGpusPerNode: 8", "the nodes it can reach hold at most 4 (a, b; snapshot x)"
    std::string remedy;
  };

  static NodeLimit policyLimit(const Policy& policy) {
    const std::string max = std::to_string(policy.maxGpusPerNode);
    return {policy.maxGpusPerNode, "more than any node holds (policy maxGpusPerNode: " + max + ")",
            "ask for at most " + max + " per pod and spread the work over more pods, or raise maxGpusPerNode if "
            "your nodes hold more"};
  }

  // Without the cluster's facts: what the node selection says of the nodes
  // (a2-megagpu-16g holds 16; nvidia.com/gpu.count: "4" holds 4), else the policy's limit.
  static NodeLimit selectionLimit(const PodSite& site, const Policy& policy) {
    const auto selected = selectedNodeGpus(site);
    if (!selected) return policyLimit(policy);
    const std::string max = std::to_string(selected->most);
    return {selected->most,
            "more than the nodes its node selection admits hold (at most " + max + ": " + selected->evidence + ")",
            "ask for at most " + max + " per pod and spread the work over more pods, or select nodes that hold more"};
  }

  // The node groups and NodePools that hold the most of a resource among
  // those the pod can reach. Pointers only: the names (hundreds, on a large
  // cluster) are read when a finding needs them, not for every pod that fits.
  struct ReachableMost {
    long long most = -1;  // -1: nothing reachable offers it
    std::vector<const NodeReach*> groups;
    std::vector<const PoolReach*> pools;
  };

  // The most any reachable node offers, or a reachable NodePool's nodes hold
  // (maxGpusPerNode when the pool does not say).
  static ReachableMost reachableMost(const PodReach& reach, const std::string& resource, const CheckContext& ctx) {
    ReachableMost m;
    const bool draBacked = ctx.gpu().isDraBacked(resource) || resource.starts_with(kDeviceClassResourcePrefix);
    for (const NodeReach& n : reach.nodes) {
      if (!n.reachable) continue;
      auto it = n.node->allocatable.find(resource);
      // KEP-5004: a DRA driver serves it where the node does not advertise
      // it; its devices (ResourceSlices) are not in the facts.
      if (it == n.node->allocatable.end() && draBacked) continue;
      const long long units = it == n.node->allocatable.end() ? 0 : it->second.floorUnits();
      if (units > m.most) m.most = units, m.groups.clear();
      if (units == m.most) m.groups.push_back(&n);
    }
    for (const PoolReach& p : reach.pools) {
      if (!p.reachable) continue;
      const long long units = p.maxGpus.value_or(ctx.policy.maxGpusPerNode);
      if (units > m.most) m.most = units, m.groups.clear(), m.pools.clear();
      if (units == m.most) m.pools.push_back(&p);
    }
    return m;
  }

  // The limit `reachableMost` found, in words; the policy's limit when
  // nothing is reachable (gpu-unschedulable says that).
  static NodeLimit limitOf(const ReachableMost& m, const CheckContext& ctx) {
    if (m.most < 0) return policyLimit(ctx.policy);
    std::vector<std::string> where;
    for (const NodeReach* n : m.groups) {
      for (const NodeFacts* member : n->nodes) where.push_back(member->name);
    }
    for (const PoolReach* p : m.pools) where.push_back("NodePool " + p->pool->name);
    std::sort(where.begin(), where.end());
    if (where.size() > 3) where.resize(3), where.back() += ", ...";
    const std::string max = std::to_string(m.most);
    return {m.most,
            "more than any node it can reach holds (at most " + max + ": " + joined(where) + "; " +
                ctx.cluster->source() + ")",
            "ask for at most " + max + " per pod and spread the work over more pods, or select nodes that hold more"};
  }

  // The devices of all the pod's claims are allocated on its node: their
  // whole GPUs add up (known when the input holds the templates).
  static void reportClaims(const PodSite& site, const GpuFacts& gpu, Reporter& out) {
    long long total = 0;
    std::string parts;
    const GpuSource* first = nullptr;
    const std::vector<GpuSource>& sources = gpuSources(site, gpu);  // `first` points into it
    for (const GpuSource& s : sources) {
      if (s.kind != GpuSourceKind::Claim || !s.wholeGpus || *s.wholeGpus <= 0) continue;
      if (!first) first = &s;
      total = addUnits(total, *s.wholeGpus);
      parts += (parts.empty() ? "" : ", ") + s.name + ": " + std::to_string(*s.wholeGpus);
    }
    const long long max = gpu.policy.maxGpusPerNode;
    if (!first || total <= max) return;
    out.report(first->path,
               FieldError::invalid(std::to_string(total),
                   "the pod's resourceClaims allocate " + std::to_string(total) + " whole GPUs on its node (" + parts +
                   "), more than any node holds (policy maxGpusPerNode: " + std::to_string(max) +
                   "), so the claims are never allocated and the pod stays Pending; ask for at most " +
                   std::to_string(max) + " per pod and spread the work over more pods, or raise maxGpusPerNode if "
                   "your nodes hold more"),
               std::to_string(total));
  }

  static void report(const PodSite& site, const std::string& name, long long total, const NodeLimit& limit,
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
    // spec.nodeName skips the scheduler: the kubelet rejects what does not fit.
    const bool bound = site.spec && !stringOr(*site.spec, "nodeName").empty();
    detail += ", " + limit.text +
              (bound ? ", so the kubelet of the node it names (spec.nodeName) rejects it and it fails with reason "
                       "OutOf" + name
                     : ", so it stays Pending with \"Insufficient " + name + "\"") +
              "; " + limit.remedy;
    out.report(*biggest, FieldError::invalid(std::to_string(total), detail), std::to_string(total));
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuCountExceedsNode() { return std::make_unique<GpuCountExceedsNode>(); }

}  // namespace gpuguard::checks
