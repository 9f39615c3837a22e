// The YAML fast path (yaml/yaml_fast_path.h), specified: for the block-YAML
// subset of manifests it gives exactly the events yaml-cpp gives (marks,
// tags, styles, values), and for everything else it bails out, leaving the
// section to yaml-cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "test/unit/yaml/yaml_event_log.h"
#include "yaml/yaml_to_json_internal.h"

namespace {

using gpuguard::yaml::testing::fastPathEvents;
using gpuguard::yaml::testing::yamlCppEvents;

// The fast path takes `text`, and its events are yaml-cpp's.
void expectTakenAndExact(std::string_view text) {
  const auto fast = fastPathEvents(text);
  ASSERT_TRUE(fast.has_value()) << "the fast path bailed out on:\n" << text;
  const auto reference = yamlCppEvents(text);
  ASSERT_TRUE(reference.has_value()) << "yaml-cpp fails on:\n" << text;
  EXPECT_EQ(*fast, *reference) << "input:\n" << text;
}

void expectBailsOut(std::string_view text) { EXPECT_FALSE(fastPathEvents(text).has_value()) << "taken:\n" << text; }

TEST(YamlFastPath, BlockMapEventsCarryYamlCppMarksAndTags) {
  const std::string text = "a: b\nc: 'd'\n";
  EXPECT_EQ(fastPathEvents(text).value_or(""),
            "+DOC @0:0:0\n"
            "+MAP block @0:0:0 tag=?\n"
            "SCALAR @0:0:0 tag=? \"a\"\n"
            "SCALAR @3:0:3 tag=? \"b\"\n"
            "SCALAR @5:1:0 tag=? \"c\"\n"
            "SCALAR @8:1:3 tag=! \"d\"\n"
            "-MAP\n"
            "-DOC\n");
  expectTakenAndExact(text);
}

TEST(YamlFastPath, NestedMapsAndSequencesOfAManifest) {
  expectTakenAndExact(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: x\nspec:\n  containers:\n  - name: c\n"
      "    image: img:1\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n    args:\n    - --a\n    - \"b c\"\n"
      "  - name: d\n");
  expectTakenAndExact("items:\n  - a\n  - b\nnext: 1\n");
  expectTakenAndExact("- a\n- b: 1\n  c: 2\n-   d: 3\n");
  expectTakenAndExact("  indented: root\n  second: 2\n");
}

TEST(YamlFastPath, MissingValuesTakeTheMarkOfTheNextToken) {
  expectTakenAndExact("a:\nb: 1\n");
  expectTakenAndExact("a:\n  b:\nc:\n");
  expectTakenAndExact("a:\n  # comment\n\n  b:\n  c: 2\n");
  expectTakenAndExact("- \n-\n- x\n-\n");
  expectTakenAndExact("l:\n-\n- \nm: 1\n");
}

TEST(YamlFastPath, NullWordsAreNullEvents) {
  expectTakenAndExact("a: ~\nb: null\nc: Null\nd: NULL\ne: nULL\n~: x\n");
}

TEST(YamlFastPath, PlainScalarsEndAtCommentsAndKeepInnerIndicators) {
  expectTakenAndExact("a: b # c\nd: e#f\ng: http://x:80/y?z=[1]\nh: a, b {c}\ni:   spaced   out   \nj: -1\nk: :x\n");
  expectTakenAndExact("key  : v\n\"q\": 1\n'r': 2\n");
}

TEST(YamlFastPath, QuotedScalarsWithEscapesAsYamlCppDecodesThem) {
  expectTakenAndExact("a: 'it''s'\nb: \"tab\\there\\n\"\nc: \"\\x41\\u00e9\\U0001F600\\N\\_\\L\\P\\0\\e\\/\\ \"\n");
  expectTakenAndExact("a: \"\"\nb: ''\nc: \"#not a comment\"#comment\n");
}

TEST(YamlFastPath, BlockScalarsWithChompingAndIndentationIndicators) {
  expectTakenAndExact("a: |\n  one\n  two\n\nb: >\n  folded\n  lines\n\n   more\n  back\nc: x\n");
  expectTakenAndExact("a: |-\n  x\n\n\nb: |+\n  y\n\n\nc: >2\n    indented\n   three\nd: |\n\n  late\n");
  expectTakenAndExact("- |\n  in a sequence\n- key: >-\n    in a compact map\n  next: 1\n");
  expectTakenAndExact("a: | # comment\n  x\n    more indented\n  # not a comment\nb: |\nc: 1\n");
  expectTakenAndExact("a: |\n  last line without a break");
}

TEST(YamlFastPath, SingleLineFlowCollections) {
  expectTakenAndExact("a: []\nb: {}\nc: [x, 'y', \"z\", [1, 2], {k: v}]\nd: {k: v, \"q\":w, 'r' : [1]}\n");
  expectTakenAndExact("- [a , b ]\n- { a: b }\n");
}

TEST(YamlFastPath, CommentsAndBlankLinesAnywhere) {
  expectTakenAndExact("# head\n\na: 1 # tail\n   # indented\n\nb:\n  - x # y\n# end\n");
  expectTakenAndExact("a: 1");
}

TEST(YamlFastPath, ASectionOfCommentsHasNoDocument) {
  EXPECT_EQ(fastPathEvents("# only a comment\n\n   # and another").value_or(""), "(no document)\n");
  expectTakenAndExact("# only a comment\n\n   # and another");
  expectTakenAndExact("");
}

TEST(YamlFastPath, BailsOutOnWhatItLeavesToYamlCpp) {
  expectBailsOut("a: &x 1\nb: *x\n");             // anchors, aliases
  expectBailsOut("a: !!str 1\n");                 // tags
  expectBailsOut("%YAML 1.1\n---\na: 1\n");       // directives
  expectBailsOut("a: 1\n...\n");                  // document markers
  expectBailsOut("a: 1\n---\nb: 2\n");
  expectBailsOut("? a\n: b\n");                   // complex keys
  expectBailsOut("a:\tb\n");                      // tabs
  expectBailsOut("a: b\r\n");                     // CR
  expectBailsOut("a: b\n  c\n");                  // multi-line plain scalar
  expectBailsOut("a: 'b\n  c'\n");                // multi-line quoted scalar
  expectBailsOut("a: \"b\\\n  c\"\n");            // escaped line break
  expectBailsOut("a: [b,\n  c]\n");               // multi-line flow
  expectBailsOut("a: [b, , c]\n");                // empty flow entry
  expectBailsOut("a: [b: c]\n");                  // compact map in a flow sequence
  expectBailsOut("a: {b}\n");                     // flow map entry without a value
  expectBailsOut("a: b: c\n");                    // yaml-cpp errors
  expectBailsOut("a: 1\n - b\n");
  expectBailsOut("a: 1\n  b: 2\n");
  expectBailsOut("a: \"\\q\"\n");                 // an escape yaml-cpp refuses
  expectBailsOut("a: \"\\uD800\"\n");
  expectBailsOut("a: |0\n  x\n");
  expectBailsOut("- - a\n");                      // nested inline sequence
  expectBailsOut("a:\n  |\n  x\n");               // block scalar alone on its line
  expectBailsOut("a:");                           // a missing value where the text ends mid-line
}

TEST(YamlFastPath, BailsOutOnKeysBeyondTheSimpleKeyLimitAndDeepNesting) {
  expectBailsOut(std::string(1500, 'k') + ": v\n");
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  deep += std::string(300, ' ') + "v\n";
  expectBailsOut(deep);
  expectBailsOut("\xEF\xBB\xBF" "a: 1\n");        // a byte-order mark shifts yaml-cpp's positions
}

// A List of `items` pods, written as kubectl writes one.
std::string podList(int items) {
  std::string text = "apiVersion: v1\nitems:\n";
  for (int i = 0; i < items; ++i)
    text += "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p" + std::to_string(i) +
            "\n  spec:\n    containers:\n    - name: c\n      image: 'img:1'\n      args: [a, \"b\"]\n";
  return text + "kind: List\n";
}

TEST(YamlFastPath, HandsALargeSectionOverInChunksThatMakeUpYamlCppsEvents) {
  const std::string list = podList(200);
  const auto reference = yamlCppEvents(list);
  ASSERT_TRUE(reference.has_value());
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{64}, SIZE_MAX})
    EXPECT_EQ(fastPathEvents(list, chunk), reference) << "chunks of " << chunk;
  // What it holds: one chunk at a time, not the section's ~4,000 events.
  gpuguard::yaml::detail::fastpath::Events scratch;
  gpuguard::yaml::testing::EventLog log;
  const auto streamed = gpuguard::yaml::detail::fastpath::stream(list, scratch, log, 64);
  EXPECT_EQ(streamed.outcome, gpuguard::yaml::detail::fastpath::Streamed::Outcome::Document);
  EXPECT_LT(scratch.list.capacity(), 256u);
}

// Throws at its `throwAt`th event, and counts the events it gets.
class ThrowingHandler final : public YAML::EventHandler {
 public:
  explicit ThrowingHandler(int throwAt) : throwAt_(throwAt) {}
  int events = 0;
  void OnDocumentStart(const YAML::Mark&) override { count(); }
  void OnDocumentEnd() override { count(); }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { count(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { count(); }
  void OnSequenceEnd() override { count(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { count(); }
  void OnMapEnd() override { count(); }

 private:
  void count() {
    if (++events == throwAt_) throw std::runtime_error("handler");
  }
  int throwAt_;
};

// The handler's failure stands only for a section the fast path takes: on
// a bail-out yaml-cpp parses the section, and its events decide.
TEST(YamlFastPath, WhatTheHandlerThrowsIsHeldUntilTheScanEnds) {
  using gpuguard::yaml::detail::fastpath::Streamed;
  gpuguard::yaml::detail::fastpath::Events scratch;
  const std::string list = podList(50);
  ThrowingHandler taken(10);
  EXPECT_THROW(gpuguard::yaml::detail::fastpath::stream(list, scratch, taken, 1), std::runtime_error);
  EXPECT_EQ(taken.events, 10) << "nothing after the event that threw";
  ThrowingHandler bailed(10);
  const Streamed streamed = gpuguard::yaml::detail::fastpath::stream(list + "extra: &anchor x\n", scratch, bailed, 1);
  EXPECT_EQ(streamed.outcome, Streamed::Outcome::BailedOut);
  EXPECT_TRUE(streamed.handlerCalled) << "the caller must undo what the handler did";
  EXPECT_EQ(bailed.events, 10);
  // A bail-out before the first chunk: nothing to undo.
  ThrowingHandler early(0);
  EXPECT_FALSE(gpuguard::yaml::detail::fastpath::stream("a: &x 1\n" + list, scratch, early, 64).handlerCalled);
}

// Every section of every YAML file under test/data: where the fast path
// takes one, yaml-cpp agrees event by event.
TEST(YamlFastPath, AgreesWithYamlCppOnEveryTestDataSection) {
  namespace fs = std::filesystem;
  std::size_t sections = 0, taken = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(GPUGUARD_SOURCE_DIR) / "test" / "data")) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".yaml" && ext != ".yml")) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    for (const auto& section : gpuguard::yaml::detail::splitSections(text, gpuguard::yaml::Limits{})) {
      const std::string_view chunk = std::string_view(text).substr(section.begin, section.end - section.begin);
      ++sections;
      const auto fast = fastPathEvents(chunk);
      if (!fast) continue;
      ++taken;
      EXPECT_EQ(fast, yamlCppEvents(chunk)) << entry.path() << " line " << section.firstLine;
    }
  }
  EXPECT_GT(sections, 0u);
  EXPECT_GT(taken * 2, sections) << "the fast path should take most test manifests";
}

}  // namespace
