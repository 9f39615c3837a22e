// A `kind: List` document (kubectl get -A -o yaml), judged item by item.
//
// Judged whole, a List costs time quadratic in its items: every finding is
// placed among every pod spec of the document (20,000 items: minutes). Each
// item is an object of its own to the API server (kubectl applies them one
// by one), so the linter judges each alone, with the input's facts, and
// reports its findings at their place in the List (items[i]...). What the
// List itself carries still counts: an ignore.gpuguard.io annotation on the
// List suppresses for its items, as when the List was judged whole.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint/lint_file.h"
#include "rules/input_facts.h"
#include "rules/k8s/field_path.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

// kind: List with an items array (the engine's forEachObject expands these).
bool isItemList(const nlohmann::json& value);

// A path inside item `i` of a List, as a path inside the List.
FieldPath itemPath(std::size_t i, const FieldPath& inside);

// The items of a List document, taken out one at a time as Documents of
// their own (the value moved out of the List, the source map rebased to the
// item), so that one item at a time is judged and then freed.
class ListItems {
 public:
  explicit ListItems(yaml::Document& list);
  std::size_t size() const { return itemEntries_.size(); }
  // Item i, moved out of the List (its slot becomes null). Once each.
  yaml::Document take(std::size_t i);
  // The List's warnings about item i, rebased to the item.
  std::vector<yaml::ParseWarning> warningsOf(std::size_t i) const;
  // The warnings about the List itself (outside every item).
  const std::vector<yaml::ParseWarning>& listWarnings() const { return listWarnings_; }

 private:
  yaml::Document& list_;
  std::vector<std::vector<std::uint32_t>> itemEntries_;   // indexes into the List's source map entries
  std::vector<std::vector<std::uint32_t>> itemWarnings_;  // indexes into the List's warnings
  std::vector<yaml::ParseWarning> listWarnings_;
};

// Judges a List document item by item into `report` (lintText's part for
// Lists; no Remapper: rendered streams hold no Lists).
void lintListDocument(yaml::Document& list, const LintPolicy& policy, const LintOptions& options,
                      const InputFacts* facts, FileReport& report);

}  // namespace gpuguard::lint
