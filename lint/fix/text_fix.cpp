#include "lint/fix/text_fix.h"

#include <algorithm>
#include <utility>

#include "lint/fix/apply.h"
#include "lint/fix/lines.h"
#include "lint/fix/planner.h"
#include "lint/lint_file.h"

namespace gpuguard::lint {
namespace {

using namespace fix_detail;

int codePoints(std::string_view s) {
  int n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string joined(const std::vector<std::string>& lines, const std::string& eol, bool breakAfterLast) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size() || breakAfterLast) out += eol;
  }
  return out;
}

// One line edit as a replacement, as applyEdits() applies it: a replacement
// keeps the break of the last line it replaces; an insertion goes before its
// line, or after the last line (then written as that line, rewritten).
TextReplacement replacementOf(const Lines& lines, const Edit& e) {
  const int line = static_cast<int>(e.line);
  if (e.remove > 0) {
    const std::size_t last = e.line + e.remove - 1;
    return {line, 1, static_cast<int>(last), codePoints(lines.line(last)) + 1, joined(e.lines, lines.eol(), false)};
  }
  if (e.line <= lines.count()) return {line, 1, line, 1, joined(e.lines, lines.eol(), true)};
  const std::size_t last = lines.count();
  const bool lastHasBreak = !lines.lineBreak(last).empty();
  std::string text = std::string(lines.line(last)) + lines.eol() + joined(e.lines, lines.eol(), !lastHasBreak);
  return {static_cast<int>(last), 1, static_cast<int>(last), codePoints(lines.line(last)) + 1, std::move(text)};
}

// Whether the plan's edits, applied to the document's lines alone, parse back
// to the one object the plan intends.
bool verified(const Lines& lines, std::size_t firstLine, std::size_t lastLine, const DocPlan& plan) {
  std::string documentText;
  for (std::size_t n = firstLine; n <= lastLine; ++n) documentText += lines.full(n);
  const Lines documentLines(documentText);
  std::vector<Edit> edits = plan.edits;
  for (Edit& e : edits) {
    if (e.line < firstLine || e.line > lastLine + 1) return false;
    e.line -= firstLine - 1;
  }
  const yaml::ParseResult again = yaml::parseStream(applyEdits(documentLines, std::move(edits)), manifestLimits());
  return !again.error && again.errors.empty() && again.documents.size() == 1 &&
         again.documents.front().value == plan.expected;
}

}  // namespace

struct TextFixer::State {
  explicit State(std::string_view text) : lines(text) {}
  Lines lines;
};

TextFixer::TextFixer(std::string_view text) {
  bool loneCr = false;
  for (std::size_t cr = text.find('\r'); cr != std::string_view::npos && !loneCr; cr = text.find('\r', cr + 1)) {
    loneCr = cr + 1 == text.size() || text[cr + 1] != '\n';
  }
  const bool marked = text.starts_with("\xEF\xBB\xBF") || text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE");
  if (!loneCr && !marked) state_ = std::make_unique<const State>(text);
}

TextFixer::~TextFixer() = default;

std::size_t TextFixer::lastLineBefore(int nextStart) const {
  if (!state_) return 0;
  return nextStart > 0 ? static_cast<std::size_t>(nextStart - 1) : state_->lines.count();
}

std::vector<std::optional<TextFix>> TextFixer::fixesOf(const yaml::Document& doc, const std::vector<Finding>& findings,
                                                       std::size_t lastLine) const {
  std::vector<std::optional<TextFix>> fixes(findings.size());
  if (!state_ || doc.start.line < 1) return fixes;
  std::vector<std::size_t> fixable;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (!findings[i].suppressed && findings[i].fix && !findings[i].fix->edits.empty()) fixable.push_back(i);
  }
  if (fixable.size() > kMaxFixesPerDocument) return fixes;
  const Lines& lines = state_->lines;
  for (std::size_t i : fixable) {
    const std::vector<Finding> alone{findings[i]};
    std::vector<FixNote> notes;  // why a finding is not fixed: --fix says it, not the report
    const DocPlan plan = planDocument(lines, doc, alone, lastLine, notes);
    if (plan.edits.empty() || plan.fixed.size() != 1) continue;
    if (!verified(lines, static_cast<std::size_t>(doc.start.line), lastLine, plan)) continue;
    std::vector<Edit> edits = plan.edits;
    std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
      return std::pair(a.line, a.remove) < std::pair(b.line, b.remove);
    });
    TextFix fix{plan.fixed.front().second, {}};
    for (const Edit& e : edits) fix.replacements.push_back(replacementOf(lines, e));
    fixes[i] = std::move(fix);
  }
  return fixes;
}

}  // namespace gpuguard::lint
