// Exemptions: objects a rule skips, from the policy's `exemptions` list.
// Every field an entry gives must match (each a Pattern, full match):
//
//   exemptions:
//     - namespace: 'sandbox-.*'
//       rules: [gpu-missing-driver-pin]         # omitted: every rule
//     - image: 'nvcr\.io/nvidia/k8s/dcgm-exporter:.*'
//     - kind: 'DaemonSet'
//       name: 'nvidia-.*'
//
// namespace: the admission request's namespace in the webhook, else the
//   object's metadata.namespace ("" when it has none);
// name: metadata.name, or metadata.generateName when the API server names it;
// image: EVERY container of the object (init, sidecar and ephemeral ones
//   too) runs a matching image, so that adding a container to a pod cannot
//   borrow another image's exemption; an object without containers never
//   matches an image.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/pattern.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

// What an exemption is matched against.
struct ExemptionSubject {
  std::string kind;
  std::string namespaceName;
  std::string name;
  std::vector<std::string> images;  // of every container
};

// `namespaceName` when the caller knows better than the object (the
// webhook's request namespace); "" to read metadata.namespace.
ExemptionSubject exemptionSubject(const nlohmann::json& object, const std::vector<PodSite>& sites,
                                  std::string_view namespaceName);

struct Exemption {
  std::optional<Pattern> namespaceName, kind, name, image;
  std::vector<std::string> rules;  // empty: every rule

  bool exempts(std::string_view ruleId, const ExemptionSubject& subject) const;
};

class Exemptions {
 public:
  Exemptions() = default;
  // Reads the policy's `exemptions` value. Throws PolicyError naming the
  // entry and field (an invalid pattern, a rule id `knownRule` refuses, an
  // entry that would exempt every object).
  static Exemptions fromJson(const nlohmann::json& list, std::string_view source, const KnownRule& knownRule = {});

  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  bool exempts(std::string_view ruleId, const ExemptionSubject& subject) const;

 private:
  std::vector<Exemption> entries_;
};

}  // namespace gpuguard
