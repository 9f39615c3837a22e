#include "lint/lint_list.h"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rules/engine.h"
#include "rules/object_ref.h"

namespace gpuguard::lint {
namespace {

using nlohmann::json;

constexpr std::string_view kItems = "/items/";

// The item a pointer of the List lies in, and where the item's part of the
// pointer starts ("/items/12/spec" -> 12, at "/spec"); nullopt outside the items.
std::optional<std::pair<std::size_t, std::size_t>> itemOf(std::string_view pointer) {
  if (!pointer.starts_with(kItems)) return std::nullopt;
  const char* first = pointer.data() + kItems.size();
  const char* last = pointer.data() + pointer.size();
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(first, last, index);
  if (ec != std::errc() || end == first || (end != last && *end != '/')) return std::nullopt;
  return std::pair(index, static_cast<std::size_t>(end - pointer.data()));
}

// The List itself as the object of a finding outside its items: what
// ObjectLocator says of it, without walking the items.
ObjectRef listRef(const json& list, std::string_view pointer) {
  json shell = json::object();
  for (const char* key : {"apiVersion", "kind", "metadata"}) {
    if (const auto it = list.find(key); it != list.end()) shell[key] = *it;
  }
  return ObjectLocator(shell).at(pointer);
}

// The List's own ignore.gpuguard.io/<rule> annotation with a reason, if any.
const std::string* listSuppression(const json& list, const std::string& rule) {
  const auto metadata = list.find("metadata");
  if (metadata == list.end() || !metadata->is_object()) return nullptr;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return nullptr;
  const auto reason = annotations->find(kSuppressionPrefix + rule);
  if (reason == annotations->end() || !reason->is_string() || reason->get_ref<const std::string&>().empty()) {
    return nullptr;
  }
  return &reason->get_ref<const std::string&>();
}

// kubectl's unstructured.Unstructured.IsList: an "items" array.
bool isNestedList(const json& v) {
  if (!v.is_object()) return false;
  const auto items = v.find("items");
  return items != v.end() && items->is_array();
}

}  // namespace

bool isItemList(const json& v) {
  if (!v.is_object()) return false;
  const auto kind = v.find("kind");
  const auto items = v.find("items");
  return kind != v.end() && kind->is_string() && kind->get_ref<const std::string&>() == "List" && items != v.end() &&
         items->is_array();
}

FieldPath itemPath(std::size_t i, const FieldPath& inside) {
  FieldPath path = FieldPath{}.field("items").index(i);
  for (const FieldPath::Step& step : inside.segments()) {
    switch (step.kind) {
      case FieldPath::Step::Kind::Field: path = path.field(step.name); break;
      case FieldPath::Step::Kind::Index: path = path.index(step.index); break;
      case FieldPath::Step::Kind::Key: path = path.key(step.name); break;
    }
  }
  return path;
}

ListItems::ListItems(yaml::Document& list) : list_(list) {
  const std::size_t count = list.value["items"].size();
  itemEntries_.resize(count);
  itemWarnings_.resize(count);
  const auto& entries = list.sources.entries();
  for (std::size_t e = 0; e < entries.size(); ++e) {
    if (const auto item = itemOf(entries[e].pointer); item && item->first < count) {
      itemEntries_[item->first].push_back(static_cast<std::uint32_t>(e));
    }
  }
  for (std::size_t w = 0; w < list.warnings.size(); ++w) {
    const auto item = itemOf(list.warnings[w].pointer);
    if (item && item->first < count) itemWarnings_[item->first].push_back(static_cast<std::uint32_t>(w));
    else listWarnings_.push_back(list.warnings[w]);
  }
}

yaml::Document ListItems::take(std::size_t i) {
  yaml::Document item;
  item.index = list_.index;
  item.value = std::move(list_.value["items"][i]);
  std::vector<yaml::SourceMap::Entry> entries;
  entries.reserve(itemEntries_[i].size());
  const auto& all = list_.sources.entries();
  for (std::uint32_t e : itemEntries_[i]) {
    entries.push_back({all[e].pointer.substr(itemOf(all[e].pointer)->second), all[e].origin});
  }
  item.sources = yaml::SourceMap::fromEntries(std::move(entries));
  if (const yaml::NodeOrigin* root = item.sources.find("")) item.start = root->position;
  std::vector<std::uint32_t>().swap(itemEntries_[i]);
  for (std::uint32_t w : itemWarnings_[i]) {
    item.warnings.push_back(list_.warnings[w]);
    item.warnings.back().pointer.erase(0, itemOf(item.warnings.back().pointer)->second);
  }
  return item;
}

void judgeItem(yaml::Document& item, std::size_t position, const LintPolicy& policy, const LintOptions& options,
               const InputFacts* facts, JudgedItems& out) {
  const std::string prefix = std::string(kItems) + std::to_string(position);
  out.anyFragment = out.anyFragment || options.fragment;
  // kubectl sends none of the List's items (the items before this one
  // neither): what they gave is dropped, the items after are not judged.
  if (out.nestedList) return;
  if (isNestedList(item.value)) {
    const std::string kind = item.value.value("kind", std::string());
    out.nestedList = InputError{"", item.start.line, item.start.column,
                                "item " + std::to_string(position) + " of the List is itself a list (" +
                                    (kind.empty() ? "" : "kind " + kind + ", ") +
                                    "with items): kubectl refuses the whole List (\"*unstructured.Unstructured is not "
                                    "a list: no Items field in this object\") and applies none of its items (the "
                                    "file's other documents it applies); put its items into the List itself"};
    out.engine = {};
    out.warnings = {};
    out.suppressions = {};
    out.objects.clear();
    return;
  }
  std::vector<Finding> findings = judgeDocument(item, policy, options.fragment, facts);
  const ObjectLocator objects(item.value);
  if (options.objects) {
    for (ObjectRef& ref : objects.objects()) {
      ref.pointer = prefix + ref.pointer;
      out.objects.push_back({item.index, std::move(ref)});
    }
  }
  auto located = [&](Finding f, yaml::Position pos) {
    ObjectRef object = f.object ? std::move(*f.object) : objects.at(f.path);
    forgetJudgingState(f);
    object.pointer = prefix + object.pointer;
    f.path = itemPath(position, f.path);
    return Located{std::move(f), pos.line, pos.column, item.index, "", std::move(object), {}};
  };
  for (Finding& f : findings) {
    const yaml::Position pos = item.sources.locate(f.pointer());
    out.engine.push_back(located(std::move(f), pos));
  }
  for (const yaml::ParseWarning& w : item.warnings) {
    out.warnings.push_back(located(sourceFinding(w, item.value), w.position));
  }
  if (!policy.allowSuppressions) return;
  for (Finding& f : ineffectiveSuppressions(item.value)) {
    const yaml::Position pos = item.sources.locate(f.pointer());
    out.suppressions.push_back(located(std::move(f), pos));
  }
}

namespace {

// A List's ignore.gpuguard.io annotation suppresses for its items: applied
// once the List is complete, as its metadata may come after its items.
void suppressForList(const json& list, FindingStore& engine) {
  for (std::size_t i = 0; i < engine.size(); ++i) {
    if (engine.suppressedAt(i)) continue;
    if (const std::string* reason = listSuppression(list, std::string(engine.ruleAt(i)))) engine.suppress(i, *reason);
  }
}

}  // namespace

void lintListDocument(yaml::Document& list, const LintPolicy& policy, const LintOptions& options,
                      const InputFacts* facts, FileReport& report, JudgedItems* judged) {
  ++report.documents;
  JudgedItems takenHere;
  std::optional<ListItems> items;
  if (!judged) {
    judged = &takenHere;
    items.emplace(list);
    for (std::size_t i = 0; i < items->size(); ++i) {
      yaml::Document item = items->take(i);
      judgeItem(item, i, policy, options, facts, takenHere);
    }
  }
  JudgedItems& found = *judged;
  if (found.nestedList) {  // refused whole: nothing of it is judged
    found.nestedList->file = report.file;
    report.errors.push_back(std::move(*found.nestedList));
    return;
  }
  // One List counts once, as a fragment when any item was one.
  report.fragments += found.anyFragment ? 1 : 0;
  for (FileReport::Object& object : found.objects) report.objects.push_back(std::move(object));
  if (policy.allowSuppressions) suppressForList(list.value, found.engine);
  // Handed over as they were parsed, the items took their warnings along.
  for (const yaml::ParseWarning& w : items ? items->listWarnings() : list.warnings) {
    found.warnings.push_back(Located{sourceFinding(w, list.value), w.position.line, w.position.column, list.index, "",
                                     listRef(list.value, w.pointer), {}});
  }
  if (policy.allowSuppressions) {
    json shell = json::object();
    if (const auto metadata = list.value.find("metadata"); metadata != list.value.end()) shell["metadata"] = *metadata;
    for (Finding& f : ineffectiveSuppressions(shell)) {
      const yaml::Position pos = list.sources.locate(f.pointer());
      ObjectRef object = listRef(list.value, f.pointer());
      found.suppressions.push_back(Located{std::move(f), pos.line, pos.column, list.index, "", std::move(object), {}});
    }
  }
  for (FindingStore* part : {&found.engine, &found.warnings, &found.suppressions}) report.findings.append(std::move(*part));
}

}  // namespace gpuguard::lint
