// Linting one input (a file or stdin): YAML stream -> documents -> findings
// with file positions. Knows nothing of output formats.
#pragma once

#include <string>
#include <vector>

#include "rules/finding.h"
#include "rules/policy.h"

namespace gpuguard::lint {

struct Located {
  Finding finding;
  int line = 0;
  int column = 0;
  std::size_t document = 0;  // 0-based index in the stream
};

struct InputError {
  std::string file;
  int line = 0;  // 0 when the file could not be read at all
  int column = 0;
  std::string message;
};

struct FileReport {
  std::string file;          // as given on the command line, "<stdin>" for "-"
  std::vector<Located> findings;  // in line order
  std::vector<InputError> errors;
  std::size_t documents = 0;      // Kubernetes objects judged
};

// Lints YAML/JSON text. `file` names it in the report.
FileReport lintText(const std::string& file, std::string_view text, const Policy& policy);

// Reads and lints a file ("-" is stdin). Read errors become InputErrors.
FileReport lintPath(const std::string& path, const Policy& policy);

}  // namespace gpuguard::lint
