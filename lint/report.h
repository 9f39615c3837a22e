// Writing a lint run's results in one of the output formats.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "lint/lint_file.h"

namespace gpuguard::lint {

struct RunSummary {
  std::size_t files = 0;
  std::size_t documents = 0;
  std::size_t errors = 0;      // unsuppressed error findings
  std::size_t warnings = 0;    // unsuppressed warning findings
  std::size_t suppressed = 0;
  std::size_t inputErrors = 0;
};

RunSummary summarize(const std::vector<FileReport>& reports);

struct ReportOptions {
  bool color = false;           // text only: ANSI colours
  bool showSuppressed = false;  // list suppressed findings too
};

void writeText(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);
void writeJson(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);

}  // namespace gpuguard::lint
