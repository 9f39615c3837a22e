// The findings of one report, kept compact. A large input (a whole
// cluster's export) has a finding or more per object, and a Located with
// its strings and field path costs ~1.5 KB, several times the text of the
// object it is about. What repeats from finding to finding (the rule id,
// the messages, the object's kind and namespace, the field path) is stored
// once per store, and each finding keeps ids into that (~90 bytes); a
// Located is built again, whole, when a finding is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/fix/text_fix.h"
#include "rules/finding.h"
#include "rules/k8s/field_path.h"

namespace gpuguard::lint {

struct Located {
  Finding finding;           // its `object` (moved to the one below) and `fix` (judging's) are unset
  int line = 0;              // 0: the file as a whole (a rendered object not traced to a line)
  int column = 0;
  std::size_t document = 0;  // 0-based index in the stream
  std::string file;          // where the finding's source is, when not the report's file
                             // (a kustomize base or patch, a Helm template); "" otherwise
  ObjectRef object;          // the Kubernetes object it is about (a List's item, not the List)
  std::optional<TextFix> fix;  // LintOptions::textFixes: the change --fix would make for it alone
};

// Strings stored once each, in one buffer, found again by content.
class StringPool {
 public:
  StringPool();
  std::uint32_t intern(std::string_view text);
  std::string_view at(std::uint32_t id) const {
    return std::string_view(text_).substr(starts_[id], starts_[id + 1] - starts_[id]);
  }

 private:
  void grow();

  std::string text_;                   // every string, one after another
  std::vector<std::uint32_t> starts_;  // string i is text_[starts_[i], starts_[i + 1])
  std::vector<std::uint32_t> slots_;   // open addressing by hash: id + 1, 0 for none
};

class FindingStore {
 public:
  FindingStore();
  ~FindingStore();
  FindingStore(const FindingStore&);
  FindingStore& operator=(const FindingStore&);
  FindingStore(FindingStore&&) noexcept;
  FindingStore& operator=(FindingStore&&) noexcept;

  using value_type = Located;
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Located;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Located;
    const_iterator(const FindingStore* store, std::size_t at) : store_(store), at_(at) {}
    Located operator*() const { return (*store_)[at_]; }
    const_iterator& operator++() { ++at_; return *this; }
    const_iterator operator++(int) { const_iterator before = *this; ++at_; return before; }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.at_ == b.at_; }

   private:
    const FindingStore* store_;
    std::size_t at_;
  };

  void push_back(const Located& located);
  // The findings of `other` after these, in their order; `other` is left empty.
  void append(FindingStore&& other);
  std::size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  Located operator[](std::size_t i) const;
  Located back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }
  void clear() { *this = FindingStore(); }

  // What a List's own suppression annotation needs of finding i.
  std::string_view ruleAt(std::size_t i) const;
  bool suppressedAt(std::size_t i) const;
  void suppress(std::size_t i, std::string_view reason);

  // Findings [first, size()) in line order: by file (Located::file), line
  // and column, findings at one place kept in their order (a stable sort;
  // none when they are in order already).
  void sortFrom(std::size_t first);

 private:
  static constexpr std::uint32_t kNoItem = UINT32_MAX;
  struct Record {
    std::uint32_t rule, file, errorValue, detail, remedy, value, reason;  // strings_ ids
    std::uint32_t apiVersion, kind, ns, name, pointer, podTemplate;      // the object's
    std::uint32_t path;                   // paths_ id
    std::uint32_t pathItem, pointerItem;  // kNoItem, or the List item the path / pointer starts in
    std::int32_t line, column;
    std::uint32_t document;
    std::uint32_t extras;  // 0: none, else extras_[extras - 1]
    std::uint8_t severity, errorType;
    bool suppressed, hasErrorValue;
  };
  // What few findings carry: fixes (SARIF's, --fix's), an object a front
  // end did not take off the finding.
  struct Extras {
    std::optional<Fix> fix;
    std::optional<ObjectRef> object;
    std::optional<TextFix> textFix;
  };
  std::string_view text(std::uint32_t id) const { return strings_.at(id); }
  std::uint32_t internPath(const FieldPath& path, std::uint32_t& item);
  std::uint32_t internPointer(std::string_view pointer, std::uint32_t& item);

  StringPool strings_;
  StringPool pathKeys_;             // a path's steps as text, its id that of paths_
  std::vector<FieldPath> paths_;
  std::deque<Record> records_;  // grown without the copy (and the spare half) by which a vector grows
  std::vector<Extras> extras_;  // by Record::extras - 1
};

}  // namespace gpuguard::lint
