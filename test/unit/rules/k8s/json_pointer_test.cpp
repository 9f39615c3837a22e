// rules/k8s/json_pointer: RFC 6901 reference tokens, escaped one way for
// findings, source maps and JSONPatch, read back by the kustomize mapping.
#include "rules/k8s/json_pointer.h"

#include <gtest/gtest.h>

namespace gpuguard {
namespace {

TEST(JsonPointerToken, EscapingAndUnescapingAreInverse) {
  for (const char* token : {"nvidia.com/gpu", "a~b", "~1", "~/~/", "plain", ""}) {
    EXPECT_EQ(unescapeJsonPointerToken(escapeJsonPointerToken(token)), token) << token;
  }
}

TEST(JsonPointerToken, UnescapesTildeOneToSlashAndTildeZeroToTilde) {
  EXPECT_EQ(unescapeJsonPointerToken("nvidia.com~1gpu"), "nvidia.com/gpu");
  EXPECT_EQ(unescapeJsonPointerToken("~01"), "~1");  // "~0" first, then a plain "1"
  EXPECT_EQ(unescapeJsonPointerToken("a~"), "a~");   // no escape: kept as written
}

TEST(JsonPointerToken, AppendingAddsToWhatIsThere) {
  std::string pointer = "/spec/containers/0/resources/limits/";
  appendJsonPointerToken(pointer, "nvidia.com/gpu");
  EXPECT_EQ(pointer, "/spec/containers/0/resources/limits/nvidia.com~1gpu");
}

}  // namespace
}  // namespace gpuguard
