// A fix a rule emits with its finding, in the spirit of clang-tidy's
// FixItHint: JSON-level edits of the object under judgement. The rule says
// what to change; it knows nothing of how the edit is applied.
// gpuguard-lint --fix writes the edits into the YAML text (lint/fix.cpp) and
// gpuguard-webhook's POST /mutate sends them as a JSONPatch (toJsonPatch
// below); neither knows which rule made them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"

namespace gpuguard {

struct JsonEdit {
  enum class Op {
    AddToList,     // add `value` to the list at `path` (created when absent, null or [])
    SetMember,     // set member `key` of the map at `path` to `value` (the map created when absent, null or {})
    RenameMember,  // rename member `key` of the map at `path` to `newKey`
  };
  Op op = Op::SetMember;
  FieldPath path;
  std::string key;
  std::string newKey;
  nlohmann::ordered_json value;  // members in the order a person writes them ({key, operator, effect})
  // SetMember: the value is a copy of the node at this path (JSONPatch
  // `copy` semantics; `value` holds what it is). --fix writes that node's
  // text as written (0x1 stays 0x1) and, among the members set in one map,
  // keeps the copied nodes' source order.
  std::optional<FieldPath> copiedFrom;

  static JsonEdit addToList(FieldPath list, nlohmann::ordered_json item);
  static JsonEdit setMember(FieldPath map, std::string key, nlohmann::ordered_json value);
  // setMember of a copy of the node at `source` (whose JSON is `value`).
  static JsonEdit copyMember(FieldPath map, std::string key, FieldPath source, nlohmann::ordered_json value);
  static JsonEdit renameMember(FieldPath map, std::string key, std::string newKey);

  bool operator==(const JsonEdit& other) const;
};

struct Fix {
  // What the edits do ("added toleration {key: nvidia.com/gpu, ...}"), or,
  // with no edits, why the finding is not fixed automatically.
  std::string description;
  std::vector<JsonEdit> edits;
};

// The RFC 6902 operations that make `edits` on `object`, in order; identical
// edits (several findings asking for one rename) count once. Items added to an
// existing list go to its head, in the order given. Edits whose target the
// object does not have (the map under a missing parent) are left out.
nlohmann::json toJsonPatch(const std::vector<JsonEdit>& edits, const nlohmann::json& object);

}  // namespace gpuguard
