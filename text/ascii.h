// ASCII-only case folding: Kubernetes names, label keys and image names are
// ASCII, and locale-dependent tolower would fold differently per machine.
#pragma once

#include <string>
#include <string_view>

namespace gpuguard::text {

inline std::string asciiLowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace gpuguard::text
