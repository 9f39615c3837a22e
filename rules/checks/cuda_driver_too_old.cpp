// cuda-driver-too-old: a container's CUDA version needs a newer NVIDIA driver
// than the pod's node selection guarantees.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "rules/checks/checks.h"
#include "rules/cluster_reach.h"
#include "rules/k8s/json_access.h"
#include "rules/nvidia/cuda_version.h"
#include "rules/nvidia/driver_terms.h"
#include "rules/nvidia/drivers.h"
#include "rules/nvidia/forward_compat.h"
#include "rules/nvidia/gfd_labels.h"
#include "rules/nvidia/gpu_generations.h"
#include "rules/nvidia/require.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 7> kPolicyKeys{"gpuResources", "draExtendedResources", "driverPinLabels", "assumeExtendedResourceToleration", "assumePodTolerationRestriction", "assumePodNodeSelector", "cudaImages"};

constexpr RuleDoc kDoc{
    .id = "cuda-driver-too-old",
    .defaultSeverity = Severity::Error,
    .summary = "A CUDA image that needs a newer NVIDIA driver than the nodes the pod may land on, or that has no "
               "code for their GPUs.",
    .description =
        "A CUDA application needs a driver at least as new as its CUDA major version allows under minor-version "
        "compatibility: CUDA 13.x needs >= 580, 12.x >= 525 (525.60.13), 11.x >= 450 (450.80.02; 11.0: "
        "450.36.06); 10.x has no minor-version compatibility (10.2 >= 440.33, 10.1 >= 418.39, 10.0 >= 410.48). "
        "On an older driver the container fails with \"CUDA driver version is insufficient for CUDA runtime "
        "version\". "
        "The CUDA version comes from the container's NVIDIA_REQUIRE_CUDA (\"cuda>=12.4 ...\") or CUDA_VERSION "
        "env when set, else from the image reference: nvidia/cuda and nvcr.io/nvidia/cuda tags (12.4.1-...), "
        "any tag holding cudaX.Y (pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime, "
        "cuda-sample:vectoradd-cuda12.5.0), and NGC framework tags YY.MM (nvcr.io/nvidia/pytorch, tensorflow, "
        "tritonserver, sglang) through the NGC release table. Only the table rows seen in NVIDIA release notes "
        "are encoded exactly (24.05 = CUDA 12.4.1, 25.10 = 13.0.2, 26.05 = 13.2.1); for the other releases only "
        "the major version is used, and only where it is certain: 23.10 to 25.06 are CUDA 12.x, 25.10 to 26.05 "
        "CUDA 13.x. Releases outside those spans (25.07 to 25.09 among them, whose CUDA major was not verified) "
        "and pip-style tags such as cu121 are not read. A container without an image (a Spark pod template, "
        "an operator's pod spec: whoever runs it fills the image in) is judged only by what its env states; "
        "nothing is concluded from the image it does not name. "
        "The driver comes from the node selection: nvidia.com/cuda.driver-version.major (or the deprecated "
        "nvidia.com/cuda.driver.major, or .full \"550.54.15\") in nodeSelector, or the values a required "
        "node affinity admits (In: its values; Gt N: the real driver branches above N, since drivers come in "
        "branches and no Linux driver 576 exists, so Gt 575 admits 580 and later; above the newest branch known, "
        "595, N+1), over every ORed "
        "nodeSelectorTerm. nvidia.com/cuda.runtime-version.major/.full, the newest CUDA the node's driver "
        "supports (525 reports 12.0, 535 12.2, 550 12.4, 570 12.8, 580 13.0...), is compared too: with "
        "minor-version compatibility an image for CUDA 12.4 runs on a driver that reports 12.2, so only an older "
        "major (an image for 13.0 on runtime-version 12) is reported. "
        "When the container's env sets NVIDIA_REQUIRE_CUDA (or another NVIDIA_REQUIRE_* variable), the rule "
        "judges what the NVIDIA container runtime checks before it creates the container "
        "(nvidia-container-toolkit internal/requirements): space-separated alternatives are ORed, "
        "comma-separated clauses ANDed, cuda/driver compare as versions, and a brand or arch clause, which no "
        "driver label decides, may hold. So \"cuda>=13.0 brand=tesla,driver>=535,driver<536\" on driver 535 "
        "is fine (forward compatibility through cuda-compat on data-center GPUs), while \"cuda>=12.4\" alone on "
        "driver 535 (CUDA 12.2) is reported: the runtime refuses the container (\"requirement error: "
        "unsatisfied condition: cuda>=12.4\"). NVIDIA_DISABLE_REQUIRE=true switches that check off (the floor "
        "applies again). The image's own NVIDIA_REQUIRE_CUDA is not in the manifest, but the forward-"
        "compatibility branches of some images are recorded: nvidia/cuda 13.0.x names R535, R550 and R565 for "
        "the data-center brands (the recorded list is cut off there), and CUDA 12.4 images (NGC 24.05's "
        "release notes, nvidia/cuda 12.4.1) R470, R525, R535 and R545. For an nvidia/cuda tag or an NGC "
        "release of such a version, a driver below the floor on a listed branch (or, for 13.0, a branch above "
        "565, which the list may go on to) is a warning, not an error: the container runs there through "
        "forward compatibility, which needs an NVIDIA data-center GPU and the cuda-compat package on the "
        "library path (NGC images ship and enable it); on other GPUs cuInit fails (CUDA Compatibility guide). "
        "It stays an error on a branch the list does not name, for other CUDA versions and images (no list "
        "known), and where the node selection admits only GeForce GPUs (gpu.product). "
        "With the cluster's facts (gpuguard-lint --facts or --cluster, the webhook's cache), a pod whose node "
        "selection does not pin the driver is judged against the drivers of the GPU nodes it can land on (not "
        "cordoned, placement and taints admit it, the node's allocatable holds the GPU resource it asks, as many "
        "as it asks; nvidia.com/cuda.driver-version.major): one below the floor is an error that names those nodes. "
        "No finding when the CUDA version is unknown, or when some ORed term does not bound the driver from "
        "below (the pod may land anywhere). "
        "CUDA 13 and GPUs below compute capability 7.5: CUDA 13.0 dropped Maxwell, Pascal and Volta (V100, P100, "
        "P40, P4; CUDA 12.9 is their last toolkit), so a CUDA 13 image whose node selection admits only such "
        "GPUs (nvidia.com/gpu.family volta/pascal/maxwell, gpu.compute.major below 7, gpu.product "
        "Tesla-V100-..., GKE nvidia-tesla-v100/p100/p4/k80, Karpenter instance-gpu-name v100/k80/m60, AWS "
        "p3, p3dn, p2, g3 instance types) is reported as a warning by this rule: it judges the same CUDA "
        "version against the same node selection, and the fix is the same (another image or other nodes). "
        "That CUDA 13 code cannot run there is derived from NVIDIA's documents, hence the warning.",
    .remediation =
        "Select nodes whose driver is new enough (nodeSelector nvidia.com/cuda.driver-version.major: \"550\", "
        "or a required node affinity {key: nvidia.com/cuda.driver-version.major, operator: Gt, values: "
        "[\"524\"]} for >= 525), or use an image built for an older CUDA.",
    .wrongExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"470\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.8.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"570\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.8.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

// ---------------------------------------------------------------------------
// The lowest driver a term admits, against the floor of a CUDA version.

enum class Verdict { Unknown, Ok, TooOld, MatchesNothing };

struct TermVerdict {
  Verdict verdict = Verdict::Unknown;
  std::string admitted;  // "driver 470" / "nodes whose driver supports CUDA 11.8 at most"
  std::string evidence;  // describeRequirement(...)
  bool viaRuntime = false;
  DriverVersion lowest{0, 0, 0};
  // For TooOld: whether forward compatibility may still run it there
  // (Listed, Unverified), and why not on the node selection's GPUs.
  ForwardCompat compat = ForwardCompat::Unknown;
  std::string compatNote;  // "; forward compatibility ... only GeForce GPUs (...)"
};

// What forward compatibility says of a term judged TooOld on its driver
// labels: every driver branch it admits below the floor must be one the
// image's list admits, and the term must not admit only GeForce GPUs.
void judgeForwardCompat(const NodeTerm& term, const CudaVersion& cuda, const DriverFloor& floor, TermVerdict& v) {
  if (v.viaRuntime) return;  // which branch is not said
  const auto admitted = admittedDrivers(term);
  if (!admitted) return;
  ForwardCompat all = ForwardCompat::Listed;
  for (const AdmittedDriver& d : *admitted) {
    if (d.version[0] >= floor.version[0]) continue;
    const ForwardCompat c = forwardCompatOn(cuda, d.version[0]);
    if (c == ForwardCompat::Unknown || c == ForwardCompat::NotListed) return;
    if (c == ForwardCompat::Unverified) all = c;
  }
  if (const auto geforce = geforceOnlyTerm(term)) {
    v.compatNote = "; forward compatibility, which " + std::string(forwardCompatSource(cuda)) +
                   " admits on that branch, works on NVIDIA data-center GPUs only, and the node selection admits "
                   "only GeForce GPUs (" + *geforce + "), where cuInit fails with "
                   "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    return;
  }
  v.compat = all;
}

TermVerdict judgeTerm(const NodeTerm& term, const CudaVersion& cuda, const DriverFloor& floor) {
  TermVerdict out;
  if (term.matchesNothing) {
    out.verdict = Verdict::MatchesNothing;
    return out;
  }
  const auto [driver, runtime] = familiesOf(term);
  bool driverNothing = false, runtimeNothing = false;
  const auto d = driver.lowest(driverNothing);
  const auto rt = runtime.lowest(runtimeNothing);
  if (driverNothing || runtimeNothing) {
    out.verdict = Verdict::MatchesNothing;
    return out;
  }

  bool anyOk = false, anyOld = false;
  if (d) {
    const bool old = d->full ? d->version < floor.version : d->version[0] < floor.version[0];
    if (old) {
      anyOld = true;
      out.admitted = "driver " + driverVersionText(d->version, d->full);
      out.evidence = driver.evidence ? describeRequirement(*driver.evidence, term) : "";
      out.lowest = d->version;
    } else {
      anyOk = true;
    }
  }
  if (rt) {
    // The runtime version is the newest CUDA the driver supports. Under
    // minor-version compatibility any CUDA of the same major runs on it.
    bool old = rt->version[0] < cuda.major;
    if (!old && cuda.major < 11 && rt->version[0] == cuda.major && rt->full && cuda.minor) {
      old = rt->version[1] < *cuda.minor;
    }
    if (old) {
      if (!anyOld) {
        out.admitted = "nodes whose driver supports CUDA " +
                       (rt->full ? std::to_string(rt->version[0]) + "." + std::to_string(rt->version[1])
                                 : std::to_string(rt->version[0]) + ".x") +
                       " at most";
        out.evidence = runtime.evidence ? describeRequirement(*runtime.evidence, term) : "";
        out.viaRuntime = true;
        out.lowest = rt->version;
      }
      anyOld = true;
    } else {
      anyOk = true;
    }
  }
  // Every bound holds for every admitted node: one that proves the driver new
  // enough settles it.
  out.verdict = anyOk ? Verdict::Ok : anyOld ? Verdict::TooOld : Verdict::Unknown;
  return out;
}

FieldError requirementError(const Requirement& req, const AdmittedDriver& d) {
  const std::string driver = "driver " + driverVersionText(d.version, d.full);
  std::string why;
  for (const std::vector<RequireClause>& alternative : req.alternatives) {
    const RequireClause* c = falseClause(alternative, d);
    std::string written;
    for (const RequireClause& each : alternative) written += (written.empty() ? "" : ",") + each.text;
    why += (why.empty() ? "" : "; ") + written + " fails on " + c->text;
    if (c->property == "cuda") {
      const DriverBranch* b = knownBranch(d.version[0]);
      why += " (branch " + std::to_string(b->driver) + " supports CUDA " + std::to_string(b->cudaMajor) + "." +
             std::to_string(b->cudaMinor) + ")";
    }
  }
  const RequireClause& first = *falseClause(req.alternatives.front(), d);
  std::string advice = "select nodes with a driver that one alternative admits";
  if (const auto branch = lowestBranchThatMaySatisfy(req, d.version[0])) {
    advice += " (from branch " + std::to_string(*branch) + ": nvidia.com/cuda.driver-version.major Gt \"" +
              std::to_string(*branch - 1) + "\")";
  }
  return FieldError::invalid(
      renderValue(json(req.value)),
      "the NVIDIA container runtime starts the container only when one of the space-separated alternatives "
      "holds (each a comma-separated list of clauses that must all hold), and on " + driver + " (" + d.evidence +
          ") none does: " + why + "; the container is not created (\"requirement error: unsatisfied condition: " +
          first.text + "\"); " + advice + ", or image and requirement for an older CUDA");
}


class CudaDriverTooOld final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      // Read only for a container with something to judge (and then once: PodSite::selectionTerms).
      auto nodeTerms = [&]() -> const std::vector<NodeTerm>& { return nodeSelectionTerms(site); };
      for (const ContainerRef& c : site.containers) {
        const auto cuda = containerCuda(c, ctx.policy);
        const std::vector<Requirement> requirements = containerRequirements(c);
        // Only a selection that pins the driver in every term (the pin
        // gpu-missing-driver-pin asks for) says anything of the driver.
        const auto pinned = [&] { return selectionPinsDriver(nodeTerms(), ctx.policy); };
        if (requirements.empty()) {
          if (cuda && pinned()) checkDriverFloor(*cuda, nodeTerms, out);
          else if (cuda && withFacts(ctx, site)) checkReachableDrivers(*cuda, ctx.reach(site), ctx, out);
        } else if (pinned()) {
          // What the runtime checks decides: an alternative may admit an
          // older driver branch (forward compatibility on data-center GPUs).
          for (const Requirement& req : requirements) {
            if (auto failure = requirementFailure(req, nodeTerms())) {
              out.report(req.path, requirementError(req, *failure), renderValue(json(req.value)));
            }
          }
        }
        if (cuda && cuda->major >= 13) checkComputeCapability(*cuda, nodeTerms(), out);
      }
    }
  }

 private:
  // Cluster facts for a pod the scheduler places (not bound by spec.nodeName).
  // Not when the placement is decided elsewhere (placementOpaque): the
  // nodes it reaches are unknown.
  static bool withFacts(const CheckContext& ctx, const PodSite& site) {
    return !placementOpaque(site) && ctx.cluster && ctx.cluster->listed(FactKind::Node) &&
           !(site.spec && !stringOr(*site.spec, "nodeName").empty());
  }

  // The driver majors of the nodes the pod lands on whose gpu.product names
  // GeForce, where forward compatibility does not work.
  static std::set<std::string> majorsWithGeForceNodes(const PodReach& reach) {
    std::set<std::string> out;
    for (const NodeReach* n : reach.landingNodes()) {
      for (const NodeFacts* node : n->nodes) {
        const std::string* product = node->label("nvidia.com/gpu.product");
        if (!product || !namesGeForce(*product)) continue;
        if (const std::optional<std::string> major = driverMajorOf(*node)) out.insert(*major);
      }
    }
    return out;
  }

  // Without a pin, the drivers of the GPU nodes the pod can reach decide:
  // one older than the CUDA floor is where the container fails.
  static void checkReachableDrivers(const CudaVersion& cuda, const PodReach& reach, const CheckContext& ctx,
                                    Reporter& out) {
    const auto floor = floorFor(cuda);
    if (!floor) return;
    DriverMajors old, compatOnly;
    std::optional<ForwardCompat> compat;  // the weakest of compatOnly's
    const std::set<std::string> geforce = majorsWithGeForceNodes(reach);
    for (const auto& [major, nodes] : reachableDriverMajors(reach)) {
      const std::optional<long long> m = parseGoInt(major);
      if (!m || *m >= floor->version[0]) continue;
      const ForwardCompat c = forwardCompatOn(cuda, *m);
      if ((c == ForwardCompat::Listed || c == ForwardCompat::Unverified) && !geforce.count(major)) {
        compatOnly.push_back({major, nodes});
        if (!compat || c == ForwardCompat::Unverified) compat = c;
      } else {
        old.push_back({major, nodes});
      }
    }
    if (old.empty()) {
      if (compat) {
        out.reportWithDefault(cuda.path,
                              forwardCompatWarning(cuda, *floor,
                                                   "GPU nodes this pod can reach run driver " +
                                                       describeDriverMajors(compatOnly) +
                                                       " (" + ctx.cluster->source() + ")",
                                                   *compat),
                              renderValue(json(cuda.value)), Severity::Warning);
      }
      return;
    }
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    const long long gt = floor->version[0] - 1;
    out.report(cuda.path,
               FieldError::invalid(
                   renderValue(json(cuda.value)),
                   what + " needs an NVIDIA driver >= " + std::string(floor->text) + " (" + std::string(floor->why) +
                       "), but GPU nodes this pod can reach run driver " + describeDriverMajors(old) + " (" +
                       ctx.cluster->source() +
                       "), where the container fails with \"CUDA driver version is insufficient for CUDA runtime "
                       "version\"; select nodes with driver >= " + std::to_string(floor->version[0]) +
                       " (nvidia.com/cuda.driver-version.major Gt \"" + std::to_string(gt) +
                       "\") or use an image built for an older CUDA"),
               renderValue(json(cuda.value)));
  }

  template <typename Terms>
  static void checkDriverFloor(const CudaVersion& cuda, Terms& nodeTerms, Reporter& out) {
    const auto floor = floorFor(cuda);
    if (!floor) return;
    std::optional<TermVerdict> worst, compatOnly;  // fails surely; runs only through forward compatibility
    for (const NodeTerm& term : nodeTerms()) {
      TermVerdict v = judgeTerm(term, cuda, *floor);
      if (v.verdict == Verdict::Unknown) return;  // some admitted node may have any driver
      if (v.verdict != Verdict::TooOld) continue;
      judgeForwardCompat(term, cuda, *floor, v);
      std::optional<TermVerdict>& slot = v.compat == ForwardCompat::Unknown ? worst : compatOnly;
      if (!slot || v.lowest < slot->lowest) slot = v;
    }
    const std::string shown = renderValue(json(cuda.value));
    if (worst) {
      out.report(cuda.path, error(cuda, *floor, *worst), shown);
    } else if (compatOnly) {
      out.reportWithDefault(cuda.path,
                            forwardCompatWarning(cuda, *floor,
                                                 "the node selection admits " + compatOnly->admitted + " (" +
                                                     compatOnly->evidence + ")",
                                                 compatOnly->compat),
                            shown, Severity::Warning);
    }
  }

  // A driver below the floor on a branch the image's forward-compatibility
  // list admits: it runs only on a data-center GPU with cuda-compat. `where`
  // says which drivers: "the node selection admits driver 550 (...)".
  static FieldError forwardCompatWarning(const CudaVersion& cuda, const DriverFloor& floor, const std::string& where,
                                         ForwardCompat compat) {
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    const std::string listed =
        compat == ForwardCompat::Unverified
            ? "the image's forward-compatibility list may name it (" + std::string(forwardCompatSource(cuda)) +
                  "; the recorded list is cut off there, so this branch is not verified)"
            : "the image admits it in forward-compatibility mode (" + std::string(forwardCompatSource(cuda)) + ")";
    return FieldError::invalid(
        renderValue(json(cuda.value)),
        what + " needs an NVIDIA driver >= " + std::string(floor.text) + " (" + std::string(floor.why) +
            ") to run natively, and " + where + "; " + listed +
            ", which works only on NVIDIA data-center GPUs with the cuda-compat package on the library path "
            "(NGC images ship and enable it); elsewhere the container fails with \"CUDA driver version is "
            "insufficient for CUDA runtime version\". Make sure those nodes have data-center GPUs and the image "
            "carries cuda-compat, or select nodes with driver >= " + std::to_string(floor.version[0]));
  }

  // A warning: that CUDA 13 code cannot run there follows from NVIDIA's
  // documents, not from a run (reference §14.9, "derived").
  static void checkComputeCapability(const CudaVersion& cuda, const std::vector<NodeTerm>& terms, Reporter& out) {
    const auto evidence = onlyPreTuringGpus(terms);
    if (!evidence) return;
    const std::string shown = renderValue(json(cuda.value));
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    out.reportWithDefault(cuda.path,
                          FieldError::invalid(shown,
                                              what + " has no code for GPUs below compute capability 7.5 (Maxwell, "
                                                  "Pascal and Volta: V100, P100, P40, P4), "
                                                  "and the node selection admits only such GPUs (" + *evidence +
                                                  "), where CUDA 13 libraries find no kernel for the device; use an "
                                                  "image built for CUDA 12.x (12.9 is "
                                                  "the last release for them) or select Turing or newer GPUs "
                                                  "(nvidia.com/gpu.compute.major Gt \"6\" "
                                                  "admits compute capability 7.x too: prefer nvidia.com/gpu.family "
                                                  "or gpu.product)"),
                          shown,
                          Severity::Warning);
  }

  static FieldError error(const CudaVersion& cuda, const DriverFloor& floor, const TermVerdict& v) {
    std::string what = "CUDA " + cuda.text();
    if (!cuda.origin.empty()) what += " (" + cuda.origin + ")";
    const long long gt = floor.version[0] - 1;
    return FieldError::invalid(
        renderValue(json(cuda.value)),
        what + " needs an NVIDIA driver >= " + std::string(floor.text) + " (" + std::string(floor.why) +
            "), but the node selection admits " + v.admitted + " (" + v.evidence +
            "), where the container fails with \"CUDA driver version is insufficient for CUDA runtime version\"" +
            v.compatNote + "; "
            "select nodes with driver >= " +
            std::to_string(floor.version[0]) + " (nvidia.com/cuda.driver-version.major Gt \"" + std::to_string(gt) +
            "\") or use an image built for an older CUDA");
  }
};

}  // namespace

std::unique_ptr<Rule> makeCudaDriverTooOld() { return std::make_unique<CudaDriverTooOld>(); }

}  // namespace gpuguard::checks
