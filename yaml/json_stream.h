// kubectl's JSON path, used by parseStream() (yaml_to_json.h).
//
// kubectl never hands a file that looks like JSON to the YAML parser:
// apimachinery's YAMLOrJSONDecoder peeks at the first 4096 bytes and, when
// the first non-space character there is '{' (not '['), reads the whole
// stream with encoding/json's Decoder: a sequence of JSON values separated
// by white space, no "---", no comments, no YAML flow syntax, tabs allowed
// anywhere white space is. Reading such a file as YAML would accept what
// kubectl rejects ({a: 1}, # comments, trailing commas, 010) and reject what
// it accepts (tab-indented JSON, "\/" escapes in some parsers), so we parse
// it as kubectl does:
//  * each top-level value is one Document (kubectl: one object each);
//  * a duplicated key keeps the last value (Go maps) and gets the same
//    warning as in YAML;
//  * numbers become int64 when they fit, else double, and a number beyond
//    double's range is an error (apimachinery's ConvertMapNumbers);
//  * strings: invalid UTF-8 and unpaired \u surrogates become U+FFFD, raw
//    control characters are an error (encoding/json);
//  * a syntax error stops the stream, like encoding/json's Decoder, which
//    cannot resynchronise: the values before it are kept.
#pragma once

#include <string_view>

#include "yaml/yaml_to_json.h"

namespace gpuguard::yaml {

// True when kubectl would decode `text` (after its BOM) as JSON: the first
// character that is not white space (Go's unicode.IsSpace) within the first
// 4096 bytes is '{'.
bool looksLikeJsonStream(std::string_view text);

// Parses a stream of JSON values the way kubectl's JSON decoder reads it.
// Each value goes to `sink` as soon as it is parsed (kept in the result
// when there is none); with a sink, a List's items go to `items` one by one
// (ListItemSink, yaml_to_json.h).
ParseResult parseJsonStream(std::string_view text, const Limits& limits, const DocumentSink& sink = {},
                            ListItemSink* items = nullptr);

}  // namespace gpuguard::yaml
