// The AdmissionReview (admission.k8s.io/v1 or v1beta1), parsed once into a
// typed request: the envelope checked, the attributes the chain reads, and the
// objects the rules judge. Every later step of the chain (filters, decision,
// mutation, logs) reads this, never the JSON text again.
//
// The reader builds the tree the rules need and nothing else. Dropped, because
// no rule reads them nor does the decision:
//   request.{options,resource,requestKind,requestResource}
//   request.userInfo but its username
//   request.{object,oldObject}.metadata.managedFields
//   request.{object,oldObject}.metadata.annotations
//       ["kubectl.kubernetes.io/last-applied-configuration"]  (a copy of the object)
//   request.{object,oldObject}.status
// Dropped values are still checked (malformed text in them is a 400). Nesting
// deeper than the limit stops the parse (a 400), so hostile input never
// builds a tree that recursive code downstream could not walk.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuguard::webhook {

// What a review is about: what the decision, the logs and the metrics read
// ("" when unknown, or not read before the review was found invalid).
struct ReviewAttributes {
  std::string apiVersion;  // admission.k8s.io/v1 or v1beta1
  std::string uid;
  std::string operation;  // CREATE, UPDATE, DELETE or CONNECT
  std::string group;      // request.kind.group
  std::string kind;       // request.kind.kind, else the object's kind
  std::string namespaceName;
  std::string name;  // request.name, else the object's metadata.name
  std::string subResource;
  std::string username;  // request.userInfo.username: who asks
  bool dryRun = false;
};

struct AdmissionRequest : ReviewAttributes {
  // Into the parsed review (ParsedReview::document); null when absent.
  // CREATE and UPDATE always have an object.
  const nlohmann::json* object = nullptr;
  const nlohmann::json* oldObject = nullptr;

  bool isUpdate() const { return operation == "UPDATE"; }
};

// One parsed review: the tree and the typed request that points into it
// (neither copied nor moved, so the pointers stay valid).
class ParsedReview {
  nlohmann::json owned_;  // the tree, unless the review reads into a kept one

 public:
  // A tree of its own, freed with releaseJson (webhook/json_reader.h).
  ParsedReview() : document(owned_) {}
  // Reads into `kept`, the tree of an earlier review, and leaves it there for
  // the next: readJson reuses what a tree holds (its maps' nodes, vectors and
  // strings), so a review of the same shape as the last allocates and frees
  // next to nothing. The owner of `kept` decides when to free it.
  explicit ParsedReview(nlohmann::json& kept) : document(kept) {}
  ParsedReview(const ParsedReview&) = delete;
  ParsedReview& operator=(const ParsedReview&) = delete;
  ~ParsedReview();

  nlohmann::json& document;
  AdmissionRequest request;
};

// Parses `body` into `out`. Returns what is wrong with it ("malformed JSON:
// ...", "request.uid is missing", ...), with `out.request` holding what was
// read before the problem, or nullopt when it is a review the chain can take.
// Throws only what allocation throws.
std::optional<std::string> parseAdmissionReview(std::string_view body, std::size_t maxNestingDepth, ParsedReview& out,
                                                std::size_t maxValues = static_cast<std::size_t>(-1));

}  // namespace gpuguard::webhook
