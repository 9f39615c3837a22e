// A strict JSON reader for request bodies: it accepts and rejects exactly what
// nlohmann::json::parse does (RFC 8259 plus a leading UTF-8 BOM; UTF-8
// validated inside strings; \u escapes with surrogate pairs; numbers typed as
// nlohmann types them: unsigned, signed, else double, and a double that
// overflows is an error; duplicate keys: the last one wins), and builds the
// same nlohmann::json tree, but
//   - only for what the caller keeps: a member filter can drop object members,
//     whose values are then checked by a validating skip that builds nothing;
//   - scanning strings in runs and numbers with std::from_chars, several
//     times faster than nlohmann's byte-at-a-time lexer and SAX callbacks;
//   - refusing nesting deeper than a limit (dropped values included), which
//     also bounds its own recursion.
// test/unit/webhook/json_reader_test.cpp and test/fuzz/fuzz_json_reader.cpp hold it to
// nlohmann's behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuguard::webhook {

// Where in the document a value sits, as the member filter defines it. The
// reader only passes these along; kKeepAll is special: under it nothing is
// dropped and the filter is not asked.
using JsonContext = std::uint8_t;
inline constexpr JsonContext kKeepAll = 0;
inline constexpr JsonContext kDropMember = 0xFF;

// For a member `key` of an object in context `parent` (never kKeepAll): the
// context of the member's value, or kDropMember to leave it out of the tree.
using JsonMemberFilter = JsonContext (*)(JsonContext parent, std::string_view key);

struct JsonReadOptions {
  std::size_t maxDepth = 200;          // arrays and objects open at once
  JsonMemberFilter filter = nullptr;   // nullptr: keep everything
  JsonContext rootContext = kKeepAll;  // the context of the top-level value
  // Values built into the tree (members dropped by the filter not counted):
  // a tree costs up to ~210 bytes per value (a million empty strings in 3 MB
  // took 202 MiB), so the bytes of a body bound its tree only by this.
  std::size_t maxValues = static_cast<std::size_t>(-1);
};

struct JsonReadError {
  std::size_t byte = 0;  // offset of the offending byte
  bool tooDeep = false;  // nesting limit exceeded (the text may be valid JSON)
  bool tooMany = false;  // maxValues exceeded (the text may be valid JSON)
  // "parse error at byte 12 (line 1, column 13): invalid string: ..." or
  // "JSON nesting deeper than 200 levels".
  std::string message;
};

// Reads `text` into `out`. Returns false, with `error` set and `out`
// unspecified, if the text is not one JSON value (with optional surrounding
// whitespace), nests too deeply or holds too many values. What `out` holds is replaced, but its
// allocations are reused: members of the same name are read into in place
// (found, not moved: the map is not rebuilt), vectors and strings are
// refilled, and only members the text does not name are freed. A document
// read into the tree of one of the same shape allocates and frees next to
// nothing; the tree is always the one an empty `out` would get.
bool readJson(std::string_view text, nlohmann::json& out, JsonReadError& error, const JsonReadOptions& options = {});

// Frees the tree under `value` (left an empty object or array, or as it was
// when a scalar). nlohmann's destructor first moves every node of a tree
// through a heap-allocated stack, so that no depth can overflow the call
// stack; for a review that was a fifth of the webhook's instructions. This
// frees bottom-up by recursion instead, down to kReleaseDepth levels, and
// leaves what is deeper to nlohmann's destructor.
inline constexpr std::size_t kReleaseDepth = 64;
void releaseJson(nlohmann::json& value);

}  // namespace gpuguard::webhook
