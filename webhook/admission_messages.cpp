#include "webhook/admission_messages.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <utility>

#include "webhook/json_text.h"

namespace gpuguard::webhook {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one rune

// Go's unicode.IsControl: C0, DEL and C1. Line and paragraph separators are
// not controls to Go, but no header should carry them either.
bool isControl(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029;
}

}  // namespace

std::string sanitizeWarning(std::string_view text, std::size_t maxRunes) {
  std::string clean;
  clean.reserve(text.size());
  std::size_t i = 0;
  bool lastSpace = true;  // drops leading spaces
  while (i < text.size()) {
    char32_t cp = decodeUtf8(text, i);
    if (isControl(cp)) cp = ' ';
    if (cp == ' ') {
      if (lastSpace) continue;
      lastSpace = true;
    } else {
      lastSpace = false;
    }
    appendUtf8(clean, cp);
  }
  while (!clean.empty() && clean.back() == ' ') clean.pop_back();
  if (maxRunes == 0) return {};
  if (runeCount(clean) <= maxRunes) return clean;
  std::string cut(firstRunes(clean, maxRunes - 1));
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + std::string(kEllipsis);
}

std::string warningText(const Finding& f, std::string_view suffix, const AdmissionLimits& limits,
                        std::string_view prefix) {
  std::string head = f.rule + ": " + std::string(prefix);
  if (const std::string field = f.field(); !field.empty()) head += field + ": ";
  const std::string tail = sanitizeWarning(suffix, limits.maxWarningRunes / 2);
  const std::size_t tailRunes = tail.empty() ? 0 : runeCount(tail) + 1;  // and a space
  std::string text = sanitizeWarning(head + f.message(), SIZE_MAX);
  if (runeCount(text) + tailRunes > limits.preferredWarningRunes) {
    text = sanitizeWarning(head + f.error.problem(), SIZE_MAX);
  }
  text = sanitizeWarning(text, limits.maxWarningRunes > tailRunes ? limits.maxWarningRunes - tailRunes : 1);
  return tail.empty() ? text : text + " " + tail;
}

std::string denialEntry(const Finding& f) { return f.fieldError() + " [" + f.rule + "]"; }

std::string denialMessage(const std::vector<std::string>& entries, const AdmissionLimits& limits) {
  // First occurrences, in order. A hash set keeps this linear: an object
  // can carry tens of thousands of findings (one per resource entry).
  std::vector<const std::string*> unique;
  std::unordered_set<std::string_view> seen;
  for (const std::string& e : entries) {
    if (seen.insert(e).second) unique.push_back(&e);
  }
  if (unique.size() == 1) {
    const std::string& only = *unique.front();
    if (runeCount(only) <= limits.maxDenialMessageRunes) return only;
    return std::string(firstRunes(only, limits.maxDenialMessageRunes - 1)) + std::string(kEllipsis);
  }
  std::string out = "[";
  std::size_t runes = 1;
  std::size_t shown = 0;
  constexpr std::size_t kTailReserve = 24;  // ", and 999 more]"
  for (const std::string* e : unique) {
    const std::size_t r = runeCount(*e) + (shown ? 2 : 0);
    const bool fits = runes + r + kTailReserve <= limits.maxDenialMessageRunes;
    if (shown >= limits.maxDenialErrors || (!fits && shown > 0)) break;
    if (shown) out += ", ";
    if (fits) {
      out += *e;
      runes += r;
    } else {  // the first entry alone is too long: cut it
      const std::size_t room = limits.maxDenialMessageRunes - runes - kTailReserve;
      out += firstRunes(*e, room > 1 ? room - 1 : 0);
      out += kEllipsis;
      runes += room;
    }
    ++shown;
  }
  if (shown < unique.size()) out += ", and " + std::to_string(unique.size() - shown) + " more";
  out += ']';
  return out;
}

void WarningList::add(std::string text) {
  if (text.empty()) return;
  if (std::find(items_.begin(), items_.end(), text) != items_.end()) return;
  const std::size_t runes = runeCount(text);
  if (omitted_ == 0 && total_ + runes + kNoteReserve <= limits_.maxWarningTotalRunes) {
    total_ += runes;
    items_.push_back(std::move(text));
  } else {
    ++omitted_;
  }
}

std::vector<std::string> WarningList::finish() && {
  if (omitted_ > 0) {
    items_.push_back("gpuguard: and " + std::to_string(omitted_) + " more warning" + (omitted_ == 1 ? "" : "s") +
                     " (see the webhook's log or run gpuguard-lint)");
  }
  return std::move(items_);
}

}  // namespace gpuguard::webhook
