// Levenshtein distance, for "did you mean" advice: a misspelt rule id in a
// suppression, a resource domain like nvida.com, a toleration key one
// letter off the GPU taint's.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpuguard::text {

// The fewest single-byte insertions, deletions and substitutions that turn
// `a` into `b`. Linear memory; quadratic time, so for short names only.
std::size_t editDistance(std::string_view a, std::string_view b);

}  // namespace gpuguard::text
