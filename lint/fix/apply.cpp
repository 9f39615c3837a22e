#include "lint/fix/apply.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace gpuguard::lint::fix_detail {

std::string applyEdits(const Lines& lines, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return std::pair(a.line, a.remove) < std::pair(b.line, b.remove);
  });
  std::string out;
  std::size_t next = 0;
  for (std::size_t n = 1; n <= lines.count() + 1; ++n) {
    bool replaced = false;
    while (next < edits.size() && edits[next].line == n) {
      const Edit& e = edits[next++];
      for (std::size_t k = 0; k < e.lines.size(); ++k) {
        out += e.lines[k];
        // The last line of a replacement keeps the replaced line's break.
        const bool last = k + 1 == e.lines.size();
        out += e.remove > 0 && last ? std::string(lines.lineBreak(n + e.remove - 1)) : lines.eol();
      }
      if (e.remove > 0) {
        n += e.remove - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced && n <= lines.count()) {
      const std::string_view full = lines.full(n);
      out += full;
      // New lines inserted after a last line without a break need one.
      if (n == lines.count() && lines.lineBreak(n).empty() && next < edits.size()) out += lines.eol();
    }
  }
  return out;
}

bool TakenLines::take(const std::vector<Edit>& edits) {
  std::vector<const Edit*> added;
  for (const Edit& e : edits) {
    if (collides(e)) {
      for (const Edit* a : added) forget(*a);
      return false;
    }
    remember(e);
    added.push_back(&e);
  }
  return true;
}

// Two replacements overlap, or an insertion falls strictly inside a
// replacement (an insertion at its first line goes in front of it).
bool TakenLines::collides(const Edit& e) const {
  if (e.remove > 0) {
    const std::size_t end = e.line + e.remove;
    auto before = replaced_.lower_bound(end);  // replaced ranges are disjoint: sorted by start and end
    if (before != replaced_.begin() && std::prev(before)->second > e.line) return true;
    const auto insert = inserts_.upper_bound(e.line);
    return insert != inserts_.end() && *insert < end;
  }
  auto after = replaced_.lower_bound(e.line);
  return after != replaced_.begin() && e.line < std::prev(after)->second && std::prev(after)->first < e.line;
}

void TakenLines::remember(const Edit& e) {
  if (e.remove > 0) replaced_.emplace(e.line, e.line + e.remove);
  else inserts_.insert(e.line);
}

void TakenLines::forget(const Edit& e) {
  if (e.remove > 0) replaced_.erase(e.line);
  else inserts_.erase(inserts_.find(e.line));
}

}  // namespace gpuguard::lint::fix_detail
