// A finding's fix as replacements in its file's text: the shape of SARIF
// 2.1.0's fix object (sections 3.55-3.57: a fix, its artifactChanges, their
// replacements), so that a viewer can offer the change --fix would make.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

// Deletes a region (1-based lines and columns, columns in Unicode code
// points, the end exclusive; start == end: an insertion point) and inserts
// `insertedText` in its place.
struct TextReplacement {
  int startLine = 0;
  int startColumn = 0;
  int endLine = 0;
  int endColumn = 0;
  std::string insertedText;
};

struct TextFix {
  std::string description;  // what the fix does, as --fix says it ("renamed requests to limits")
  std::vector<TextReplacement> replacements;  // in text order, not overlapping
};

// Text fixes of the findings of the documents of one text, planned as --fix
// plans them but each finding alone, so that each fix stands on its own.
class TextFixer {
 public:
  // At most this many findings of one document are planned alone (each plan
  // costs the document's size): a document with more gets none.
  static constexpr std::size_t kMaxFixesPerDocument = 16;

  // `text`: the whole input, alive as long as the fixer. Texts --fix does not
  // edit (a byte order mark, UTF-16, CR-only line breaks) get no fixes.
  explicit TextFixer(std::string_view text);
  ~TextFixer();
  TextFixer(const TextFixer&) = delete;
  TextFixer& operator=(const TextFixer&) = delete;

  // For each of `findings` (of `doc`, whose lines end at `lastLine`): its fix
  // as text, verified as --fix verifies (the edited document parses back to
  // the object the fix intends); nullopt for a finding without a fix, or
  // whose fix cannot be made or verified.
  std::vector<std::optional<TextFix>> fixesOf(const yaml::Document& doc, const std::vector<Finding>& findings,
                                              std::size_t lastLine) const;

  // The last line of a document followed by one starting at line
  // `nextStart` (0: none follows, the text's last line).
  std::size_t lastLineBefore(int nextStart) const;

 private:
  struct State;
  std::unique_ptr<const State> state_;  // null: the text gets no fixes
};

}  // namespace gpuguard::lint
