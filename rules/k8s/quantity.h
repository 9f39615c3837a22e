// Kubernetes resource.Quantity, reimplemented to the letter of
// k8s.io/apimachinery/pkg/api/resource (ParseQuantity, parseQuantityString,
// suffixHandler.interpret, CanonicalizeBytes, RoundUp, MilliValue).
//
// A parsed value is kept exactly, as sign * digits * 10^exp10 with the digits
// held as a decimal string, so nothing ever goes through floating point and
// nothing overflows: "1" equals "1000m" and "1Ki" equals "1024", "0.9999" is
// less than 1, "1.0001" is not an integer, and "1e100" or "1000E" keep their
// value. Work is proportional to the length of the input, never to the size
// of an exponent, so "1e999999999" is as cheap as "1".
//
// Semantics that follow from the Go code (see
// ../shared/reference/kubernetes-gpu-semantics.md §1):
//  * Parsed values are exact down to nano (10^-9). A finer non-zero value is
//    rounded away from zero to the next nano: "0.5n" is 1n, "-0.5n" is -1n.
//  * BinarySI values ("Ki" .. "Ei") are capped in magnitude at 2^63-1
//    ("8Ei" is 9223372036854775807). Decimal values are not capped.
//  * An "e"/"E" exponent is read with strconv.ParseInt (int64; out of range
//    is a Suffix error) and then truncated to int32 as Go does
//    (int32(parsed)): "1e4294967296" is 1 and "1e4294967299" is 1000.
//    The same int32 arithmetic is used where Go subtracts the number of
//    fractional digits from the exponent.
//    Where Go would then spend minutes rescaling an inf.Dec by 10^(2^31)
//    ("1e-2147483648"), the value it is computing is returned at once.
//  * The scanner is more lenient than its regular expression: a missing
//    number reads as 0 ("k", "Ki", "e5" are zero), but where Go leaves its
//    int64 fast path the digitless text is an ErrNumeric (".e-10", "Pi").
//  * Inputs of 2^31 bytes or more are outside the model (Go wraps their
//    lengths to int32); they are parsed as if lengths did not wrap.
#pragma once

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuguard {

enum class QuantityError {
  None,
  FormatWrong,  // ErrFormatWrong: does not match ^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$
  Suffix,       // ErrSuffix: unable to parse quantity's suffix
  Numeric,      // ErrNumeric: unable to parse numeric part of quantity (e.g. ".e-10")
};

// The API server's exact error text for each QuantityError ("" for None).
std::string_view quantityErrorMessage(QuantityError e);

class Quantity {
 public:
  // The suffix family the input used; canonical() keeps it.
  enum class Format { DecimalSI, BinarySI, DecimalExponent };

  // A default-constructed Quantity is zero ("0", DecimalSI).
  Quantity() = default;

  // Parses exactly like resource.ParseQuantity (no whitespace trimming).
  // On failure returns nullopt and stores the kind in *error; on success
  // stores QuantityError::None.
  static std::optional<Quantity> parse(std::string_view text, QuantityError* error = nullptr);

  // Parses like Quantity.UnmarshalJSON for a JSON string token (pass the text
  // between the quotes, or a bare number token): surrounding whitespace, as
  // Go's strings.TrimSpace defines it (Unicode White_Space, UTF-8), is trimmed
  // first, so "1 " parses. Escape sequences are not decoded, exactly like
  // the API server. JSON `null` is the caller's business (Go: zero).
  static std::optional<Quantity> parseTrimmed(std::string_view text, QuantityError* error = nullptr);

  // Sign of the exact stored value (which is already rounded to nano at
  // parse time). Zero is never negative ("-0" is zero).
  bool isNegative() const;
  bool isZero() const;

  // True when the value is a whole number (no fractional part at all).
  bool isWholeNumber() const;
  // The API server's integer test for extended resources after defaulting:
  // RoundUp(-3) (away from zero) then MilliValue() % 1000 == 0. Accepts
  // 0.9999 (becomes 1), rejects 1.0001 (1001m) and 1u (1m). Values whose
  // MilliValue overflows int64 in Go ("1E", "8Ei"; undefined there) are
  // judged exactly here: a huge whole value is an integer.
  bool isIntegerAfterDefaulting() const;

  // The value as an int64 when it is whole and fits; nullopt otherwise.
  std::optional<std::int64_t> asInt64() const;
  // The value rounded up to milli precision, then up to a whole number (what
  // a device plugin would be asked for), saturated to int64. "Up" is the
  // Kubernetes RoundUp/Value() sense: away from zero, so 0.001 -> 1 and
  // -1.5 -> -2.
  std::int64_t ceilToInt64() const;

  // What SetDefaults_ResourceList stores: RoundUp(-3), i.e. rounded away from
  // zero to milli precision, format kept. canonical() of the result is the
  // "After defaulting" column of the reference table (without the cached
  // string trap): "0.9999" -> "1", "1u" -> "1m", "1e-9" -> "1e-3".
  Quantity defaulted() const;

  Format format() const { return format_; }

  // Canonical form as resource.Quantity.String() emits it after
  // CanonicalizeBytes (ignoring the "cached string" trap, so "+1" and "01"
  // give "1"): "1500m", "1Ki", "1e3", "1500e-3", "10e18", "0". DecimalSI
  // values beyond the "E" suffix fall back to e-notation ("1000E" -> "1e21"),
  // as the newer apimachinery revision does (older code emitted "1").
  // Always re-parses to an equal value.
  std::string canonical() const;

  // Exact numeric order, for any mix of formats ("1Ki" == "1024").
  std::strong_ordering operator<=>(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return (*this <=> other) == 0; }

 private:
  // Exact value: (negative_ ? -1 : 1) * digits_ * 10^exp10_.
  // digits_ has no leading and no trailing zeros ("" is zero, then
  // negative_ is false and exp10_ is 0), so every value has exactly one
  // representation. exp10_ >= -9 for every parsed value.
  bool negative_ = false;
  std::string digits_;
  std::int64_t exp10_ = 0;
  Format format_ = Format::DecimalSI;
};

// Writes the enumerator name ("FormatWrong").
std::ostream& operator<<(std::ostream& os, QuantityError e);
// Writes canonical() (so GoogleTest and logs print "1500m", not bytes).
std::ostream& operator<<(std::ostream& os, const Quantity& q);

// A JSON value as Quantity.UnmarshalJSON reads it: strings are trimmed and
// parsed; numbers are parsed from their text; null is zero; anything else is
// a format error.
struct QuantityValue {
  std::optional<Quantity> quantity;
  QuantityError error = QuantityError::None;
  std::string text;  // what was written, for messages ("500m", "0.5", "true")
  // The string reaches the API server JSON-escaped ("1\n" as 1\n), and
  // Quantity.UnmarshalJSON parses the escapes as they are.
  bool jsonEscaped = false;
};
QuantityValue decodeQuantity(const nlohmann::json& value);

// A string as Go's encoding/json writes it between the quotes (what kubectl
// sends): quotes, backslashes, control characters, <, >, &, U+2028 and
// U+2029 escaped, invalid UTF-8 as \ufffd.
std::string goJsonStringBody(std::string_view s);

}  // namespace gpuguard
