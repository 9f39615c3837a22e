// Small text helpers shared by the webhook's JSON writers (admission replies,
// log lines): UTF-8 decoding that never fails, and JSON string literals that
// are valid whatever bytes they are given.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuguard::webhook {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

// Decodes one code point at s[i] and advances i. Invalid sequences (overlong,
// surrogates, > U+10FFFF, truncated, stray continuation bytes) decode as
// U+FFFD and consume one byte.
char32_t decodeUtf8(std::string_view s, std::size_t& i);
void appendUtf8(std::string& out, char32_t codePoint);

// The number of code points (invalid bytes count one each).
std::size_t runeCount(std::string_view text);
// The longest prefix of `text` holding at most `n` code points.
std::string_view firstRunes(std::string_view text, std::size_t n);

// Appends `s` as a JSON string literal. Invalid UTF-8 becomes U+FFFD and
// control characters are escaped, so the output is always valid JSON.
void appendJsonString(std::string& out, std::string_view s);

}  // namespace gpuguard::webhook
