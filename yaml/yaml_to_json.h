// YAML text -> nlohmann::json, the way kubectl reads a manifest.
//
// kubectl (sigs.k8s.io/yaml over go-yaml v2) resolves plain scalars with
// YAML 1.1 rules: yes/no/on/off/y/n are booleans, 010 is the octal number 8,
// 0x10 is 16, 1_000 is 1000, ~ is null. We reproduce that resolution so the
// rule engine judges the same values the API server would receive, and we
// keep where every node came from (line, column, the text as written) so a
// finding on a JSON pointer maps back to the user's file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard::yaml {

struct Position {
  int line = 0;    // 1-based
  int column = 0;  // 1-based
};

// Where one JSON node came from.
struct NodeOrigin {
  Position position;       // of the value node (for map entries: the value)
  Position keyPosition;    // of the key, for values that are map entries
  std::string writtenText; // plain (unquoted) scalars only: the text as written
  bool plainScalar = false;
};

// Maps RFC 6901 JSON pointers ("/spec/containers/0/image") to origins.
class SourceMap {
 public:
  void add(std::string pointer, NodeOrigin origin);
  const NodeOrigin* find(std::string_view pointer) const;
  // The closest known origin: the pointer itself, else its nearest ancestor.
  Position locate(std::string_view pointer) const;

 private:
  std::unordered_map<std::string, NodeOrigin> origins_;
};

struct Document {
  nlohmann::json value;   // null for an empty document
  SourceMap sources;
  Position start;         // where the document starts in the stream
  std::size_t index = 0;  // 0-based position in the stream
};

struct ParseError {
  Position position;
  std::string message;  // e.g. "found character that cannot start any token"
};

struct Limits {
  std::size_t maxDepth = 256;               // nesting of maps/sequences
  std::size_t maxNodes = 2'000'000;         // after alias expansion
  std::size_t maxDocumentBytes = 64u << 20; // input size
};

struct ParseResult {
  std::vector<Document> documents;  // all documents parsed before any error
  std::optional<ParseError> error;  // the first error, if parsing stopped
};

// Parses a multi-document stream. Never throws; malformed, hostile or
// oversized input yields an error with a position.
ParseResult parseStream(std::string_view text, const Limits& limits = {});

// Escapes one reference token for a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string escapePointerToken(std::string_view token);

}  // namespace gpuguard::yaml
