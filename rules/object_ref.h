// Which Kubernetes object a finding is about. A document is one object, or a
// List (kubectl get -A -o yaml: kind: List, items[312]) whose items are the
// objects; a finding at /items/312/spec/... names items[312], not the List.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/pod_specs.h"

namespace gpuguard {

struct ObjectRef {
  std::string apiVersion;
  std::string kind;
  std::string ns;           // metadata.namespace, "" when not set
  std::string name;         // metadata.name, else metadata.generateName, else ""
  std::string pointer;      // the object inside its document: "" or "/items/312"
  std::string podTemplate;  // the pod spec holding the finding, as an API path inside the
                            // object ("spec.template.spec", "spec" for a Pod); "" for none

  // Kind/namespace/name, or Kind/name without a namespace; "<unnamed>"
  // stands for a missing name.
  std::string display() const;
};

// Finds the object of each pointer of one document (the pod specs are found
// once, for all the document's findings).
class ObjectLocator {
 public:
  explicit ObjectLocator(const nlohmann::json& document);
  ObjectRef at(std::string_view pointer) const;
  // Every object of the document: the document, or a List's items.
  std::vector<ObjectRef> objects() const;

 private:
  const nlohmann::json& document_;
  std::vector<PodSite> sites_;
};

// An RFC 6901 pointer inside `root` in the API server's notation
// ("/spec/containers/0/env" -> spec.containers[0].env), walking `root` to
// tell list indexes from map keys; keys that are not identifiers are
// bracketed (labels[app.kubernetes.io/name]).
std::string apiPathOfPointer(std::string_view pointer, const nlohmann::json& root);

}  // namespace gpuguard
