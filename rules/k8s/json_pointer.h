// RFC 6901 reference tokens: how findings, source maps, JSONPatch operations
// and kustomize paths name a JSON node. One implementation for every module.
#pragma once

#include <string>
#include <string_view>

namespace gpuguard {

// Appends `token` escaped ("~" -> "~0", "/" -> "~1"); most tokens need no
// escaping and are appended as they are.
inline void appendJsonPointerToken(std::string& out, std::string_view token) {
  if (token.find_first_of("~/") == std::string_view::npos) {
    out.append(token);
    return;
  }
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
}

// Escapes one reference token for a JSON pointer ("nvidia.com/gpu" -> "nvidia.com~1gpu").
inline std::string escapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  appendJsonPointerToken(out, token);
  return out;
}

// The member name or index a reference token stands for ("~1" -> "/",
// "~0" -> "~"; a "~" before anything else is kept as written).
inline std::string unescapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

}  // namespace gpuguard
