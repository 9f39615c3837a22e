#include "lint/report.h"

namespace gpuguard::lint {

RunSummary summarize(const std::vector<FileReport>& reports) {
  RunSummary s;
  s.files = reports.size();
  for (const FileReport& r : reports) {
    s.documents += r.documents;
    s.inputErrors += r.errors.size();
    for (const Located& l : r.findings) {
      if (l.finding.suppressed) ++s.suppressed;
      else if (l.finding.severity == Severity::Error) ++s.errors;
      else ++s.warnings;
    }
  }
  return s;
}

}  // namespace gpuguard::lint
