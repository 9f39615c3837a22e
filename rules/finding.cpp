#include "rules/finding.h"

namespace gpuguard {

std::string_view severityName(Severity s) { return s == Severity::Error ? "error" : "warning"; }

std::string Finding::fieldError() const {
  const std::string where = field();
  return where.empty() ? message() : where + ": " + message();
}

}  // namespace gpuguard
