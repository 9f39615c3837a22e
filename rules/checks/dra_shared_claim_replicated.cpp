// dra-shared-claim-replicated: a pod template that names one ResourceClaim
// (resourceClaimName) in a workload of several replicas. Every replica shares
// that claim, and its allocation pins them all to one node
// (kubernetes-gpu-semantics.md §15.2).
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>

#include "rules/checks/checks.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/field_error.h"
#include "rules/resources.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 3> kPolicyKeys{"gpuResources", "draExtendedResources", "maxGpusPerNode"};

constexpr RuleDoc kDoc{
    .id = "dra-shared-claim-replicated",
    .defaultSeverity = Severity::Error,
    .summary = "A workload of several replicas whose pods share one ResourceClaim (resourceClaimName) on one node, "
               "where they cannot all fit: the others stay Pending.",
    .description =
        "A pod's resourceClaims entry with resourceClaimName names one ResourceClaim, and every pod that names it "
        "shares it (at most 256): the claim is allocated once, and its allocation's node selector pins every pod "
        "that uses it to the node holding its devices (k8s.io/api resource/v1 ResourceClaimReservedForMaxSize, "
        "AllocationResult.NodeSelector). In a Deployment, ReplicaSet, StatefulSet or ReplicationController with "
        "replicas > 1, or a Job running more than one pod at once (parallelism, at most completions), all "
        "replicas land on one node and use the same devices. "
        "That is reported when they cannot all be there: a required pod anti-affinity or a hostname topology "
        "spread (DoNotSchedule) keeps the other replicas Pending, and so do whole GPUs per pod (from nvidia.com/gpu "
        "or claims whose templates the input holds) that, times the replicas, plus the shared claims' devices "
        "(counted once: every replica uses the same ones), exceed what a node holds (policy maxGpusPerNode). "
        "Sharing a claim among replicas on purpose (an IMEX channel, a GPU shared by design, as in "
        "the Kubernetes DRA docs' example Job) is not reported. A claim per pod comes from "
        "resourceClaimTemplateName.",
    .remediation =
        "Give each pod its own claim: replace resourceClaimName with resourceClaimTemplateName and a "
        "ResourceClaimTemplate holding the same device requests.",
    .wrongExample =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: inference}\nspec:\n  replicas: 3\n"
        "  selector: {matchLabels: {app: inference}}\n  template:\n    metadata: {labels: {app: inference}}\n"
        "    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "          - topologyKey: kubernetes.io/hostname\n            labelSelector: {matchLabels: {app: inference}}\n"
        "      resourceClaims:\n      - name: gpu\n        resourceClaimName: shared-gpu\n"
        "      containers:\n      - name: server\n        image: vllm/vllm-openai:v0.11.0\n"
        "        resources: {claims: [{name: gpu}]}\n",
    .rightExample =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: inference}\nspec:\n  replicas: 3\n"
        "  selector: {matchLabels: {app: inference}}\n  template:\n    metadata: {labels: {app: inference}}\n"
        "    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "          - topologyKey: kubernetes.io/hostname\n            labelSelector: {matchLabels: {app: inference}}\n"
        "      resourceClaims:\n      - name: gpu\n        resourceClaimTemplateName: one-gpu\n"
        "      containers:\n      - name: server\n        image: vllm/vllm-openai:v0.11.0\n"
        "        resources: {claims: [{name: gpu}]}\n",
    .policyKeys = kPolicyKeys,
};

// The pods a Job runs at once: spec.parallelism (default 1), but never more
// than spec.completions when that is set ("Higher values of .spec.parallelism
// are effectively ignored", Kubernetes docs, Jobs: Controlling parallelism).
std::optional<long long> podsAtOnceOfJob(const json& jobSpec) {
  const json* parallelism = member(jobSpec, "parallelism");
  if (parallelism && !parallelism->is_number_integer()) return std::nullopt;
  long long atOnce = parallelism ? parallelism->get<long long>() : 1;
  if (const json* completions = member(jobSpec, "completions"); completions && completions->is_number_integer()) {
    atOnce = std::min(atOnce, completions->get<long long>());
  }
  return atOnce;
}

// The replicas of the workload whose template holds the pod spec at `specPath`
// (spec.template.spec): spec.replicas (default 1) or the pods a Job runs at once.
std::optional<long long> replicasOf(const json& object, const PodSite& site) {
  const std::string& kind = site.ownerKind;
  const bool replicated = kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet" ||
                          kind == "ReplicationController";
  if (!replicated && kind != "Job") return std::nullopt;
  const json::json_pointer spec(site.specPath.jsonPointer());
  if (spec.empty() || spec.back() != "spec") return std::nullopt;
  const json::json_pointer workloadSpec = spec.parent_pointer().parent_pointer();
  if (!object.contains(workloadSpec)) return std::nullopt;
  if (!replicated) return podsAtOnceOfJob(object.at(workloadSpec));
  const json* count = member(object.at(workloadSpec), "replicas");
  if (!count) return 1;
  return count->is_number_integer() ? std::optional<long long>(count->get<long long>()) : std::nullopt;
}

// A required rule that keeps two replicas off one node.
bool spreadsAcrossNodes(const PodSite& site) {
  if (site.affinity.value && site.affinity.value->is_object()) {
    const json* anti = objectAt(*site.affinity.value, "podAntiAffinity");
    const json* required = anti ? arrayAt(*anti, "requiredDuringSchedulingIgnoredDuringExecution") : nullptr;
    if (required) {
      for (const json& term : *required) {
        if (stringOr(term, "topologyKey") == "kubernetes.io/hostname") return true;
      }
    }
  }
  const json* spread = site.spec && site.spec->is_object() ? arrayAt(*site.spec, "topologySpreadConstraints") : nullptr;
  if (!spread) return false;
  for (const json& c : *spread) {
    if (stringOr(c, "topologyKey") == "kubernetes.io/hostname" && stringOr(c, "whenUnsatisfiable") == "DoNotSchedule") {
      return true;
    }
  }
  return false;
}

// Whole GPUs the pods take on their one node, from sources the input tells
// the count of: each pod its own (extended resources, template claims), and
// the ResourceClaims they share once (allocated once, the same devices for all).
struct NodeGpus {
  long long perPod = 0;
  long long sharedOnce = 0;
};

NodeGpus wholeGpusOnTheNode(const PodSite& site, const GpuFacts& facts) {
  NodeGpus out;
  for (const GpuSource& s : gpuSources(site, facts)) {
    if (!s.wholeGpus || *s.wholeGpus <= 0) continue;
    long long& total = s.sharedClaim ? out.sharedOnce : out.perPod;
    total = addUnits(total, *s.wholeGpus);
  }
  return out;
}

class DraSharedClaimReplicated final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      const json* claims = site.resourceClaims.value;
      if (!claims || !claims->is_array()) continue;
      const std::optional<long long> replicas = replicasOf(ctx.object, site);
      if (!replicas || *replicas <= 1) continue;
      const std::string fate = whyTheyStayPending(ctx, site, *replicas);
      if (fate.empty()) continue;  // sharing one claim on one node may be the point
      for (std::size_t i = 0; i < claims->size(); ++i) {
        const std::string* shared = stringAt((*claims)[i], "resourceClaimName");
        if (!shared) continue;
        out.report(site.resourceClaims.path.index(i).field("resourceClaimName"),
                   FieldError::invalid(quotedValue(*shared),
                                       "all " + std::to_string(*replicas) + " replicas of the " + site.ownerKind +
                                           " share this one ResourceClaim, whose allocation pins them to one node; " +
                                           fate +
                                           "; for a claim per pod use resourceClaimTemplateName with a "
                                           "ResourceClaimTemplate"),
                   *shared);
      }
    }
  }

 private:
  // "" when nothing keeps the replicas from sharing the node.
  static std::string whyTheyStayPending(const CheckContext& ctx, const PodSite& site, long long replicas) {
    if (spreadsAcrossNodes(site)) {
      return "its required anti-affinity or hostname spread keeps all but one replica Pending";
    }
    // Only what each pod asks on its own multiplies: the shared claim's devices serve every replica.
    const NodeGpus gpus = wholeGpusOnTheNode(site, ctx.gpu());
    if (gpus.perPod <= 0 || replicas > ctx.policy.maxGpusPerNode) return "";
    const long long perPodTimesReplicas = gpus.perPod > std::numeric_limits<long long>::max() / replicas
                                              ? std::numeric_limits<long long>::max()
                                              : gpus.perPod * replicas;
    const long long together = addUnits(perPodTimesReplicas, gpus.sharedOnce);
    if (together > ctx.policy.maxGpusPerNode) {
      return "together they ask " + std::to_string(together) + " GPUs of that node, more than any node "
             "holds (maxGpusPerNode " + std::to_string(ctx.policy.maxGpusPerNode) + "), so some stay Pending";
    }
    return "";
  }
};

}  // namespace

std::unique_ptr<Rule> makeDraSharedClaimReplicated() { return std::make_unique<DraSharedClaimReplicated>(); }

}  // namespace gpuguard::checks
