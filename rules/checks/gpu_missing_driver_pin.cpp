// gpu-missing-driver-pin: a GPU pod that does not select nodes by CUDA driver.
#include <algorithm>
#include <array>
#include <charconv>
#include <span>

#include "rules/checks/checks.h"
#include "rules/cluster_reach.h"
#include "rules/k8s/json_access.h"
#include "rules/nvidia/cuda_version.h"
#include "rules/nvidia/drivers.h"
#include "rules/nvidia/gfd_labels.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_admission.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/support/unknown_placement.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 6> kPolicyKeys{"gpuResources", "draExtendedResources", "driverPinLabels", "assumeExtendedResourceToleration", "assumePodTolerationRestriction", "assumePodNodeSelector"};

constexpr RuleDoc kDoc{
    .id = "gpu-missing-driver-pin",
    // A warning: without a pin the pod runs wherever every GPU node has a new
    // enough driver (one driver per node pool, as managed platforms install
    // it), so denying it would deny pods that work. Clusters with mixed
    // drivers raise it to error in the policy; cuda-driver-too-old stays an
    // error, because there the pin itself admits a driver that is too old.
    .defaultSeverity = Severity::Warning,
    .summary = "A GPU pod that does not pin the node's CUDA driver version through GPU Feature Discovery labels.",
    .description =
        "A CUDA container needs a driver at least as new as its CUDA runtime (12.x needs >= 525, 13.x >= 580). "
        "Mixed node pools run mixed drivers; a pod that lands on an old one crashes with \"CUDA driver version is "
        "insufficient for CUDA runtime version\". GPU Feature Discovery labels every GPU node with "
        "nvidia.com/cuda.driver-version.major (and .full); select on it with nodeSelector, or with a required "
        "node affinity that constrains a driver label (In, Gt or Lt) in every nodeSelectorTerm (terms are "
        "ORed). GFD derives nvidia.com/cuda.runtime-version.major and .full (and the deprecated cuda.runtime.major) "
        "from the driver - they hold the newest CUDA it supports - so In, Gt or Lt on them pins the driver too; "
        "cuda.runtime-version.minor alone does not (12.0 and 13.0 share it). cuda-driver-too-old judges the same "
        "pins. GPU pods are those gpu-missing-toleration names, DRA claims of GPU classes and "
        "deviceclass.resource.kubernetes.io names included. An empty term (no matchExpressions, no matchFields) "
        "matches no node, so it needs no pin. "
        "Preferred affinity is not a pin. A GPU claim (template in the input or cluster) whose every alternative "
        "selects by the NVIDIA DRA driver's driverVersion or cudaDriverVersion attribute in CEL pins the driver too. "
        "A pod that sets spec.nodeName is not judged: its author chose the node, "
        "and the scheduler never sees it. Nor is a workload queued by Kueue (label kueue.x-k8s.io/queue-name on it "
        "or its pod template): Kueue adds the admitting ResourceFlavor's nodeLabels to the pod template, so the "
        "flavor picks the node pool, and its driver. Nor is a pod whose nodeSelector or affinity is decided where "
        "the input cannot show: an Argo podSpecPatch that names it, or the runtime the object names when it "
        "leaves them unset (a TrainJob's spec.runtimeRef, a KServe predictor model's runtime, an "
        "LLMInferenceService's spec.baseRefs: see gpu-missing-toleration). "
        "A pod naming a RuntimeClass (spec.runtimeClassName) gets that class's scheduling.nodeSelector merged "
        "into its nodeSelector by the RuntimeClass admission plugin (on by default): a pin there counts when the "
        "input or the cluster facts hold the class; when neither does (not yet watched: helm install creates a "
        "Deployment before its RuntimeClass), the finding is a warning that says the class may pin it (the GPU "
        "Operator's nvidia, nvidia-cdi and nvidia-legacy classes pin nothing). A Karpenter NodePool the pod's node "
        "selection requires (karpenter.sh/nodepool) that the facts do not hold yet makes it a warning likewise. "
        "A namespace's node selector (scheduler.alpha.kubernetes.io/node-selector, merged into its pods by the "
        "PodNodeSelector admission plugin, off by default; OpenShift's openshift.io/node-selector, by its "
        "OriginPodNodeEnvironment plugin, in a namespace without the former) counts only when the policy sets "
        "assumePodNodeSelector (platform: openshift does, as OpenShift runs both plugins); the finding says when "
        "it would pin the driver. "
        "The label keys come from the policy (driverPinLabels). "
        "A warning by default: a pod without a pin runs wherever every GPU node has a new enough driver (one driver "
        "per node pool, as managed platforms install it), so a denial would refuse pods that work; where GPU nodes "
        "run mixed drivers, raise it to error in the policy (rules: {gpu-missing-driver-pin: error}). "
        "With the cluster's facts (gpuguard-lint --facts or --cluster, the webhook's watched cache) the rule "
        "knows: an error when the GPU nodes the pod can land on (not cordoned, its nodeSelector, required node "
        "affinity and tolerations against the nodes' taints admit it, and the node's allocatable holds the GPU "
        "resource it asks, as many as it asks: a MIG pod never lands on a whole-GPU node, an 8-GPU pod never "
        "on a 4-GPU one) run more than one driver major, the very case the pin "
        "exists for, so the webhook denies it, unless every one of those majors supports the newest CUDA version "
        "the pod's containers name (env, the policy's cudaImages, the image tag) natively, as GFD's "
        "cuda.runtime-version label says of the branch (a rollout from 550 to 570 runs a CUDA 12.4 image on "
        "either), which stays a warning; "
        "a warning when they all run one driver (the pin still protects "
        "against the next node group), and for a DaemonSet, which runs a pod on every node it can reach, so that "
        "a pin would take it off the other drivers' nodes; no finding for a pod bound by spec.nodeName, which "
        "skips the scheduler. "
        "With the facts a pin is judged by the majors of the nodes it still admits: Gt 549 with GPU nodes on 550 "
        "and 570 pins nothing, and is an error as no pin is (unless each of those majors supports the pod's CUDA "
        "natively). The finding names the nodes and drivers it used, and the reachable GPU nodes without a GPU "
        "Feature Discovery driver label, whose driver is unknown.",
    .remediation =
        "Add nodeSelector nvidia.com/cuda.driver-version.major: \"550\", or a required node affinity "
        "{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"534\"]} (Gt 534 means >= 535).",
    .wrongExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"550\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

// Whether the drivers of a GFD driver major (a label value) support `cuda`
// natively, as GPU Feature Discovery's cuda.runtime-version label says of the
// branch (rules/nvidia/drivers.h), without minor-version compatibility, which
// PTX JIT kernels (Triton, vLLM) cannot rely on (reference §10.1). A branch
// newer than the table knows supports every CUDA the table does.
bool majorRunsNatively(std::string_view major, const CudaVersion& cuda) {
  long long n = 0;
  const auto [end, error] = std::from_chars(major.data(), major.data() + major.size(), n);
  if (error != std::errc() || end != major.data() + major.size()) return false;
  const std::span<const DriverBranch> branches = driverBranches();
  const DriverBranch* branch = knownBranch(n);
  if (!branch) return n > branches.back().driver;
  return std::make_pair(branch->cudaMajor, branch->cudaMinor) >= std::make_pair(cuda.major, cuda.minor.value_or(0));
}

// The newest CUDA version a container of the pod names (init containers
// included: they run on the same node), or nullopt when none names one.
std::optional<CudaVersion> newestCuda(const PodSite& site, const Policy& policy) {
  std::optional<CudaVersion> newest;
  for (const ContainerRef& c : site.containers) {
    std::optional<CudaVersion> v = containerCuda(c, policy);
    if (!v) continue;
    const auto key = [](const CudaVersion& x) { return std::make_pair(x.major, x.minor.value_or(99)); };
    if (!newest || key(*v) > key(*newest)) newest = std::move(v);
  }
  return newest;
}

class GpuMissingDriverPin final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    if (ctx.policy.driverPinLabels.empty()) return;
    for (const PodSite& site : ctx.sites) {
      const std::vector<GpuSource>& sources = gpuSources(site, ctx.gpu());
      if (sources.empty()) continue;
      // spec.nodeName: the author chose the node, whose driver they know.
      if (bypassesScheduler(site)) continue;
      // Kueue adds the admitting ResourceFlavor's nodeLabels to the pod
      // template: the flavor picks the node pool, and its driver with it.
      if (kueueQueueName(ctx.object, site)) continue;
      // Decided at run time by what the input cannot show (an Argo podSpecPatch).
      if (site.nodeSelector.opaque || site.affinity.opaque) continue;
      // A DRA claim selecting the driver's version pins it like a label does.
      if (selectionPinsDriver(nodeSelectionTerms(site), ctx.policy) || claimPinsDriver(site, ctx.gpu())) {
        judgePinReach(ctx, site, sources, out);
        continue;
      }
      std::string clusterSays;
      Severity severity = Severity::Warning;
      if (ctx.cluster && ctx.cluster->listed(FactKind::Node)) {
        if (site.spec && !stringOr(*site.spec, "nodeName").empty()) continue;  // bound: no scheduler, no choice
        clusterSays = whatTheClusterSays(ctx, site, severity);
      }
      if (judgedByNamesOnly(sources) || !unknownPlacement(site, ctx.gpu()).empty()) severity = Severity::Warning;
      const std::string& label = ctx.policy.driverPinLabels.front();
      // A GFD driver label holds the driver's major version; a platform's
      // pin label (karpenter.sh/nodepool) names the nodes that share a driver.
      const bool versionLabel = label.starts_with("nvidia.com/cuda.");
      // The rule, the change and the risk first, what the cluster shows
      // after: the API server keeps 256 characters of a warning (red team 32 B10).
      out.reportWithDefault(site.nodeSelector.path,
                 FieldError::required("no nodeSelector or required node affinity on a CUDA driver label (" + label +
                                          "): add nodeSelector " + label +
                                          (versionLabel ? ": \"<major>\" or a required node affinity with operator Gt" : ": \"<value>\" or a required node affinity on it") +
                                          ", or the pod may land on a node whose driver is older than its CUDA "
                                          "runtime and fail with \"CUDA driver version is insufficient\"" +
                                          clusterSays +
                                          misplacedNote(site.misplaced.nodeSelector, site.nodeSelector) +
                                          misplacedNote(site.misplaced.affinity, site.affinity) +
                                          std::string(site.placementHint) + guessNote(sources) +
                                          unknownRuntimeClassNote(site, "scheduling.nodeSelector") +
                                          unknownNodePoolNote(site, ctx.gpu()) +
                                          namespaceSelectorNote(ctx.gpu())),
                 "", severity);
    }
  }

 private:
  // A pin is judged by the majors of the nodes it reaches, with the
  // cluster's facts: Gt 549 with nodes on 550 and 570 pins nothing, and is
  // judged as no pin is (an error unless each major runs the pod's CUDA
  // natively). A DaemonSet runs on every node it reaches: not judged.
  static void judgePinReach(const CheckContext& ctx, const PodSite& site, const std::vector<GpuSource>& sources,
                            Reporter& out) {
    if (!ctx.cluster || !ctx.cluster->listed(FactKind::Node) || site.ownerKind == "DaemonSet") return;
    const DriverMajors& majors = reachableDriverMajors(ctx.reach(site));
    if (majors.size() < 2) return;
    const std::optional<CudaVersion> cuda = newestCuda(site, ctx.policy);
    if (cuda && std::all_of(majors.begin(), majors.end(),
                            [&cuda](const auto& m) { return majorRunsNatively(m.first, *cuda); })) {
      return;
    }
    const std::string& label = ctx.policy.driverPinLabels.front();
    const FieldPath& path = site.affinity.value ? site.affinity.path : site.nodeSelector.path;
    out.reportWithDefault(
        path,
        FieldError::required(
            "the pod's driver selection still admits GPU nodes of " + std::to_string(majors.size()) +
            " CUDA driver majors: select one (nodeSelector " + label + ": \"<major>\") or only majors new enough "
            "(operator Gt), or the pod may land on a node whose driver is older than its CUDA runtime and fail "
            "with \"CUDA driver version is insufficient\"; they are " + describeDriverMajors(majors) + " (" +
            ctx.cluster->source() + ")" +
            (cuda ? ", not all of which support CUDA " + cuda->text() + " natively"
                  : ", and no container names its CUDA version (env, cudaImages, image tag)") +
            guessNote(sources)),
        "", judgedByNamesOnly(sources) ? Severity::Warning : Severity::Error);
  }

  // The reachable GPU nodes' drivers, in words ("; the GPU nodes ..."), and the severity they make:
  // an error for more than one driver major, a warning for one (or none known).
  static std::string whatTheClusterSays(const CheckContext& ctx, const PodSite& site, Severity& severity) {
    const PodReach& reach = ctx.reach(site);
    const DriverMajors& majors = reachableDriverMajors(reach);
    const std::vector<std::string> unknown = reachableUnknownDriverNodes(reach);
    // Nodes without a GFD driver label are as reachable: the pod may land on an old driver there.
    const std::string unknownSaid =
        unknown.empty() ? "" : ", and a driver no GPU Feature Discovery label tells (" + describeNodeNames(unknown) + ")";
    const std::string source = unknownSaid + " (" + ctx.cluster->source() + ")";
    if (majors.size() > 1 && site.ownerKind == "DaemonSet") {
      // One pod on every node the selector admits: a pin would take the
      // agent (health check, exporter, burn-in) off the other drivers'
      // nodes, and a driver rollout is when it must run on both.
      return "; this DaemonSet runs a pod on each GPU node it can reach, and they run " + std::to_string(majors.size()) +
             " CUDA driver majors: " + describeDriverMajors(majors) + source +
             "; its image must work with the oldest of them, or be split by driver";
    }
    if (majors.size() > 1) {
      const std::string said = "; the GPU nodes this pod can reach run " + std::to_string(majors.size()) +
                               " CUDA driver majors: " + describeDriverMajors(majors) + source;
      const std::optional<CudaVersion> cuda = newestCuda(site, ctx.policy);
      if (cuda && std::all_of(majors.begin(), majors.end(),
                              [&cuda](const auto& m) { return majorRunsNatively(m.first, *cuda); })) {
        return said + ", each of which supports CUDA " + cuda->text() + " natively, but the next node group may "
               "not";
      }
      severity = Severity::Error;
      // Unknown CUDA stays an error (red team 35 D3 asked for a warning): an image of CUDA 13 runs on the
      // 580 nodes of a 570 -> 580 rollout and crashes on the others, the intermittent failure the pin
      // prevents, where a cluster of only the oldest driver fails it everywhere, at once.
      return said + (cuda ? "" : ", and no container names its CUDA version (env, cudaImages, image tag), so any "
                                 "of them may be too old for it; an image that runs on the oldest can say so "
                                 "instead of a pin: env CUDA_VERSION: \"<its CUDA version>\" on the container");
    }
    if (majors.size() == 1) {
      return std::string(unknown.empty() ? "; the GPU nodes this pod can reach all run CUDA driver "
                                         : "; the GPU nodes this pod can reach run CUDA driver ") +
             describeDriverMajors(majors) + source + ", but the next node group may not";
    }
    if (!unknown.empty()) {
      return "; the GPU nodes this pod can reach run a driver no GPU Feature Discovery label tells (" +
             describeNodeNames(unknown) + ") (" + ctx.cluster->source() + ")";
    }
    return "";
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuMissingDriverPin() { return std::make_unique<GpuMissingDriverPin>(); }

}  // namespace gpuguard::checks
