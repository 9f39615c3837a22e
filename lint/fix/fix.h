// --fix: rewrites what can be fixed without guessing, in the original text.
//
// yaml-cpp cannot write YAML back with its comments, so fixes are surgical
// text edits on the original bytes, placed with the line/column positions of
// the source map, and only on whole lines: untouched lines keep every byte
// (comments, quoting, blank lines, CRLF). What is fixed is what the rules ask
// for: each finding may carry a Fix (rules/fix.h), JSON-level edits this file
// writes as YAML without knowing the rule:
//   AddToList     items at the head of a block list (a new `name:` block
//                 when the list is missing, `name: []` or null);
//   SetMember     `key: value` lines at the head of a block map (a new
//                 block when the map is missing, `name: {}` or null);
//   RenameMember  the key renamed on its line, its quoting kept.
// A Fix without edits says why the finding is not fixed; the note repeats it.
// Not fixed, with a note saying why: documents with anchors, aliases or merge
// keys (an edit would change every object sharing the node), flow-style
// collections where a block edit is needed, and anything the check below
// rejects.
//
// Every fix is verified: the edited text is parsed again and each document
// must decode to exactly the JSON the fix intended (the original with the
// requested change and nothing else); a document that does not is left as
// it was.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/lint_file.h"
#include "lint/lint_policy.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

struct FixNote {
  int line = 0;  // of the finding
  int column = 0;
  std::string rule;
  bool fixed = false;
  std::string message;  // what was done, or why it was not
};

struct FixResult {
  std::string text;  // the fixed text (the input itself when nothing changed)
  std::vector<FixNote> notes;
  std::size_t fixed = 0;  // findings fixed
  bool changed = false;

  // For the report of `text` (lintParsed), so that a fixed file is parsed and
  // judged no more than it must be: the parse of `text` (the verification's,
  // when it changed; nullopt when none was kept, e.g. after a byte order
  // mark), and the findings of the documents no fix edited. An edited
  // document is judged again as it now reads; all are when an edit may change
  // what the input defines for the others (rules/input_facts.h).
  std::optional<yaml::ParseResult> parsed;
  PriorFindings judged;
};

// Fixes what can be fixed safely in one YAML/JSON stream.
FixResult fixText(std::string_view text, const LintPolicy& policy);

// A unified diff (3 lines of context) from `before` to `after`, with
// "--- a/NAME" / "+++ b/NAME" headers; "" when they are equal.
std::string unifiedDiff(std::string_view before, std::string_view after, const std::string& name);

}  // namespace gpuguard::lint
