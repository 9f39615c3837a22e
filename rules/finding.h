// A finding: one thing wrong with one field of one object, phrased like the
// API server's own field errors ("<field>: Invalid value: "500m": ...").
#pragma once

#include <string>
#include <string_view>

namespace gpuguard {

enum class Severity { Error, Warning };

std::string_view severityName(Severity s);

struct Finding {
  std::string rule;      // the rule id, e.g. "gpu-fractional"
  Severity severity = Severity::Error;
  std::string field;     // API server notation: spec.containers[0].resources.limits[nvidia.com/gpu]
  std::string pointer;   // RFC 6901 pointer to the same node: /spec/containers/0/resources/limits/nvidia.com~1gpu
  std::string value;     // the offending value as written, "" when the problem is something missing
  std::string message;   // what is wrong and what to do, without the field path
  bool suppressed = false;
  std::string suppressionReason;  // from the ignore.gpuguard.io/<rule> annotation

  // "<field>: <message>", the form kubectl users know from API errors.
  std::string fieldError() const;
};

}  // namespace gpuguard
