// Which Kubernetes object a finding is about. A document is one object, or a
// List (kubectl get -A -o yaml: kind: List, items[312]) whose items are the
// objects; a finding at /items/312/spec/... names items[312], not the List.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"
#include "rules/pod_specs.h"

namespace gpuguard {

// Finds the object of each finding of one document (the pod specs are found
// once, for all the document's findings).
class ObjectLocator {
 public:
  explicit ObjectLocator(const nlohmann::json& document);
  // With the pod specs the caller already found in `document` (judge()).
  ObjectLocator(const nlohmann::json& document, const std::vector<PodSite>& sites);
  // The object of a finding at `path`, read from its segments.
  ObjectRef at(const FieldPath& path) const;
  // The same from a pointer (a finding the engine did not make: a loader's
  // warning, an ineffective suppression).
  ObjectRef at(std::string_view pointer) const;
  // Every object of the document: the document, or a List's items.
  std::vector<ObjectRef> objects() const;

 private:
  ObjectRef at(const std::vector<std::string>& tokens) const;

  const nlohmann::json& document_;
  std::vector<std::vector<std::string>> specTokens_;  // each pod spec's path, as reference tokens
  // Each pod spec's path, its tokens joined (appendToken) -> its index in specTokens_.
  std::unordered_map<std::string, std::size_t> specByKey_;
};

// An RFC 6901 pointer inside `root` in the API server's notation
// ("/spec/containers/0/env" -> spec.containers[0].env), walking `root` to
// tell list indexes from map keys; keys that are not identifiers are
// bracketed (labels[app.kubernetes.io/name]).
std::string apiPathOfPointer(std::string_view pointer, const nlohmann::json& root);

}  // namespace gpuguard
