// The Prometheus text format's building blocks, shared by the renderers of
// /metrics (webhook/metrics.cpp, webhook/audit_metrics.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpuguard::webhook {

inline std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

inline void sample(std::string& out, std::string_view name, std::string_view labels, std::uint64_t value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  out += std::to_string(value);
  out += '\n';
}

}  // namespace gpuguard::webhook
