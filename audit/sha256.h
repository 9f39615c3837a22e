// SHA-256 as lowercase hex (OpenSSL): the digests that tell the audit when a
// report or an object changed.
#pragma once

#include <string>
#include <string_view>

namespace gpuguard::audit {

// 64 lowercase hex digits.
std::string sha256Hex(std::string_view bytes);

}  // namespace gpuguard::audit
