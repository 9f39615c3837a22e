// --format text: "path:line:col: error: Kind/ns/name: field: message [rule-id]", like a compiler.
#include "lint/report/report.h"

namespace gpuguard::lint {
namespace {

const char* const kBold = "\033[1m";
const char* const kRed = "\033[1;31m";
const char* const kYellow = "\033[1;33m";
const char* const kGrey = "\033[2m";
const char* const kReset = "\033[0m";

std::string where(const std::string& file, int line, int column) {
  const std::string shown = printable(file);
  return line > 0 ? shown + ":" + std::to_string(line) + ":" + std::to_string(column) + ":" : shown + ":";
}

}  // namespace

void writeText(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  auto paint = [&](const char* code, const std::string& s) {
    return options.color ? std::string(code) + s + kReset : s;
  };
  for (const FileReport& r : reports) {
    for (const InputError& e : r.errors) {
      out << paint(kBold, where(e.file, e.line, e.column)) << " " << paint(kRed, "error:") << " " << printable(e.message) << "\n";
    }
    for (const Located& l : r.findings) {
      const Finding& f = l.finding;
      if (f.suppressed && !options.showSuppressed) continue;
      std::string label = f.suppressed ? "suppressed:" : std::string(severityName(f.severity)) + ":";
      const char* colour = f.suppressed ? kGrey : f.severity == Severity::Error ? kRed : kYellow;
      out << paint(kBold, where(fileOf(r, l), l.line, l.column)) << " " << paint(colour, label) << " "
          << printable(l.object.display()) << ": " << printable(f.fieldError()) << " "
          << paint(kGrey, "[" + f.rule + "]");
      if (f.suppressed) out << " (" << printable(f.suppressionReason) << ")";
      out << "\n";
    }
  }
  const RunSummary s = summarize(reports);
  if (s.errors || s.warnings || s.suppressed || s.inputErrors) {
    out << summaryLine(s) << "\n";
  }
}

}  // namespace gpuguard::lint
