// The yaml-cpp events of a section as text, one line per EventHandler call,
// with everything the Builder can see of them (mark pos/line/column, tag,
// anchor, style, value): what the YAML fast path (yaml/yaml_fast_path.h)
// must reproduce exactly. Shared by its unit tests, the differential tool
// (test/tools/yaml_fast_path_diff.cpp) and its fuzzer.
#pragma once

#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "yaml/yaml_fast_path.h"

namespace gpuguard::yaml::testing {

class EventLog final : public YAML::EventHandler {
 public:
  std::string text;

  void OnDocumentStart(const YAML::Mark& m) override { line("+DOC", m); }
  void OnDocumentEnd() override { text += "-DOC\n"; }
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { line("NULL", m, "", a); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override { line("ALIAS", m, "", a); }
  void OnAnchor(const YAML::Mark& m, const std::string& name) override { line("ANCHOR " + name, m); }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a, const std::string& value) override {
    line("SCALAR", m, tag, a);
    text.pop_back();
    text += " \"" + escaped(value) + "\"\n";
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a, YAML::EmitterStyle::value s) override {
    line(s == YAML::EmitterStyle::Flow ? "+SEQ flow" : s == YAML::EmitterStyle::Block ? "+SEQ block" : "+SEQ default", m, tag, a);
  }
  void OnSequenceEnd() override { text += "-SEQ\n"; }
  void OnMapStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a, YAML::EmitterStyle::value s) override {
    line(s == YAML::EmitterStyle::Flow ? "+MAP flow" : s == YAML::EmitterStyle::Block ? "+MAP block" : "+MAP default", m, tag, a);
  }
  void OnMapEnd() override { text += "-MAP\n"; }

 private:
  void line(const std::string& what, const YAML::Mark& m, const std::string& tag = "", YAML::anchor_t anchor = 0) {
    text += what + " @" + std::to_string(m.pos) + ":" + std::to_string(m.line) + ":" + std::to_string(m.column);
    if (!tag.empty()) text += " tag=" + tag;
    if (anchor != 0) text += " anchor=" + std::to_string(anchor);
    text += "\n";
  }
  static std::string escaped(const std::string& v) {
    std::string out;
    for (unsigned char c : v) {
      if (c == '\\' || c == '"') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c >= 0x7F) {
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
    return out;
  }
};

// What the section parser (yaml/yaml_to_json_section_parser.cpp) gets from
// yaml-cpp: the first document's events, "(no document)", or nullopt when
// yaml-cpp throws in it. Content after the first document is noted, as the
// section parser warns about it.
inline std::optional<std::string> yamlCppEvents(std::string_view section) {
  std::istringstream in{std::string(section)};
  EventLog log;
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(log)) return std::string("(no document)\n");
    try {
      EventLog rest;
      if (parser.HandleNextDocument(rest)) log.text += "(another document)\n";
    } catch (const YAML::Exception&) {
      log.text += "(unparsable content after the document)\n";
    }
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  return log.text;
}

// The fast path's events for the section, or nullopt when it bails out.
// `chunkEvents`: how many it may hold before handing them over; the
// default, 1, hands them over at every point where it can, the most
// demanding test of which events it takes for final.
inline std::optional<std::string> fastPathEvents(std::string_view section, std::size_t chunkEvents = 1) {
  detail::fastpath::Events scratch;
  EventLog log;
  const auto streamed = detail::fastpath::stream(section, scratch, log, chunkEvents);
  switch (streamed.outcome) {
    case detail::fastpath::Streamed::Outcome::Document: return log.text;
    case detail::fastpath::Streamed::Outcome::NoDocument: return std::string("(no document)\n");
    case detail::fastpath::Streamed::Outcome::BailedOut: break;
  }
  return std::nullopt;
}

}  // namespace gpuguard::yaml::testing
