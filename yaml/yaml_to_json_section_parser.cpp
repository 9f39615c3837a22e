// Stage 4's driver: one section through yaml-cpp's parser into the Builder
// (yaml_to_json_builder.h), and yaml-cpp's errors reworded like
// libyaml/go-yaml.
#include <cstdlib>
#include <cstring>
#include <istream>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include "yaml/yaml_fast_path.h"
#include "yaml/yaml_to_json_builder.h"

namespace gpuguard::yaml::detail {
namespace {

using builder::Builder;
using builder::BuildError;

// Swallows the events of a second document in a section (kubectl ignores it).
class DiscardHandler final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// An istream over memory, without copying it.
class MemoryBuffer final : public std::streambuf {
 public:
  MemoryBuffer(const char* begin, const char* end) {
    char* b = const_cast<char*>(begin);
    setg(b, b, const_cast<char*>(end));
  }
};

// GPUGUARD_YAML_FAST_PATH=0 sends every section through yaml-cpp: a switch
// to rule the fast path out when a parse looks wrong, and the reference
// side of its end-to-end comparisons.
bool fastPathEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("GPUGUARD_YAML_FAST_PATH");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return enabled;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// yaml-cpp's error, reworded where its message or position would mislead.
ParseError yamlCppFailure(const YAML::Exception& e, std::string_view chunk, const Builder& builder) {
  ParseError err{builder.position(e.mark), describeYamlCppError(e.msg)};
  // Name the [ or { that was not closed; if yaml-cpp only noticed at the
  // end of the section, point at that bracket rather than at the end.
  if (e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW || e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW) {
    if (auto open = builder.innermostOpenFlow()) {
      const bool seq = e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
      err.message = std::string("did not find expected ',' or '") + (seq ? "]" : "}") + "' to continue or close the flow " +
                    (seq ? "sequence" : "mapping") + " opened at line " + std::to_string(open->line) + ", column " +
                    std::to_string(open->column);
      if (e.mark.pos < 0 || chunk.find_first_not_of(" \t\r\n", static_cast<std::size_t>(e.mark.pos)) == npos)
        err.position = *open;
    }
  }
  if (startsWith(e.msg, YAML::ErrorMsg::UNKNOWN_ANCHOR) && e.mark.pos >= 0 &&
      static_cast<std::size_t>(e.mark.pos) < chunk.size() && chunk[static_cast<std::size_t>(e.mark.pos)] == '*') {
    // yaml-cpp 0.7 does not say which anchor; the alias is at the mark.
    std::size_t b = static_cast<std::size_t>(e.mark.pos) + 1, n = b;
    while (n < chunk.size() && std::strchr(" \t\r\n,[]{}", chunk[n]) == nullptr) ++n;
    err.message = "unknown anchor '" + std::string(chunk.substr(b, n - b)) + "' referenced";
  }
  // "image: {name}/app:1" - a value that starts with '{' or '[' is a flow
  // collection, and yaml-cpp stops at the text after it. Say so: the
  // indentation is not the problem.
  if ((e.msg == YAML::ErrorMsg::END_OF_MAP || e.msg == YAML::ErrorMsg::END_OF_SEQ) && !e.mark.is_null() &&
      e.mark.pos > 0 && static_cast<std::size_t>(e.mark.pos) <= chunk.size()) {
    std::size_t before = static_cast<std::size_t>(e.mark.pos);
    while (before > 0 && chunk[before - 1] == ' ') --before;
    if (before > 0 && (chunk[before - 1] == '}' || chunk[before - 1] == ']'))
      err.message = std::string(e.msg == YAML::ErrorMsg::END_OF_MAP ? "did not find expected key" : "did not find expected '-' indicator") +
                    ": text follows a flow collection closed by '" + chunk[before - 1] +
                    "' on this line (a value that starts with '{' or '[' is a YAML flow collection; quote the whole value)";
  }
  // A tab in the indentation of the failing line is the likely culprit.
  if (!e.mark.is_null() && e.mark.pos >= e.mark.column && static_cast<std::size_t>(e.mark.pos) <= chunk.size()) {
    std::size_t ls = static_cast<std::size_t>(e.mark.pos - e.mark.column);
    for (std::size_t p = ls; p < chunk.size() && (chunk[p] == ' ' || chunk[p] == '\t'); ++p)
      if (chunk[p] == '\t') {
        err.position = builder.positionOnLine(e.mark, p);
        err.message = "found a tab character used for indentation (YAML allows only spaces)";
        break;
      }
  }
  return err;
}

// One section -> one Document (or an error). The fast path
// (yaml_fast_path.h) gives the Builder the events yaml-cpp would, for the
// sections it takes; yaml-cpp parses the others.
std::optional<ParseError> parseSection(std::string_view text, const Section& sec, Builder& builder, fastpath::Events& events,
                                       Document& doc) {
  std::string_view chunk = text.substr(sec.begin, sec.end - sec.begin);
  builder.begin(chunk, sec.firstLine, sec.ascii, &doc);
  const auto noDocument = [&] {  // only comments / blank lines
    doc.value = nullptr;
    doc.start = Position{sec.firstLine, 1};
    return std::nullopt;
  };
  try {
    if (fastPathEnabled()) {
      const fastpath::Streamed streamed = fastpath::stream(chunk, events, builder);
      if (streamed.outcome == fastpath::Streamed::Outcome::NoDocument) return noDocument();
      if (streamed.outcome == fastpath::Streamed::Outcome::Document) {
        builder.finish();
        return std::nullopt;
      }
      if (streamed.handlerCalled) builder.restart();
    }
    MemoryBuffer buffer(chunk.data(), chunk.data() + chunk.size());
    std::istream in(&buffer);
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) return noDocument();
    builder.finish();
    try {
      DiscardHandler discard;
      if (parser.HandleNextDocument(discard))
        doc.warnings.push_back(ParseWarning{doc.start,
                                            "more than one YAML document in this '---' section (after '...'); kubectl reads "
                                            "only the first and ignores the rest",
                                            "", ParseWarning::Kind::IgnoredContent});
    } catch (const YAML::Exception&) {
      doc.warnings.push_back(ParseWarning{doc.start, "unparsable content after the end of this document is ignored by kubectl", "",
                                          ParseWarning::Kind::IgnoredContent});
    }
    return std::nullopt;
  } catch (const BuildError& e) {
    return ParseError{e.position, e.message};
  } catch (const YAML::DeepRecursion& e) {
    return ParseError{builder.position(e.mark), "maps and sequences nested deeper than the YAML parser's limit of 500 levels"};
  } catch (const YAML::Exception& e) {
    return yamlCppFailure(e, chunk, builder);
  }
}

class BuilderSectionParser final : public SectionParser {
 public:
  BuilderSectionParser(const Limits& limits, ListItemSink* items) : builder_(limits), items_(items) {}
  std::optional<ParseError> parse(std::string_view text, const Section& section, Document& doc) override {
    builder_.handItemsTo(items_);
    std::optional<ParseError> error = parseSection(text, section, builder_, events_, doc);
    if (builder_.itemsHandedOver() == 0) return error;
    if (!error && builder_.handedItemsStand()) {
      doc.itemsHandedOver = true;
      return std::nullopt;
    }
    items_->discard();
    if (error) return error;
    // Not a List after all (its kind, written after the items, is another;
    // `items` was written twice...): the document again, whole.
    doc = builder::emptyDocument(doc.index);
    builder_.handItemsTo(nullptr);
    return parseSection(text, section, builder_, events_, doc);
  }

 private:
  Builder builder_;
  ListItemSink* items_;
  fastpath::Events events_;
};

}  // namespace

std::unique_ptr<SectionParser> makeSectionParser(const Limits& limits, ListItemSink* items) {
  return std::make_unique<BuilderSectionParser>(limits, items);
}

}  // namespace gpuguard::yaml::detail
