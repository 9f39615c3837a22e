// Go's strconv integer parsing, to the letter: Kubernetes parses node-affinity
// Gt/Lt values and toleration seconds with strconv.ParseInt(s, 10, 64), and
// go-yaml (kubectl's YAML reader) resolves plain scalars with
// strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64). One implementation for both.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuguard {

// strconv.ParseUint(s, base, 64) for base 10 or 0, without underscores (go-yaml
// removes them before it asks). Base 0 reads "0x"/"0X" hex, "0b"/"0B" binary,
// "0o"/"0O" or a leading "0" octal (a prefix needs one more character: "0x"
// alone is a syntax error), else decimal. No sign, no spaces, in range.
std::optional<std::uint64_t> parseGoUint(std::string_view s, int base = 10);

// strconv.ParseInt(s, base, 64): an optional sign, then parseGoUint's syntax,
// within [-2^63, 2^63-1].
std::optional<long long> parseGoInt(std::string_view s, int base = 10);

// What strconv.FormatUint(n, 10) writes for some n below 10^18: a canonical
// non-negative decimal integer ("0", "550", not "0550" or "+5"). GPU Feature
// Discovery writes its integer labels this way.
bool isCanonicalUnsigned(std::string_view s);

}  // namespace gpuguard
