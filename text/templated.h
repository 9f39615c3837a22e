// Template placeholders nobody means literally: ${X}, $(X), {{ x }}. A value
// holding one is filled in later (Helm, envsubst, the kubelet's $(VAR)
// expansion), so the rules judge no literal in it.
#pragma once

#include <string_view>

namespace gpuguard::text {

inline bool looksTemplated(std::string_view s) {
  return s.find("${") != std::string_view::npos || s.find("$(") != std::string_view::npos ||
         s.find("{{") != std::string_view::npos;
}

}  // namespace gpuguard::text
