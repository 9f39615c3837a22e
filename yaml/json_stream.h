// kubectl's JSON path, used by parseStream() (yaml_to_json.h).
//
// apimachinery's YAMLOrJSONDecoder peeks at the first 4096 bytes and, when
// the first non-space character there is '{' (not '['), reads the stream
// with encoding/json's Decoder: a sequence of JSON values separated by white
// space, tabs allowed anywhere white space is. Since kubectl 1.33
// (kubernetes/kubernetes#130666) that is only a first guess: when a JSON
// value fails to parse and at most one came before it, kubectl reads the
// rest of the stream as YAML (flow-style YAML such as KYAML, JSON with a
// comment or a trailing comma, a JSON object followed by "---" and YAML
// documents); after two JSON values the stream is JSON to its end. So:
//  * each top-level value is one Document (kubectl: one object each);
//  * a duplicated key keeps the last value (Go maps) and gets the same
//    warning as in YAML;
//  * numbers become int64 when they fit, else double, and a number beyond
//    double's range is an error (apimachinery's ConvertMapNumbers);
//  * strings: invalid UTF-8 and unpaired \u surrogates become U+FFFD, raw
//    control characters are an error (encoding/json);
//  * a syntax error after two values stops the stream, like encoding/json's
//    Decoder, which cannot resynchronise: the values before it are kept;
//    before that, JsonFallback says where the YAML reading starts.
#pragma once

#include <string_view>

#include "yaml/yaml_to_json.h"

namespace gpuguard::yaml {

// True when kubectl would decode `text` (after its BOM) as JSON: the first
// character that is not white space (Go's unicode.IsSpace) within the first
// 4096 bytes is '{'.
bool looksLikeJsonStream(std::string_view text);

// Where kubectl stops reading JSON and reads the rest of the stream as YAML.
struct JsonFallback {
  bool toYaml = false;        // a JSON value failed with at most one before it
  std::size_t offset = 0;     // the YAML starts here: after the last JSON value and its line's white space
  std::size_t documents = 0;  // JSON values read before (0 or 1)
  ParseError jsonError;       // why JSON failed (kubectl reports it when the YAML fails too)
};

// Parses a stream of JSON values the way kubectl's JSON decoder reads it.
// Each value goes to `sink` as soon as it is parsed (kept in the result
// when there is none); with a sink, a List's items go to `items` one by one
// (ListItemSink, yaml_to_json.h). With `fallback`, a syntax error where
// kubectl turns to YAML is no error: it is described there instead.
ParseResult parseJsonStream(std::string_view text, const Limits& limits, const DocumentSink& sink = {},
                            ListItemSink* items = nullptr, JsonFallback* fallback = nullptr);

}  // namespace gpuguard::yaml
