// Helpers shared by the libFuzzer harnesses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// A failed invariant: print it and abort, so libFuzzer records a crash input.
#define FUZZ_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)

namespace gpuguard::fuzz {

// Deepest [ / { nesting of JSON text, strings skipped. Iterative, so a guard
// against inputs whose recursive handling (judge, dump, destructors) would
// only measure the stack size.
inline std::size_t jsonNesting(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// The shape cost of JSON text: the values it holds in objects and arrays
// (each '{', '[' and ',' outside strings), what a review's work grows with
// (containers, resource entries, findings, patch operations). Harnesses skip
// input above a budget of this instead of capping bytes (issue 23: a 16 KB cap
// hid work that grows with the shape; long strings cost little).
inline std::size_t jsonShapeCost(std::string_view text) {
  std::size_t cost = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{' || c == ',') {
      ++cost;
    }
  }
  return cost;
}

// UTF-8 code points in valid UTF-8 text (continuation bytes not counted).
inline std::size_t runes(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace gpuguard::fuzz
