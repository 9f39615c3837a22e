// "This pod uses GPUs": one notion for every rule that holds GPU pods to
// node-level rules (the GPU node taint, the driver pin, counts beyond any
// node, DRA beside the device plugin). A pod gets GPUs
//   - through an extended resource the policy lists as a GPU (gpuResources),
//     or one a GPU DeviceClass of the input serves (extendedResourceName,
//     KEP-5004), whether a device plugin or a DRA driver serves it;
//   - through the implicit extended resource
//     deviceclass.resource.kubernetes.io/<class> of a GPU DeviceClass;
//   - through a pod resourceClaims entry whose claim or template asks a GPU
//     DeviceClass.
// Device taints do not replace node taints (KEP-5055): a pod whose GPUs all
// come from DRA still lands on the GPU nodes and needs their toleration.
// Facts: kubernetes-gpu-semantics.md §11, §14.6, §14.7.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/cluster_facts.h"
#include "rules/k8s/field_path.h"
#include "rules/input_facts.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

// The prefix of the implicit extended resource of every DeviceClass.
inline constexpr std::string_view kDeviceClassResourcePrefix = "deviceclass.resource.kubernetes.io/";

// The policy and what the input says: together they tell what is a GPU.
// With cluster facts, the cluster's DRA objects count after the input's,
// and a cluster that lists its DeviceClasses decides which are GPUs (no
// guessing by name).
struct GpuFacts {
  const Policy& policy;
  const InputFacts& input;
  const ClusterFacts* cluster = nullptr;
  std::string_view ns = {};  // the pod's namespace: where its claims are looked up (input and cluster)

  // The input's object of that name, else the cluster's; claims and
  // templates of namespace ns (InputFacts::claimTemplate).
  const DeviceClassFacts* deviceClass(std::string_view name) const;
  const ClaimFacts* claimTemplate(std::string_view name) const;
  const ClaimFacts* claim(std::string_view name) const;
  const std::string* classServing(std::string_view resource) const;
  // A Namespace of that name: the input's, else the cluster's; nullptr when
  // neither holds it. One lookup for both front ends, so that the linter
  // (Namespaces of the input) and the webhook (the cluster's) decide alike.
  const NamespaceFacts* namespaceFacts(std::string_view name) const;
  // A RuntimeClass of that name: the input's, else the cluster's; nullptr
  // when neither holds it.
  const RuntimeClassFacts* runtimeClass(std::string_view name) const;

  // A DeviceClass of NVIDIA GPUs (whole, MIG or passthrough). Known from the
  // input (or the cluster) when it defines the class: its extendedResourceName
  // is a GPU resource, or its selectors name a driver, which decides
  // (gpu.nvidia.com is NVIDIA's; gpu.amd.com, gpu.intel.com, gpu.example.com
  // are not, whatever the class is called), or it has no selectors (every
  // device) or reads the gpu.nvidia.com attribute domain. Selectors it cannot
  // read decide nothing. Otherwise, as the last resort, by name as
  // claims are: "gpu" in it (gpu.nvidia.com, vfio.gpu.nvidia.com) or mig.*
  // (mig.nvidia.com), unless it ends with another vendor's domain
  // (.amd.com, .intel.com) or example.com.
  bool isGpuClass(std::string_view className) const;
  // Whether isGpuClass had to go by the class's name: neither the input nor
  // the cluster defines it, or its selectors say nothing gpuguard can read.
  bool isGuessedClass(std::string_view className) const;
  // A GPU class whose devices are whole GPUs (not MIG slices).
  bool isWholeGpuClass(std::string_view className) const;
  // An extended resource served by a DRA driver: listed in the policy's
  // draExtendedResources, or the extendedResourceName of a DeviceClass of
  // the input.
  bool isDraBacked(std::string_view resource) const;
  // A resource name that asks for GPUs: a GPU extended resource (policy or a
  // GPU class's extendedResourceName) or the implicit name of a GPU class.
  bool isGpuResource(std::string_view resource) const;
  // A DRA driver of NVIDIA GPUs: the NVIDIA driver's names (gpu.nvidia.com,
  // mig.nvidia.com), or a driver a GPU DeviceClass of the cluster selects.
  bool isGpuDriver(std::string_view driver) const;
  // A ResourceSlice of a GPU driver holds devices on the node: DRA can give
  // the pod GPUs there, whatever its allocatable and labels say.
  bool draServesGpusOn(std::string_view nodeName) const;
};

enum class GpuSourceKind {
  ExtendedResource,     // nvidia.com/gpu and the policy's other GPU names
  DeviceClassResource,  // deviceclass.resource.kubernetes.io/<GPU class>
  Claim,                // a spec.resourceClaims entry
};

// One request of a claim: a container that names it (resources.claims[].request)
// gets only its devices (kubernetes-gpu-semantics.md §15.2).
struct ClaimRequestGpus {
  std::string name;
  bool asksGpu = false;       // one of its alternatives is a GPU class
  bool countUnknown = false;  // an alternative of a GPU class is allocationMode All
  long long wholeGpus = 0;    // the fewest of its alternatives; MIG classes and All count 0
  // The first alternative's: the scheduler allocates it whenever a node can
  // give it (firstAvailable, KEP-4816), later ones only as fallbacks.
  long long preferredWholeGpus = 0;
};

struct GpuSource {
  GpuSourceKind kind;
  std::string name;  // the resource name, or the pod claim's name
  FieldPath path;    // the first container entry asking for it, or the resourceClaims entry
  bool draBacked = false;
  // Whole GPUs the pod takes on its node from this source, when known: the
  // effective request (sidecars and init containers as the scheduler adds
  // them) of a whole-GPU resource, the device count of a claim whose
  // template the input holds. nullopt for MIG slices, shared GPUs, and
  // claims the input does not define.
  std::optional<long long> wholeGpus;
  // Of a claim whose requests list firstAvailable alternatives: the whole GPUs
  // when each request gets its first alternative (wholeGpus: the fewest any
  // allocation gives). nullopt for other sources, where it equals wholeGpus.
  std::optional<long long> preferredWholeGpus;
  // Recognised by a name (the claim's, its template's or its class's) for
  // want of the DeviceClass that says what it selects.
  bool guessed = false;
  // A claim with a GPU request of allocationMode All: it gets every matching
  // device of the node, a count no manifest tells. wholeGpus counts such a
  // request as 0, a lower bound; what a container sees of it is unknown.
  bool countUnknown = false;
  // A claim named by resourceClaimName: allocated once, and every pod that
  // names it uses the same devices; a template's claim is one per pod.
  bool sharedClaim = false;
  // A claim's requests, in order, when its claim or template is in view
  // (wholeGpus is their sum, countUnknown whether any is unknown).
  std::vector<ClaimRequestGpus> requests;
};

// For a finding about a GPU pod: "" when any of its GPU sources is known from
// the input; else a note that the pod was judged a GPU pod by names only.
std::string guessNote(const std::vector<GpuSource>& sources);

// Every GPU source of the pod was recognised by a name only (GpuSource::guessed):
// whether it uses GPUs at all is a guess, which may warn but never deny.
bool judgedByNamesOnly(const std::vector<GpuSource>& sources);

// Every way the pod asks for GPUs, in the order: extended resources and
// implicit names (by first appearance), then claims. Read once per site and
// facts (PodSite::gpuSourcesMemo): valid while the site lives and until it
// is asked with other facts.
const std::vector<GpuSource>& gpuSources(const PodSite& site, const GpuFacts& facts);

// The GPU source of the pod claim entry named `podClaimName` (the first of
// that name), or nullptr when that claim asks no GPU. Constant time per
// lookup, from the same memo as gpuSources.
const GpuSource* gpuClaimSource(const PodSite& site, const GpuFacts& facts, std::string_view podClaimName);

// A GPU claim of the pod whose claim or template (as the input or cluster
// holds it) selects devices by the driver's version (CEL on driverVersion or
// cudaDriverVersion): its allocation lands the pod on such a driver.
bool claimPinsDriver(const PodSite& site, const GpuFacts& facts);

// Where the GPUs of the pod can come from: every source needs a device
// plugin (an extended resource no DRA driver serves), every source can come
// from a DRA driver (claims, implicit DeviceClass names, extended resources a
// DeviceClass serves), or some of each.
bool anyFromDevicePluginOnly(const std::vector<GpuSource>& sources);
bool allMayComeFromDra(const std::vector<GpuSource>& sources);

// The pod asks for at least one GPU, by any source.
bool usesGpus(const PodSite& site, const GpuFacts& facts);

// Whether a spec.resourceClaims entry asks for GPUs: from the claim or
// template the input defines; not when a ComputeDomain of the input creates
// its template (an IMEX channel); else by name (its name, resourceClaimName
// or resourceClaimTemplateName contains "gpu" or starts with "mig-").
bool isGpuClaim(const nlohmann::json& podClaim, const GpuFacts& facts);

}  // namespace gpuguard
