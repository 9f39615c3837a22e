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
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
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
// their own (the value moved out of the List, the source map and warnings
// rebased to the item), so that one item at a time is judged and then freed.
class ListItems {
 public:
  explicit ListItems(yaml::Document& list);
  std::size_t size() const { return itemEntries_.size(); }
  // Item i, moved out of the List (its slot becomes null), with its
  // warnings. Once each.
  yaml::Document take(std::size_t i);
  // The warnings about the List itself (outside every item).
  const std::vector<yaml::ParseWarning>& listWarnings() const { return listWarnings_; }

 private:
  yaml::Document& list_;
  std::vector<std::vector<std::uint32_t>> itemEntries_;   // indexes into the List's source map entries
  std::vector<std::vector<std::uint32_t>> itemWarnings_;  // indexes into the List's warnings
  std::vector<yaml::ParseWarning> listWarnings_;
};

// What the items of one List gave, until the List is complete: its
// metadata (an ignore.gpuguard.io annotation that suppresses for every
// item) may come after them.
struct JudgedItems {
  // In the order lintText gives a document's findings: the engine's, the
  // loader's warnings, the ineffective suppressions.
  FindingStore engine, warnings, suppressions;
  std::deque<FileReport::Object> objects;
  bool anyFragment = false;
  // The first item that is itself a list (a PodList in a List): kubectl
  // refuses the whole List (its FlattenListVisitor cannot open it), so then
  // the other fields hold nothing and later items are not judged.
  std::optional<InputError> nestedList;
};

// Judges one item of a List (a Document of its own: ListItems::take, or a
// yaml::ListItemSink's) into `out`; `position`: its index in the List.
void judgeItem(yaml::Document& item, std::size_t position, const LintPolicy& policy, const LintOptions& options,
               const InputFacts* facts, JudgedItems& out);

// A List's items judged as they are parsed (yaml::DocumentStream::read's
// ListItemSink), so that a List costs one item's tree at a time.
class ItemJudge final : public yaml::ListItemSink {
 public:
  ItemJudge(const LintPolicy& policy, const LintOptions& options, const InputFacts* facts)
      : policy_(policy), options_(options), facts_(facts) {}
  void item(std::size_t position, yaml::Document& item) override {
    judgeItem(item, position, policy_, options_, facts_, judged_);
  }
  void discard() override { judged_ = {}; }
  // The items judged since the last take(): those of the List just parsed.
  JudgedItems take() { return std::exchange(judged_, {}); }

 private:
  const LintPolicy& policy_;
  const LintOptions& options_;
  const InputFacts* facts_;
  JudgedItems judged_;
};

// Judges a List document item by item into `report` (lintText's part for
// Lists; no Remapper: rendered streams hold no Lists). `judged`: its items,
// judged as they were parsed (yaml::Document::itemsHandedOver); else they
// are judged here, taken from `list`.
void lintListDocument(yaml::Document& list, const LintPolicy& policy, const LintOptions& options,
                      const InputFacts* facts, FileReport& report, JudgedItems* judged = nullptr);

}  // namespace gpuguard::lint
