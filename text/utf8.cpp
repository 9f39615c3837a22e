#include "text/utf8.h"

#include <cstdint>
#include <cstring>

namespace gpuguard::utf8 {

std::size_t validPrefix(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    while (s.size() - i >= 8) {
      std::uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i == s.size()) break;
    const Decoded c = decode(s, i);
    if (c.error != Error::None) return i;
    i += c.length;
  }
  return s.size();
}

}  // namespace gpuguard::utf8
