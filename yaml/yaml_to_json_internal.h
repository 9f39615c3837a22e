// Internals of yaml_to_json.cpp's pipeline, shared by the files of its
// stages (the numbers are the stages of the pipeline comment in
// yaml_to_json.cpp):
//   yaml_to_json_text.cpp      1. input checks: encoding and allowed characters
//   yaml_to_json_sections.cpp  2. sections, 3. the pre-scan
//   yaml_to_json_scalars.cpp   4a. scalar resolution (go-yaml v2.4 resolve())
//   yaml_to_json_builder.h     4. yaml-cpp events -> JSON + source map (class Builder;
//                                 defined in yaml_to_json_builder.cpp and _builder_tree.cpp)
//   yaml_to_json_section_parser.cpp  4. one section through yaml-cpp into the Builder
// Not part of the yaml/ interface: only these files include it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/json_pointer.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::yaml::detail {

using json = nlohmann::json;
constexpr std::size_t npos = std::string_view::npos;

// Small helpers of every stage, inline: they run once per node or line.

inline bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Code points in s (s is valid UTF-8).
inline int countChars(std::string_view s) {
  int n = 0;
  for (char c : s) n += isContinuationByte(c) ? 0 : 1;
  return n;
}

inline bool allAscii(std::string_view s) {
  const char* p = s.data();
  std::size_t n = s.size(), i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ULL) return false;
  }
  for (; i < n; ++i)
    if (static_cast<unsigned char>(p[i]) >= 0x80) return false;
  return true;
}

// ---------------------------------------------------------------------------
// 1. Input text (yaml_to_json_text.cpp).

struct TextProblem {
  std::size_t offset = npos;
  std::string message;
};

// First byte go-yaml's reader would refuse: invalid UTF-8, or a character
// outside  #x9 | #xA | #xD | [#x20-#x7E] | #x85 | [#xA0-#xD7FF] |
// [#xE000-#xFFFD] | [#x10000-#x10FFFF]. offset == npos: none.
TextProblem firstTextProblem(std::string_view s);
// UTF-16 (after its BOM) -> UTF-8; unpaired surrogates become U+FFFD, as
// kubectl's unicode.BOMOverride decoder does.
std::string utf16ToUtf8(std::string_view s, bool bigEndian);
// `s` with each CR that is not followed by LF turned into LF, or nullopt
// when it has none. go-yaml (v2 and v3) takes a lone CR for a line break,
// as YAML 1.1 and 1.2 say; yaml-cpp and the line-based stages here do not,
// so a file with CR-only line breaks (classic Mac OS) is one long line to
// them: one that starts with a comment read as empty.
std::optional<std::string> loneCrAsLf(std::string_view s);
// Replaces invalid UTF-8 with U+FFFD, byte by byte (what Go's json.Marshal
// does to a !!binary string before kubectl sends it).
std::string sanitizeUtf8(std::string_view s);

// ---------------------------------------------------------------------------
// 2-3. Sections and the pre-scan (yaml_to_json_sections.cpp).

// A section of the stream that kubectl parses as one document.
struct Section {
  std::size_t begin = 0, end = 0;  // [begin, end) in the (UTF-8) text
  int firstLine = 1;
  bool ascii = true;
  std::optional<ParseError> error;  // do not parse: report this
  // The "---" line that opened it (offset, line); npos for the stream's first section.
  std::size_t separatorAt = std::string_view::npos;
  int separatorLine = 0;
};

// Splits like apimachinery's YAMLReader and pre-scans each section. A
// section with a problem carries its error, and splitting goes on at the
// next separator, so the sections after it are still parsed.
// `s` starts at line `firstLine` of the text (a YAML rest after JSON).
std::vector<Section> splitSections(std::string_view s, const Limits& limits, int firstLine = 1);

// `s` without the white space Go's strings.TrimSpace removes.
std::string_view trimGoSpace(std::string_view s);

// The error for a section whose first token (after blank lines, comments
// and directives) is '[': a document that is a flow sequence, for
// Limits::refuseFlowSequenceDocuments. nullopt for any other section.
std::optional<ParseError> flowSequenceDocument(std::string_view s, const Section& section);

// ---------------------------------------------------------------------------
// 2b. What kubectl reads of a text with lone CRs (yaml_to_json_cr.cpp), for
// Limits::onlyWhatKubectlReads. The sections are cut from the text with its
// lone CRs turned into LF (loneCrAsLf, same offsets); `original` is the text
// before. kubectl's YAMLReader ends its lines at LF only (bufio ReadLine),
// so a "---" line that a lone CR precedes cuts no document, and go-yaml,
// which takes the lone CR for a line break, reads only the first YAML
// document of what it is given: the sections after that line, up to the
// next "---" that starts an LF line, are never read.
class KubectlDocuments {
 public:
  KubectlDocuments(std::string_view original, ParseResult& result) : original_(original), result_(result) {}
  KubectlDocuments(const KubectlDocuments&) = delete;
  KubectlDocuments& operator=(const KubectlDocuments&) = delete;

  // Before a section is parsed: false when kubectl never reads it (counted
  // for the warning), or when its separator line is one kubectl refuses
  // (the error is noted in the result).
  bool reads(const Section& sec);
  // After: what the section gave (nullopt: a parse error), as the last of
  // result.documents.
  void parsed(bool document);
  // After the last section: the warning of the last document kubectl reads.
  void finish() { finishGroup(); }

 private:
  bool startsDocument(const Section& sec) const;
  std::optional<ParseError> refusedSeparator(const Section& sec) const;
  void finishGroup();

  std::string_view original_;
  ParseResult& result_;
  // The kubectl document being read: whether go-yaml has read its one YAML
  // document (or failed), which one, and what it drops.
  bool settled_ = false;
  std::optional<std::size_t> read_;
  std::size_t dropped_ = 0;
  int firstDroppedLine_ = 0;
};

// ---------------------------------------------------------------------------
// 4a. Scalar resolution (yaml_to_json_scalars.cpp): go-yaml v2.4 resolve()
// for an untagged plain scalar, then what sigs.k8s.io/yaml does with it.

struct Resolved {
  enum class Kind : std::uint8_t { Null, Bool, Int, Uint, Float, String };
  Kind kind = Kind::String;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

using Kind = Resolved::Kind;

inline Resolved makeBool(bool v) { Resolved r; r.kind = Kind::Bool; r.b = v; return r; }
inline Resolved makeFloat(double v) { Resolved r; r.kind = Kind::Float; r.d = v; return r; }
inline Resolved makeNull() { Resolved r; r.kind = Kind::Null; return r; }

// go-yaml v2.4 resolve("", in): what an untagged plain scalar becomes.
Resolved resolvePlain(std::string_view in);
// Go's time.Parse with go-yaml's allowedTimestampFormats, approximately.
bool looksLikeTimestamp(std::string_view s);
// encoding/base64 StdEncoding.DecodeString (padding required, CR/LF ignored).
std::optional<std::string> decodeBase64(std::string_view in);
// strconv.FormatFloat(v, 'g', -1, 32): how sigs.k8s.io/yaml spells a float
// map key (1.5 -> "1.5", 1e6 -> "1e+06", .inf -> ".inf").
std::string goFormatFloatKey(double v);
std::string_view kindTagName(Kind k);

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// ---------------------------------------------------------------------------
// 4. Building one document (yaml_to_json_section_parser.cpp).

// Parses one section into one Document, reusing its buffers from section to
// section.
class SectionParser {
 public:
  virtual ~SectionParser() = default;
  // nullopt: `doc` holds the section's document; otherwise why it failed.
  virtual std::optional<ParseError> parse(std::string_view text, const Section& section, Document& doc) = 0;
};
// `items`: a List's items go there as they are parsed (DocumentStream::read).
std::unique_ptr<SectionParser> makeSectionParser(const Limits& limits, ListItemSink* items = nullptr);

// yaml-cpp's error messages, reworded like libyaml/go-yaml where that
// helps (yaml_to_json.cpp).
std::string describeYamlCppError(const std::string& msg);

}  // namespace gpuguard::yaml::detail
