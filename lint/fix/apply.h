// Applying the line edits of --fix (lines.h's Edit) to a text, and keeping
// the plans whose edits do not collide: the step between the planner
// (planner.h) and the verification in fix.cpp.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lint/fix/lines.h"

namespace gpuguard::lint::fix_detail {

// Applies non-overlapping edits (sorted by line; inserts before replacements
// at the same line). Untouched lines keep every byte; a replacement keeps the
// line break of the last line it replaces; new lines take the file's.
std::string applyEdits(const Lines& lines, std::vector<Edit> edits);

// The lines the kept plans edit: replaced ranges and insertion points, so
// that a plan colliding with an earlier one is found in logarithmic time
// (thousands of fixes in one file stay linear).
class TakenLines {
 public:
  // Takes every edit of a plan, or none when one collides with what is
  // taken (or with another edit of the same plan).
  bool take(const std::vector<Edit>& edits);

 private:
  bool collides(const Edit& e) const;
  void remember(const Edit& e);
  void forget(const Edit& e);

  std::map<std::size_t, std::size_t> replaced_;  // first line -> one past the last
  std::multiset<std::size_t> inserts_;
};

}  // namespace gpuguard::lint::fix_detail
