#include "lint/finding_store.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "lint/lint_list.h"

namespace gpuguard::lint {

// ---------------------------------------------------------------------------
// StringPool

StringPool::StringPool() : starts_{0}, slots_(16, 0) { intern(""); }

std::uint32_t StringPool::intern(std::string_view text) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = std::hash<std::string_view>{}(text) & mask;; slot = (slot + 1) & mask) {
    if (slots_[slot] == 0) {
      if (text_.size() + text.size() > UINT32_MAX) throw std::length_error("report strings beyond 4 GB");
      const auto id = static_cast<std::uint32_t>(starts_.size() - 1);
      text_.append(text);
      starts_.push_back(static_cast<std::uint32_t>(text_.size()));
      slots_[slot] = id + 1;
      if (2 * (starts_.size() - 1) > slots_.size()) grow();  // at most half full: short probes
      return id;
    }
    if (at(slots_[slot] - 1) == text) return slots_[slot] - 1;
  }
}

void StringPool::grow() {
  std::vector<std::uint32_t> slots(slots_.size() * 2, 0);
  const std::size_t mask = slots.size() - 1;
  for (std::uint32_t id = 0; id + 1 < starts_.size(); ++id) {
    std::size_t slot = std::hash<std::string_view>{}(at(id)) & mask;
    while (slots[slot] != 0) slot = (slot + 1) & mask;
    slots[slot] = id + 1;
  }
  slots_ = std::move(slots);
}

// ---------------------------------------------------------------------------
// FindingStore

FindingStore::FindingStore() : paths_(1) {}  // the root path: the empty key's, id 0
FindingStore::~FindingStore() = default;
FindingStore::FindingStore(const FindingStore&) = default;
FindingStore& FindingStore::operator=(const FindingStore&) = default;
FindingStore::FindingStore(FindingStore&&) noexcept = default;
FindingStore& FindingStore::operator=(FindingStore&&) noexcept = default;

namespace {

constexpr std::string_view kItems = "/items/";

// A path's steps as text that tells every path from every other: each
// step's kind, then its name's length and name, or its index.
void appendStep(std::string& key, const FieldPath::Step& step) {
  switch (step.kind) {
    case FieldPath::Step::Kind::Field: key += 'f'; break;
    case FieldPath::Step::Kind::Key: key += 'k'; break;
    case FieldPath::Step::Kind::Index: key += 'i' + std::to_string(step.index) + ';'; return;
  }
  key += std::to_string(step.name.size()) + ':';
  key += step.name;
}

}  // namespace

// A List item's findings have paths items[i]...: the part after items[i]
// repeats from item to item, so it is what is stored, with i beside it.
std::uint32_t FindingStore::internPath(const FieldPath& path, std::uint32_t& item) {
  const std::vector<FieldPath::Step> steps = path.segments();
  std::size_t first = 0;
  item = kNoItem;
  if (steps.size() >= 2 && steps[0].kind == FieldPath::Step::Kind::Field && steps[0].name == "items" &&
      steps[1].kind == FieldPath::Step::Kind::Index && steps[1].index < kNoItem) {
    item = static_cast<std::uint32_t>(steps[1].index);
    first = 2;
  }
  std::string key;
  for (std::size_t s = first; s < steps.size(); ++s) appendStep(key, steps[s]);
  const std::uint32_t id = pathKeys_.intern(key);
  if (id < paths_.size()) return id;
  FieldPath inner;
  for (std::size_t s = first; s < steps.size(); ++s) {
    const FieldPath::Step& step = steps[s];
    switch (step.kind) {
      case FieldPath::Step::Kind::Field: inner = inner.field(step.name); break;
      case FieldPath::Step::Kind::Key: inner = inner.key(step.name); break;
      case FieldPath::Step::Kind::Index: inner = inner.index(step.index); break;
    }
  }
  paths_.push_back(std::move(inner));
  return id;
}

// The same for an object's pointer: "/items/12/..." as 12 and "/...".
std::uint32_t FindingStore::internPointer(std::string_view pointer, std::uint32_t& item) {
  item = kNoItem;
  if (pointer.starts_with(kItems)) {
    const char* digits = pointer.data() + kItems.size();
    const char* end = pointer.data() + pointer.size();
    std::uint32_t index = 0;
    const auto [stop, ec] = std::from_chars(digits, end, index);
    // "/items/012" is no index; only what to_chars gives back is split.
    const bool canonical = stop != digits && (*digits != '0' || stop == digits + 1);
    if (ec == std::errc() && canonical && index < kNoItem && (stop == end || *stop == '/')) {
      item = index;
      return strings_.intern(pointer.substr(static_cast<std::size_t>(stop - pointer.data())));
    }
  }
  return strings_.intern(pointer);
}

void FindingStore::push_back(const Located& l) {
  const Finding& f = l.finding;
  Record r{};
  r.rule = strings_.intern(f.rule);
  r.file = strings_.intern(l.file);
  r.hasErrorValue = f.error.value.has_value();
  r.errorValue = r.hasErrorValue ? strings_.intern(*f.error.value) : 0;
  r.detail = strings_.intern(f.error.detail);
  r.remedy = strings_.intern(f.error.remedy);
  r.value = strings_.intern(f.value);
  r.reason = strings_.intern(f.suppressionReason);
  r.apiVersion = strings_.intern(l.object.apiVersion);
  r.kind = strings_.intern(l.object.kind);
  r.ns = strings_.intern(l.object.ns);
  r.name = strings_.intern(l.object.name);
  r.pointer = internPointer(l.object.pointer, r.pointerItem);
  r.podTemplate = strings_.intern(l.object.podTemplate);
  r.path = internPath(f.path, r.pathItem);
  r.line = l.line;
  r.column = l.column;
  r.document = static_cast<std::uint32_t>(l.document);  // documents of one input: < 64 MB of text
  r.severity = static_cast<std::uint8_t>(f.severity);
  r.errorType = static_cast<std::uint8_t>(f.error.type);
  r.suppressed = f.suppressed;
  if (f.fix || f.object || l.fix) {
    extras_.push_back(Extras{f.fix, f.object, l.fix});
    r.extras = static_cast<std::uint32_t>(extras_.size());
  }
  records_.push_back(r);
}

Located FindingStore::operator[](std::size_t i) const {
  const Record& r = records_[i];
  Located l;
  Finding& f = l.finding;
  f.rule = text(r.rule);
  f.severity = static_cast<Severity>(r.severity);
  f.path = r.pathItem == kNoItem ? paths_[r.path] : itemPath(r.pathItem, paths_[r.path]);
  f.error.type = static_cast<FieldErrorType>(r.errorType);
  if (r.hasErrorValue) f.error.value = std::string(text(r.errorValue));
  f.error.detail = text(r.detail);
  f.error.remedy = text(r.remedy);
  f.value = text(r.value);
  f.suppressed = r.suppressed;
  f.suppressionReason = text(r.reason);
  l.line = r.line;
  l.column = r.column;
  l.document = r.document;
  l.file = text(r.file);
  l.object.apiVersion = text(r.apiVersion);
  l.object.kind = text(r.kind);
  l.object.ns = text(r.ns);
  l.object.name = text(r.name);
  if (r.pointerItem != kNoItem) l.object.pointer = std::string(kItems) + std::to_string(r.pointerItem);
  l.object.pointer += text(r.pointer);
  l.object.podTemplate = text(r.podTemplate);
  if (r.extras != 0) {
    const Extras& extras = extras_[r.extras - 1];
    f.fix = extras.fix;
    f.object = extras.object;
    l.fix = extras.textFix;
  }
  return l;
}

void FindingStore::append(FindingStore&& other) {
  if (empty()) {
    std::swap(*this, other);  // nothing to re-intern; `other` gets this empty store
    return;
  }
  for (std::size_t i = 0; i < other.size(); ++i) push_back(other[i]);
  other.clear();
}

std::string_view FindingStore::ruleAt(std::size_t i) const { return text(records_[i].rule); }

bool FindingStore::suppressedAt(std::size_t i) const { return records_[i].suppressed; }

void FindingStore::suppress(std::size_t i, std::string_view reason) {
  records_[i].suppressed = true;
  records_[i].reason = strings_.intern(reason);
}

void FindingStore::sortFrom(std::size_t first) {
  auto lineOrder = [this](const Record& a, const Record& b) {
    return std::tuple(text(a.file), a.line, a.column) < std::tuple(text(b.file), b.line, b.column);
  };
  const auto begin = records_.begin() + static_cast<std::ptrdiff_t>(first);
  if (!std::is_sorted(begin, records_.end(), lineOrder)) std::stable_sort(begin, records_.end(), lineOrder);
}

}  // namespace gpuguard::lint
