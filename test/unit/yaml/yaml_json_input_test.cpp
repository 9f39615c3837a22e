// JSON manifests, specified by example: kubectl (apimachinery's
// YAMLOrJSONDecoder) reads a stream whose first non-space character is '{'
// with encoding/json, and so does parseStream; since kubectl 1.33, what is
// not JSON there is read as YAML, unless two JSON objects came first.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "yaml/yaml_to_json.h"

namespace gpuguard::yaml {
void PrintTo(const Position& p, std::ostream* os);  // yaml_to_json_test.cpp
}  // namespace gpuguard::yaml

namespace {

namespace y = gpuguard::yaml;
using nlohmann::json;

y::Position at(int line, int column) { return y::Position{line, column}; }

std::string describe(const y::ParseResult& r) {
  return r.error ? std::to_string(r.error->position.line) + ":" + std::to_string(r.error->position.column) + ": " +
                       r.error->message
                 : "no error";
}

y::Document parseOne(const std::string& text) {
  y::ParseResult r = y::parseStream(text);
  EXPECT_FALSE(r.error) << describe(r) << "\ninput:\n" << text;
  EXPECT_EQ(r.documents.size(), 1u) << text;
  return r.documents.empty() ? y::Document{} : std::move(r.documents.front());
}

y::ParseError errorOf(const std::string& text) {
  y::ParseResult r = y::parseStream(text);
  EXPECT_TRUE(r.error.has_value()) << "expected an error for:\n" << text;
  return r.error.value_or(y::ParseError{});
}

// --- which inputs are JSON ---------------------------------------------------

// Red team 33 C4 (kubernetes/kubernetes#130666): flow-style YAML, JSON with
// a comment or a trailing comma fail as JSON, so kubectl reads them as YAML.
TEST(JsonInput, AStreamStartingWithABraceThatIsNotJsonIsReadAsYaml) {
  EXPECT_EQ(parseOne("{apiVersion: v1, kind: Pod}\n").value, json({{"apiVersion", "v1"}, {"kind", "Pod"}}));
  EXPECT_EQ(parseOne("  \n{\"a\": 1, # comment\n}").value, json({{"a", 1}}));
  y::Document trailing = parseOne("{\"a\": [1, 2,],\n \"b\": 010,}\n");
  EXPECT_EQ(trailing.value, json({{"a", {1, 2}}, {"b", 8}}));  // YAML's rules now: 010 is octal
  EXPECT_EQ(trailing.sources.find("/b")->position, at(2, 7));
}

// After one JSON value kubectl turns to YAML at the next line; after two it
// stays JSON to the end.
TEST(JsonInput, OneJsonObjectThenYamlDocumentsAreAllRead) {
  y::ParseResult r = y::parseStream("{\"kind\": \"Pod\"}\n---\nkind: Job\nspec: {a: 1}\n---\nkind: Job2\n");
  EXPECT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[0].value, json({{"kind", "Pod"}}));
  EXPECT_EQ(r.documents[1].value, json({{"kind", "Job"}, {"spec", {{"a", 1}}}}));
  EXPECT_EQ(r.documents[1].sources.find("/spec/a")->position, at(4, 11));
  EXPECT_EQ(r.documents[2].value, json({{"kind", "Job2"}}));
  y::ParseError e = errorOf("{\"a\": 1}\n{\"b\": 2}\n{c: 3}\n");
  EXPECT_EQ(e.position, at(3, 2));
  EXPECT_NE(e.message.find("the stream starts with two JSON objects, so kubectl reads the rest as JSON too"),
            std::string::npos)
      << e.message;
}

TEST(JsonInput, NeitherJsonNorYamlNamesBothReasons) {
  y::ParseError e = errorOf("{\"a\": [}\n");
  EXPECT_NE(e.message.find("kubectl reads it as JSON first, and that fails too: invalid character '}' looking for "
                           "beginning of value at line 1, column 8"),
            std::string::npos)
      << e.message;
}

TEST(JsonInput, OnlyABraceSwitchesToJsonNotABracketNorACommentFirst) {
  // '[' stays YAML (kubectl sniffs for '{' only); so does a comment first.
  EXPECT_EQ(parseOne("[{a: 1}]\n").value, json::array({json({{"a", 1}})}));
  EXPECT_EQ(parseOne("# c\n{a: 1}\n").value, json({{"a", 1}}));
}

TEST(JsonInput, AByteOrderMarkAndLeadingWhiteSpaceComeBeforeTheBrace) {
  EXPECT_EQ(parseOne("\xEF\xBB\xBF\n  {\"a\": 1}").value, json({{"a", 1}}));
}

// --- what kubectl accepts -------------------------------------------------------

TEST(JsonInput, TabIndentationIsFineInJson) {
  y::Document d = parseOne("{\n\t\"kind\": \"Pod\",\n\t\"spec\": {\n\t\t\"n\": 1\n\t}\n}\n");
  EXPECT_EQ(d.value, json({{"kind", "Pod"}, {"spec", {{"n", 1}}}}));
  EXPECT_EQ(d.sources.find("/spec/n")->position, at(4, 8));
  EXPECT_EQ(d.sources.find("/spec/n")->keyPosition, at(4, 3));
}

TEST(JsonInput, SeveralValuesInOneStreamAreSeveralDocuments) {
  y::ParseResult r = y::parseStream("{\"a\": 1}\n{\"b\": 2}{\"c\": 3}\n");
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[1].value, json({{"b", 2}}));
  EXPECT_EQ(r.documents[2].index, 2u);
  EXPECT_EQ(r.documents[2].start, at(2, 9));
}

TEST(JsonInput, NumbersAreInt64WhenTheyFitElseFloat64) {
  const json v = parseOne(R"({"i": -42, "z": -0, "f": 1.0, "e": 1e2, "big": 12345678901234567890, "tiny": 1e-400})").value;
  EXPECT_TRUE(v["i"].is_number_integer() && v["i"].get<std::int64_t>() == -42);
  EXPECT_TRUE(v["z"].is_number_integer() && v["z"].get<std::int64_t>() == 0);
  EXPECT_TRUE(v["f"].is_number_float() && v["f"].get<double>() == 1.0);
  EXPECT_TRUE(v["e"].is_number_float() && v["e"].get<double>() == 100.0);
  EXPECT_TRUE(v["big"].is_number_float() && v["big"].get<double>() == 12345678901234567890.0);
  EXPECT_TRUE(v["tiny"].is_number_float() && v["tiny"].get<double>() == 0.0);
}

TEST(JsonInput, NumbersAndLiteralsKeepTheTextAsWritten) {
  y::Document d = parseOne(R"({"gpu": 1.0, "ok": true, "s": "010"})");
  EXPECT_TRUE(d.sources.find("/gpu")->plainScalar);
  EXPECT_EQ(d.sources.find("/gpu")->writtenText, "1.0");
  EXPECT_EQ(d.sources.find("/ok")->writtenText, "true");
  EXPECT_FALSE(d.sources.find("/s")->plainScalar);  // a string is never resolved
  EXPECT_EQ(d.value["s"], json("010"));
}

TEST(JsonInput, EscapesDecodeLikeEncodingJson) {
  const json v = parseOne(R"({"e": "\u00e9\/\t", "pair": "\ud83d\ude00", "lone": "\ud800x", "low": "\udc00"})").value;
  EXPECT_EQ(v["e"], json("\xC3\xA9/\t"));
  EXPECT_EQ(v["pair"], json("\xF0\x9F\x98\x80"));
  EXPECT_EQ(v["lone"], json("\xEF\xBF\xBDx"));  // an unpaired surrogate becomes U+FFFD
  EXPECT_EQ(v["low"], json("\xEF\xBF\xBD"));
}

TEST(JsonInput, InvalidUtf8InAStringBecomesReplacementCharacters) {
  EXPECT_EQ(parseOne("{\"a\": \"x\xFFy\"}").value["a"], json("x\xEF\xBF\xBDy"));
}

TEST(JsonInput, ADuplicateKeyKeepsTheLastValueWithTheSameWarningAsYaml) {
  y::Document d = parseOne("{\n  \"env\": {\"a\": 1},\n  \"n\": 2,\n  \"env\": []\n}\n");
  EXPECT_EQ(d.value["env"], json::array());
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].kind, y::ParseWarning::Kind::DuplicateKey);
  EXPECT_EQ(d.warnings[0].position, at(4, 3));
  EXPECT_EQ(d.warnings[0].pointer, "/env");
  EXPECT_EQ(d.warnings[0].message, "mapping key \"env\" already defined at line 2; kubectl keeps the last value");
  EXPECT_EQ(d.sources.find("/env/a"), nullptr);  // the dropped value is gone from the source map
  EXPECT_EQ(d.sources.find("/env")->position, at(4, 10));
}

// --- what kubectl rejects ---------------------------------------------------------

// After two JSON objects kubectl no longer turns to YAML.
TEST(JsonInput, AfterTwoObjectsWhatJsonForbidsIsAnErrorWithItsPosition) {
  const std::string two = "{}\n{\"b\": 2}\n";
  EXPECT_EQ(errorOf(two + "{\"a\": 1,}").position, at(3, 9));                 // trailing comma
  EXPECT_EQ(errorOf(two + "{\"a\": 010}").position, at(3, 8));                // leading zero
  EXPECT_EQ(errorOf(two + "{'a': 1}").position, at(3, 2));                    // single quotes
  EXPECT_EQ(errorOf(two + "{\"a\": \"x\ty\"}").position, at(3, 9));           // raw tab in a string
  EXPECT_EQ(errorOf(two + "{\"a\": tru}").position, at(3, 10));               // broken literal
  EXPECT_EQ(errorOf(two + "{\"a\": 1}\n---\n{\"b\": 2}").position, at(4, 2));  // no YAML separators
  EXPECT_NE(errorOf(two + "{\"a\": 1").message.find("unexpected end of JSON input"), std::string::npos);
}

TEST(JsonInput, ANumberBeyondFloat64IsAnErrorAsInKubectl) {
  y::ParseError e = errorOf("{\"gpu\": 1e400}");
  EXPECT_EQ(e.position, at(1, 9));
  EXPECT_NE(e.message.find("out of range"), std::string::npos);
}

TEST(JsonInput, ValuesBeforeASyntaxErrorAreKept) {
  y::ParseResult r = y::parseStream("{\"a\": 1}\n{\"b\": 2}\n{\"c\": }\n{\"d\": 3}\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(3, 7));
  ASSERT_EQ(r.errors.size(), 1u);  // encoding/json cannot resynchronise after an error
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_EQ(r.documents[0].value, json({{"a", 1}}));
}

// --- hostile input -------------------------------------------------------------------

TEST(JsonInput, DeepNestingIsAnErrorNotACrash) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  y::ParseError e = errorOf(deep);
  EXPECT_NE(e.message.find("nested deeper than the limit of 256"), std::string::npos) << e.message;
}

// Each duplicate retires only the value it replaces (the run stays linear;
// test/bench measures it).
TEST(JsonInput, EveryDuplicateIsReportedAndOnlyTheLastValueStays) {
  std::string many = "{";
  for (int i = 0; i < 200000; ++i) many += "\"k\": {\"x\": 1},";
  many += "\"k\": 0}";
  y::Document d = parseOne(many);
  EXPECT_EQ(d.value, json({{"k", 0}}));
  EXPECT_EQ(d.warnings.size(), 200000u);
}

}  // namespace
