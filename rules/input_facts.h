// What one input says about the cluster beyond the object under judgement:
// the DeviceClasses, ResourceClaimTemplates and ResourceClaims it defines
// (resource.k8s.io), and its Namespaces (their labels decide whether a claim
// may ask for adminAccess). A pod names a claim or a claim template; the template
// names DeviceClasses; a class says what devices it selects and which
// extended resource it serves (KEP-5004, spec.extendedResourceName). With
// them a rule can tell a GPU claim from a NIC claim, and an nvidia.com/gpu
// served by a DRA driver from one served by the device plugin.
//
// The linter gathers the facts of a whole input (a file, a stdin stream, a
// rendered chart) before it judges any object of it; the webhook sees one
// object, so only what that object holds (a List's items). Names are not
// qualified by namespace: one input rarely holds two templates of one name.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard {

struct NamespaceFacts;     // rules/cluster_facts.h: the cluster's facts reduce Namespaces
struct RuntimeClassFacts;  // and RuntimeClasses the same way

struct DeviceClassFacts {
  std::string extendedResourceName;  // spec.extendedResourceName, "" when not set
  std::string selectorText;          // the CEL expressions of spec.selectors, joined
  // The drivers the selectors name (device.driver == 'gpu.nvidia.com'), in order.
  std::vector<std::string> drivers;
};

// The drivers a CEL expression compares device.driver with, in order of
// appearance: device.driver == '<name>' (either quote), '<name>' == device.driver,
// device.driver in ['<a>', '<b>'].
std::vector<std::string> celDriverNames(std::string_view cel);

// One device request of a claim, or one alternative of a firstAvailable list.
struct DeviceRequestFacts {
  std::string deviceClassName;
  std::optional<long long> count;  // devices after defaulting; nullopt for allocationMode All
  // A CEL selector on the NVIDIA DRA driver's driverVersion or
  // cudaDriverVersion attribute: it pins the driver as a GFD label selector does (§15.2).
  bool pinsDriver = false;
};

// The requests of one claim (spec.devices.requests): each holds one
// alternative (exactly) or several (firstAvailable, of which one is allocated).
struct ClaimFacts {
  std::vector<std::vector<DeviceRequestFacts>> requests;
  // The requests' names, in order (what a container's resources.claims[].request names).
  std::vector<std::string> requestNames;
  // A ResourceClaim's status.allocation: allocated, and the nodes its
  // nodeSelector names by metadata.name (empty: any node, or nodes chosen by
  // labels the facts do not judge). Templates are never allocated.
  bool allocated = false;
  std::vector<std::string> allocatedNodes;
};

// The record of one object of each DRA kind (the cluster facts reduce with
// these too, rules/cluster_facts.h).
DeviceClassFacts reduceDeviceClass(const nlohmann::json& deviceClass);
ClaimFacts reduceClaimTemplate(const nlohmann::json& claimTemplate);
ClaimFacts reduceClaim(const nlohmann::json& claim);

// False when the text of one document (YAML or JSON, as written) surely
// defines no fact: it names none of the kinds InputFacts takes (DeviceClass,
// ResourceClaim, ResourceClaimTemplate, ComputeDomain, Namespace,
// RuntimeClass) and holds
// no escape or binary scalar that could spell one. A cheap test, so that a
// front end parses only the documents that may define facts before it
// judges the others; true says only "parse it to know".
bool mayDefineFacts(std::string_view text);

class InputFacts {
 public:
  // Takes what `object` (or, for a `kind: List`, each item) defines. Objects
  // of other kinds, and malformed ones, add nothing.
  void add(const nlohmann::json& object);

  const DeviceClassFacts* deviceClass(std::string_view name) const;
  // The ResourceClaimTemplate / ResourceClaim `name` a pod of namespace `ns`
  // can name: of that namespace, else one of the input that names no
  // namespace (applied where the pod is). Another namespace's never: a pod
  // names claims of its own namespace only.
  const ClaimFacts* claimTemplate(std::string_view ns, std::string_view name) const;
  const ClaimFacts* claim(std::string_view ns, std::string_view name) const;
  // The DeviceClass whose extendedResourceName is `resource`, or nullptr.
  // Several: the last one read (KEP-5004: only one class maps a name at a time).
  const std::string* classServing(std::string_view resource) const;
  // A ResourceClaimTemplate a ComputeDomain of the input creates
  // (spec.channel.resourceClaimTemplate.name): an IMEX channel, not a GPU.
  bool isComputeDomainChannel(std::string_view templateName) const;
  // A core/v1 Namespace of the input, reduced as the cluster facts reduce
  // one (reduceNamespace), or nullptr.
  const NamespaceFacts* namespaceFacts(std::string_view name) const;
  // A node.k8s.io RuntimeClass of the input (reduceRuntimeClass), or nullptr.
  const RuntimeClassFacts* runtimeClass(std::string_view name) const;
  // Nothing taken: the input defines no fact.
  bool empty() const {
    return classes_.empty() && templates_.empty() && claims_.empty() && servedBy_.empty() &&
           channelTemplates_.empty() && namespaces_.empty() && runtimeClasses_.empty();
  }

 private:
  void addOne(const nlohmann::json& object);

  std::map<std::string, DeviceClassFacts, std::less<>> classes_;
  std::map<std::string, ClaimFacts, std::less<>> templates_;  // "namespace/name", "/name" without one
  std::map<std::string, ClaimFacts, std::less<>> claims_;     // likewise
  std::map<std::string, std::string, std::less<>> servedBy_;  // extended resource -> class
  std::map<std::string, bool, std::less<>> channelTemplates_;  // ComputeDomain channel templates
  std::map<std::string, std::shared_ptr<const NamespaceFacts>, std::less<>> namespaces_;
  std::map<std::string, std::shared_ptr<const RuntimeClassFacts>, std::less<>> runtimeClasses_;
};

}  // namespace gpuguard
