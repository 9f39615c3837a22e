// One UTF-8 decoder for the whole project (the webhook's JSON reader and
// writers, the YAML loader, the linter's reports), so that "valid UTF-8"
// means the same everywhere: RFC 3629, i.e. no overlong forms, no encoded
// surrogates, nothing past U+10FFFF. It never reads past the end of its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpuguard::utf8 {

// Why a byte sequence is not UTF-8, in the order the checks are made (a
// truncated sequence is reported as truncated even if its bytes are wrong).
enum class Error : std::uint8_t {
  None,
  BadLeadByte,          // 0x80-0xC1 or 0xF5-0xFF cannot start a character
  Truncated,            // the input ends inside the sequence
  MissingContinuation,  // a byte after the lead is not 10xxxxxx
  OverlongOrOutOfRange, // 3- or 4-byte form of a smaller value, or > U+10FFFF
  Surrogate,            // U+D800-U+DFFF encoded directly
};

struct Decoded {
  // The character; also set for OverlongOrOutOfRange and Surrogate (the
  // value the bytes spell), so error messages can name it.
  char32_t codePoint = 0;
  std::uint8_t length = 0; // bytes consumed when valid (1-4); 0 on error
  Error error = Error::None;
};

// Decodes the character starting at s[i] (i < s.size()).
inline Decoded decode(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1, Error::None};
  std::uint8_t length;
  char32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, cp = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, cp = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, cp = lead & 0x07u;
  } else {
    return {0, 0, Error::BadLeadByte};
  }
  if (s.size() - i < length) return {0, 0, Error::Truncated};
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) return {0, 0, Error::MissingContinuation};
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if ((length == 3 && cp < 0x800) || (length == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
    return {cp, 0, Error::OverlongOrOutOfRange};
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) return {cp, 0, Error::Surrogate};
  return {cp, length, Error::None};
}

// The length of the longest prefix of `s` that is valid UTF-8 (s.size() when
// all of it is). Runs of ASCII are checked eight bytes at a time.
std::size_t validPrefix(std::string_view s);
inline bool isValid(std::string_view s) { return validPrefix(s) == s.size(); }

// Appends the UTF-8 encoding of `cp` (a Unicode scalar value) to `out`.
template <class String>
void append(String& out, char32_t cp) {
  using Char = typename String::value_type;
  if (cp < 0x80) {
    out += static_cast<Char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<Char>(0xC0 | (cp >> 6));
    out += static_cast<Char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<Char>(0xE0 | (cp >> 12));
    out += static_cast<Char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<Char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<Char>(0xF0 | (cp >> 18));
    out += static_cast<Char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<Char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<Char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace gpuguard::utf8
