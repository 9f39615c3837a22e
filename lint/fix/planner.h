// The planner of --fix: for one document, the line edits that make the
// fixes its findings carry, and the object the edited document must decode
// to (fix.h says what is fixed and how it is verified).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint/fix/fix.h"
#include "lint/fix/lines.h"
#include "rules/finding.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint::fix_detail {

// The fixes planned for one document.
struct DocPlan {
  std::size_t index = 0;
  nlohmann::json expected;  // what the document must decode to after the edits
  std::vector<Edit> edits;
  std::vector<std::pair<const Finding*, std::string>> fixed;  // finding, what was done
};

// Plans the fixes of one document (lines up to `lastLine`); findings that
// cannot be fixed get a note saying why.
DocPlan planDocument(const Lines& lines, const yaml::Document& doc, const std::vector<Finding>& findings,
                     std::size_t lastLine, std::vector<FixNote>& notes);

// A note on a finding, at its position in the document.
void noteFinding(const yaml::Document& doc, const Finding& f, bool fixed, std::string message,
                 std::vector<FixNote>& notes);

}  // namespace gpuguard::lint::fix_detail
