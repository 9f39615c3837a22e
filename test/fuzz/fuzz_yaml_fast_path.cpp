// The YAML fast path (yaml/yaml_fast_path.h) against yaml-cpp on arbitrary
// input taken as one '---' section. Invariant: whenever the fast path takes
// the input, its events are exactly yaml-cpp's (marks, tags, styles,
// values, and nothing after the document), whether handed over in chunks
// or all at once; it never crashes either way.
//
// An input whose first byte is '\x01' is a recipe rather than text: each
// following pair of bytes picks an indentation and a line fragment, so the
// fuzzer explores how the fast path's constructs nest and line up (where a
// byte-level mutation of a manifest mostly breaks it into a bail-out).
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "test/fuzz/fuzz_common.h"
#include "test/unit/yaml/yaml_event_log.h"

namespace {

constexpr std::array<std::string_view, 40> kFragments = {
    "- ", "-", "key: value", "key:", "k2: v # c", "- name: x", "- a: 1", "a", "b c", "'q''s'", "\"e\\n\\x41\"",
    "\"\"", "key: |", "key: >-", "key: |+", "key: >2", "- |", "text", "  more", "[a, b]", "{k: v}", "[]", "{}",
    "key: [1, \"x\", {a: b}]", "# comment", "", "~", "null", "key: ~", "'k': v", "\"k\": v", "key: 'x'  # c",
    "- [a]", "- {k: v}", "k: -1", "k: a:b", "k: a #b", "key:   ", "- - x", "key: \"a\\\"b\""};

std::string fromRecipe(std::string_view recipe) {
  std::string text;
  for (std::size_t i = 0; i + 1 < recipe.size(); i += 2) {
    text.append(static_cast<unsigned char>(recipe[i]) % 9, ' ');
    text += kFragments[static_cast<unsigned char>(recipe[i + 1]) % kFragments.size()];
    text += '\n';
  }
  if (recipe.size() % 2 == 1 && !text.empty()) text.pop_back();  // an odd length: no final line break
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string generated;
  if (!input.empty() && input[0] == '\x01') {
    generated = fromRecipe(input.substr(1));
    input = generated;
  }
  const auto fast = gpuguard::yaml::testing::fastPathEvents(input);
  // Handed over at every safe point or all at the end: the same events.
  FUZZ_CHECK(gpuguard::yaml::testing::fastPathEvents(input, SIZE_MAX) == fast);
  if (!fast) return 0;
  const auto reference = gpuguard::yaml::testing::yamlCppEvents(input);
  if (reference != fast)
    std::fprintf(stderr, "input:\n%.*s\nfast path:\n%s\nyaml-cpp:\n%s\n", static_cast<int>(input.size()), input.data(), fast->c_str(),
                 reference ? reference->c_str() : "(error)\n");
  FUZZ_CHECK(reference == fast);
  return 0;
}
