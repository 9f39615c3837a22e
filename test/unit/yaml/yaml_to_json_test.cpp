// The YAML loader, specified by example: what kubectl (sigs.k8s.io/yaml over
// go-yaml v2, YAML 1.1) would send for a manifest, and where every value
// came from.
#include "yaml/yaml_to_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace gpuguard::yaml {
// GoogleTest prints positions as line:column.
void PrintTo(const Position& p, std::ostream* os) { *os << p.line << ":" << p.column; }
}  // namespace gpuguard::yaml

namespace {

namespace y = gpuguard::yaml;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string describe(const y::ParseResult& r) {
  if (!r.error) return "no error";
  return "error at " + std::to_string(r.error->position.line) + ":" + std::to_string(r.error->position.column) + ": " +
         r.error->message;
}

// The single document of `text`, which must parse.
y::Document parseOne(std::string_view text, const y::Limits& limits = {}) {
  y::ParseResult r = y::parseStream(text, limits);
  EXPECT_FALSE(r.error) << describe(r) << "\ninput:\n" << text;
  EXPECT_EQ(r.documents.size(), 1u) << text;
  if (r.documents.empty()) return {};
  return std::move(r.documents.front());
}

json valueOf(std::string_view text) { return parseOne(text).value; }

// What kubectl makes of `v: <written>`.
json scalar(const std::string& written) { return valueOf("v: " + written + "\n")["v"]; }

// The error `text` must produce.
y::ParseError errorOf(std::string_view text, const y::Limits& limits = {}) {
  y::ParseResult r = y::parseStream(text, limits);
  EXPECT_TRUE(r.error.has_value()) << "expected an error for:\n" << text;
  return r.error.value_or(y::ParseError{});
}

y::Position at(int line, int column) { return y::Position{line, column}; }

bool isInt(const json& v, std::int64_t expected) {
  return v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() == expected;
}
bool isFloat(const json& v, double expected) { return v.is_number_float() && v.get<double>() == expected; }

// --- YAML 1.1 resolution of plain scalars (go-yaml v2 resolve) -------------

TEST(YamlPlainScalars, AllTwentyTwoYaml11BooleanSpellingsAreBooleans) {
  for (const char* t : {"true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})
    EXPECT_EQ(scalar(t), json(true)) << t;
  for (const char* f : {"false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF"})
    EXPECT_EQ(scalar(f), json(false)) << f;
}

TEST(YamlPlainScalars, OtherCapitalisationsOfBooleanWordsStayStrings) {
  for (const char* s : {"tRUE", "yES", "oN", "oFF", "nO", "fALSE", "yess", "Yes!", "t", "f", "enabled"})
    EXPECT_EQ(scalar(s), json(s)) << s;
}

TEST(YamlPlainScalars, TildeNullAndEmptyAreNull) {
  for (const char* n : {"~", "null", "Null", "NULL", ""}) EXPECT_TRUE(scalar(n).is_null()) << "[" << n << "]";
  EXPECT_EQ(scalar("nULL"), json("nULL"));
  EXPECT_EQ(scalar("none"), json("none"));
}

TEST(YamlPlainScalars, DecimalIntegersAreInt64) {
  EXPECT_TRUE(isInt(scalar("0"), 0));
  EXPECT_TRUE(isInt(scalar("-0"), 0));
  EXPECT_TRUE(isInt(scalar("42"), 42));
  EXPECT_TRUE(isInt(scalar("+1"), 1));
  EXPECT_TRUE(isInt(scalar("-5"), -5));
  EXPECT_TRUE(isInt(scalar("9223372036854775807"), INT64_MAX));
  EXPECT_TRUE(isInt(scalar("-9223372036854775808"), INT64_MIN));
}

TEST(YamlPlainScalars, LeadingZeroMeansOctal) {
  EXPECT_TRUE(isInt(scalar("010"), 8));  // the classic trap: 8 GPUs, not 10
  EXPECT_TRUE(isInt(scalar("0755"), 493));
  EXPECT_TRUE(isInt(scalar("-010"), -8));
  EXPECT_TRUE(isInt(scalar("+010"), 8));
  EXPECT_TRUE(isInt(scalar("00"), 0));
  EXPECT_TRUE(isInt(scalar("0o17"), 15));
  EXPECT_TRUE(isInt(scalar("0O17"), 15));
}

TEST(YamlPlainScalars, HexAndBinaryPrefixesAreIntegers) {
  EXPECT_TRUE(isInt(scalar("0x10"), 16));
  EXPECT_TRUE(isInt(scalar("0X1f"), 31));
  EXPECT_TRUE(isInt(scalar("-0x10"), -16));
  EXPECT_TRUE(isInt(scalar("0b11"), 3));
  EXPECT_TRUE(isInt(scalar("0B101"), 5));
  EXPECT_TRUE(isInt(scalar("-0b11"), -3));
}

TEST(YamlPlainScalars, UnderscoresAreRemovedBeforeParsingNumbers) {
  EXPECT_TRUE(isInt(scalar("1_000"), 1000));
  EXPECT_TRUE(isInt(scalar("1__0"), 10));
  EXPECT_TRUE(isInt(scalar("1_"), 1));
  EXPECT_TRUE(isInt(scalar("0x_10"), 16));
  EXPECT_TRUE(isFloat(scalar("1_000.5"), 1000.5));
  EXPECT_EQ(scalar("_1"), json("_1"));  // '_' is not a number's first character
}

TEST(YamlPlainScalars, IntegersBeyondInt64BecomeUint64ThenFloat) {
  json big = scalar("9223372036854775808");
  EXPECT_TRUE(big.is_number_unsigned());
  EXPECT_EQ(big.get<std::uint64_t>(), 9223372036854775808ULL);
  EXPECT_EQ(scalar("18446744073709551615").get<std::uint64_t>(), UINT64_MAX);
  EXPECT_TRUE(scalar("0xFFFFFFFFFFFFFFFF").is_number_unsigned());
  EXPECT_TRUE(isFloat(scalar("18446744073709551616"), 18446744073709551616.0));
  EXPECT_TRUE(isFloat(scalar("-9223372036854775809"), -9223372036854775809.0));
  EXPECT_EQ(scalar("0x1FFFFFFFFFFFFFFFF"), json("0x1FFFFFFFFFFFFFFFF"));  // too big and not a float: a string
}

TEST(YamlPlainScalars, InvalidOctalDigitsFallBackToFloat) {
  EXPECT_TRUE(isFloat(scalar("08"), 8.0));
  EXPECT_TRUE(isFloat(scalar("09.5"), 9.5));
  EXPECT_EQ(scalar("0o8"), json("0o8"));
  EXPECT_EQ(scalar("0b102"), json("0b102"));
  EXPECT_EQ(scalar("0x"), json("0x"));
  EXPECT_EQ(scalar("0xG"), json("0xG"));
}

TEST(YamlPlainScalars, FloatsMatchGoYamlsPattern) {
  EXPECT_TRUE(isFloat(scalar("1.5"), 1.5));
  EXPECT_TRUE(isFloat(scalar("1."), 1.0));
  EXPECT_TRUE(isFloat(scalar("1.0"), 1.0));
  EXPECT_TRUE(isFloat(scalar(".5"), 0.5));
  EXPECT_TRUE(isFloat(scalar("-.5"), -0.5));
  EXPECT_TRUE(isFloat(scalar("+.5"), 0.5));
  EXPECT_TRUE(isFloat(scalar("1e3"), 1000.0));  // a float, though JSON prints it as 1000
  EXPECT_TRUE(isFloat(scalar("1E3"), 1000.0));
  EXPECT_TRUE(isFloat(scalar("1.5e-7"), 1.5e-7));
  EXPECT_TRUE(isFloat(scalar("2.5E+2"), 250.0));
  EXPECT_TRUE(isFloat(scalar(".5e1"), 5.0));
  EXPECT_TRUE(isFloat(scalar(".5_5"), 0.55));  // Go's ParseFloat allows '_' between digits
}

TEST(YamlPlainScalars, FloatOverflowStaysAStringAndUnderflowIsZero) {
  EXPECT_EQ(scalar("1e400"), json("1e400"));  // strconv.ParseFloat: ErrRange
  EXPECT_EQ(scalar(".5e999"), json(".5e999"));
  EXPECT_TRUE(isFloat(scalar("1e-400"), 0.0));
  EXPECT_TRUE(scalar("4e-320").is_number_float());  // subnormal, kept
}

TEST(YamlPlainScalars, NearNumbersStayStrings) {
  for (const char* s : {"1.2.3", "1e", "e3", "1e+", ".", "._5", ".e3", "+", "-1-", "0x1p3", "1:30", "12:30:00", "1,000",
                        "Infinity", "inf", "NaN", "nan", ".INf", "1 000", "v1", "535.104.05", "12.4.1"})
    EXPECT_EQ(scalar(s), json(s)) << s;
}

TEST(YamlPlainScalars, TimestampsStayStrings) {
  EXPECT_EQ(scalar("2001-12-14"), json("2001-12-14"));
  EXPECT_EQ(scalar("2001-12-14t21:59:43.10-05:00"), json("2001-12-14t21:59:43.10-05:00"));
}

TEST(YamlPlainScalars, InfinityAndNaNCannotBeSentAsJson) {
  for (const char* s : {".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan", ".NaN", ".NAN"}) {
    y::ParseError e = errorOf(std::string("a: 1\nv: ") + s + "\n");
    EXPECT_EQ(e.position, at(2, 4)) << s;
    EXPECT_NE(e.message.find("json: unsupported value"), std::string::npos) << e.message;
  }
}

TEST(YamlPlainScalars, MultiLinePlainScalarsAreFoldedThenResolved) {
  EXPECT_EQ(valueOf("v: a\n  b\n")["v"], json("a b"));
  EXPECT_EQ(valueOf("v:\n  010\n")["v"], json(8));
}

// --- Quoted, block and tagged scalars ---------------------------------------

TEST(YamlQuotedScalars, QuotedAndBlockScalarsAreAlwaysStrings) {
  json v = valueOf(
      "a: \"010\"\nb: '010'\nc: \"yes\"\nd: 'true'\ne: \"null\"\nf: \"\"\ng: '~'\nh: \"1e3\"\n"
      "i: |\n  010\nj: >\n  yes\n  no\nk: |-\n  true\n");
  EXPECT_EQ(v["a"], json("010"));
  EXPECT_EQ(v["b"], json("010"));
  EXPECT_EQ(v["c"], json("yes"));
  EXPECT_EQ(v["d"], json("true"));
  EXPECT_EQ(v["e"], json("null"));
  EXPECT_EQ(v["f"], json(""));
  EXPECT_EQ(v["g"], json("~"));
  EXPECT_EQ(v["h"], json("1e3"));
  EXPECT_EQ(v["i"], json("010\n"));
  EXPECT_EQ(v["j"], json("yes no\n"));
  EXPECT_EQ(v["k"], json("true"));
}

TEST(YamlQuotedScalars, EscapesAreDecoded) {
  json v = valueOf("a: \"tab\\there \\u00e9 \\\"q\\\"\"\nb: 'it''s'\n");
  EXPECT_EQ(v["a"], json("tab\there \xC3\xA9 \"q\""));
  EXPECT_EQ(v["b"], json("it's"));
}

TEST(YamlTags, ExplicitTagsAreHonoured) {
  json v = valueOf(
      "a: !!str 010\nb: !!int \"010\"\nc: !!float 1\nd: !!bool yes\ne: !!null ~\nf: ! 010\ng: !custom 5\n"
      "h: !!binary aGVsbG8=\ni: !!timestamp 2001-12-14\nj: !!str\nk: !!float \"2.5\"\n");
  EXPECT_EQ(v["a"], json("010"));
  EXPECT_TRUE(isInt(v["b"], 8));
  EXPECT_TRUE(isFloat(v["c"], 1.0));
  EXPECT_EQ(v["d"], json(true));
  EXPECT_TRUE(v["e"].is_null());
  EXPECT_EQ(v["f"], json("010"));  // the non-specific tag "!" means string
  EXPECT_EQ(v["g"], json("5"));    // unknown tags: the text
  EXPECT_EQ(v["h"], json("hello"));
  EXPECT_EQ(v["i"], json("2001-12-14"));
  EXPECT_EQ(v["j"], json(""));
  EXPECT_TRUE(isFloat(v["k"], 2.5));
}

TEST(YamlTags, ATagThatDoesNotFitTheTextIsAnError) {
  EXPECT_EQ(errorOf("a: !!int abc\n").message, "cannot decode !!str `abc` as a !!int");
  EXPECT_EQ(errorOf("a: !!bool 1\n").message, "cannot decode !!int `1` as a !!bool");
  EXPECT_EQ(errorOf("a: !!null x\n").message, "cannot decode !!str `x` as a !!null");
  EXPECT_EQ(errorOf("a: !!int 1.5\n").message, "cannot decode !!float `1.5` as a !!int");
  EXPECT_EQ(errorOf("a: !!binary '***'\n").message, "!!binary value contains invalid base64 data");
  EXPECT_EQ(errorOf("a:\n  b: !!float .inf\n").position, at(2, 6));
}

// --- Origins -------------------------------------------------------------------

TEST(YamlOrigins, PlainScalarsKeepTheTextAsWritten) {
  y::Document d = parseOne("gpus: 010\nimage: \"nvcr.io/x:1\"\nenabled: yes\nempty:\nnone: ~\n");
  const y::NodeOrigin* gpus = d.sources.find("/gpus");
  ASSERT_NE(gpus, nullptr);
  EXPECT_TRUE(gpus->plainScalar);
  EXPECT_EQ(gpus->writtenText, "010");
  EXPECT_TRUE(isInt(d.value["gpus"], 8));
  const y::NodeOrigin* image = d.sources.find("/image");
  ASSERT_NE(image, nullptr);
  EXPECT_FALSE(image->plainScalar);
  EXPECT_EQ(image->writtenText, "");
  EXPECT_EQ(d.sources.find("/enabled")->writtenText, "yes");
  EXPECT_TRUE(d.sources.find("/empty")->plainScalar);
  EXPECT_EQ(d.sources.find("/empty")->writtenText, "");
  EXPECT_EQ(d.sources.find("/none")->writtenText, "~");
}

TEST(YamlOrigins, EveryNodeHasItsPositionAndMapValuesTheirKeyPosition) {
  y::Document d = parseOne(
      "apiVersion: v1\n"                   // 1
      "kind: Pod\n"                        // 2
      "spec:\n"                            // 3
      "  containers:\n"                    // 4
      "  - name: cuda\n"                   // 5
      "    resources:\n"                   // 6
      "      limits:\n"                    // 7
      "        nvidia.com/gpu: 2\n"        // 8
      "    args: [--a, {k: v}]\n");        // 9
  const y::SourceMap& s = d.sources;
  EXPECT_EQ(s.find("")->position, at(1, 1));
  EXPECT_EQ(s.find("/kind")->position, at(2, 7));
  EXPECT_EQ(s.find("/kind")->keyPosition, at(2, 1));
  EXPECT_EQ(s.find("/spec")->position, at(4, 3));
  EXPECT_EQ(s.find("/spec")->keyPosition, at(3, 1));
  EXPECT_EQ(s.find("/spec/containers")->position, at(5, 3));
  EXPECT_EQ(s.find("/spec/containers/0")->position, at(5, 5));
  EXPECT_EQ(s.find("/spec/containers/0")->keyPosition, at(0, 0));  // sequence items have no key
  EXPECT_EQ(s.find("/spec/containers/0/name")->position, at(5, 11));
  const y::NodeOrigin* gpu = s.find("/spec/containers/0/resources/limits/nvidia.com~1gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->position, at(8, 25));
  EXPECT_EQ(gpu->keyPosition, at(8, 9));
  EXPECT_EQ(s.find("/spec/containers/0/args")->position, at(9, 11));
  EXPECT_EQ(s.find("/spec/containers/0/args/1")->position, at(9, 17));
  EXPECT_EQ(s.find("/spec/containers/0/args/1/k")->position, at(9, 21));
  EXPECT_EQ(s.find("/spec/containers/0/args/1/k")->keyPosition, at(9, 18));
  EXPECT_EQ(s.find("/nope"), nullptr);
}

TEST(YamlOrigins, EntriesListEveryNodeInDocumentOrder) {
  y::Document d = parseOne("a: 1\nb: [x, y]\n");
  std::vector<std::string> pointers;
  for (const auto& e : d.sources.entries()) pointers.push_back(e.pointer);
  EXPECT_EQ(pointers, (std::vector<std::string>{"", "/a", "/b", "/b/0", "/b/1"}));
}

TEST(YamlOrigins, AnEmptyValueIsLocatedAtItsKeyAndAnEmptyItemAtItsDash) {
  y::Document d = parseOne("limits:\nnext: 1\nlist:\n- \n- a\n");
  EXPECT_TRUE(d.value["limits"].is_null());
  EXPECT_EQ(d.sources.find("/limits")->position, at(1, 1));
  EXPECT_EQ(d.sources.find("/list/0")->position, at(4, 1));
}

TEST(YamlOrigins, LocateFallsBackToTheNearestKnownAncestor) {
  y::Document d = parseOne("spec:\n  template:\n    spec:\n      containers: []\n");
  EXPECT_EQ(d.sources.locate("/spec/template/spec/containers"), at(4, 19));
  EXPECT_EQ(d.sources.locate("/spec/template/spec/nodeSelector"), at(4, 7));  // the map /spec/template/spec
  EXPECT_EQ(d.sources.locate("/spec/template/spec/containers/0/resources"), at(4, 19));
  EXPECT_EQ(d.sources.locate("/missing/deeply/nested"), at(1, 1));
  EXPECT_EQ(d.sources.locate(""), at(1, 1));
  EXPECT_EQ(y::SourceMap{}.locate("/x"), at(0, 0));
}

TEST(YamlOrigins, ColumnsCountCharactersNotBytes) {
  y::Document d = parseOne("é: [ü, x]\n");
  EXPECT_EQ(d.sources.find("/é")->position, at(1, 4));
  EXPECT_EQ(d.sources.find("/é/1")->position, at(1, 8));
}

TEST(YamlOrigins, SourceMapAddReplacesOrInserts) {
  y::SourceMap m;
  y::NodeOrigin o;
  o.position = at(3, 4);
  m.add("/b", o);
  o.position = at(1, 2);
  m.add("/a", o);
  o.position = at(5, 6);
  m.add("/b", o);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.find("/b")->position, at(5, 6));
  EXPECT_EQ(m.locate("/a/x"), at(1, 2));
}

// --- JSON pointers ---------------------------------------------------------------

TEST(YamlPointers, SourceMapKeysAreEscapedPerRfc6901) {
  y::Document d = parseOne("nvidia.com/gpu: 1\n\"a~b/c\": 2\n\"\": 3\n");
  EXPECT_NE(d.sources.find("/nvidia.com~1gpu"), nullptr);
  EXPECT_NE(d.sources.find("/a~0b~1c"), nullptr);
  EXPECT_NE(d.sources.find("/"), nullptr);  // the empty key
}

// --- Map keys (sigs.k8s.io/yaml convertToJSONableObject) ------------------------

TEST(YamlKeys, NonStringKeysBecomeTheirGoSpelling) {
  json v = valueOf("1: a\n010: b\n0x10: c\nyes: d\nn: e\n1.5: f\n1e6: g\n\"2\": h\n.inf: i\n-0: j\n");
  EXPECT_EQ(v["1"], json("a"));
  EXPECT_EQ(v["8"], json("b"));  // octal
  EXPECT_EQ(v["16"], json("c"));
  EXPECT_EQ(v["true"], json("d"));
  EXPECT_EQ(v["false"], json("e"));  // "n" is a YAML 1.1 boolean
  EXPECT_EQ(v["1.5"], json("f"));
  EXPECT_EQ(v["1e+06"], json("g"));  // strconv.FormatFloat(k, 'g', -1, 32)
  EXPECT_EQ(v["2"], json("h"));
  EXPECT_EQ(v[".inf"], json("i"));
  EXPECT_EQ(v["0"], json("j"));
}

TEST(YamlKeys, NullUint64AndCollectionKeysAreErrors) {
  EXPECT_EQ(errorOf("a: 1\n~: 2\n").position, at(2, 1));
  EXPECT_NE(errorOf("null: 1\n").message.find("unsupported map key"), std::string::npos);
  EXPECT_NE(errorOf("18446744073709551615: x\n").message.find("uint64"), std::string::npos);
  EXPECT_NE(errorOf("? [1, 2]\n: x\n").message.find("invalid map key"), std::string::npos);
  // (Not first in the stream: a stream that starts with '{' is JSON.)
  EXPECT_NE(errorOf("k: 1\n{a: 1}: x\n").message.find("invalid map key"), std::string::npos);
}

TEST(YamlKeys, AnAliasCanBeAKey) {
  EXPECT_EQ(valueOf("a: &k name\n*k : v\n"), json({{"a", "name"}, {"name", "v"}}));
}

// --- Duplicate keys ----------------------------------------------------------------

TEST(YamlDuplicateKeys, KubectlKeepsTheLastValueAndWeWarn) {
  y::Document d = parseOne("image: a\nreplicas: 1\nimage: b\n");
  EXPECT_EQ(d.value["image"], json("b"));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].position, at(3, 1));
  EXPECT_EQ(d.warnings[0].pointer, "/image");
  EXPECT_NE(d.warnings[0].message.find("mapping key \"image\" already defined at line 1"), std::string::npos);
  EXPECT_EQ(d.warnings[0].kind, y::ParseWarning::Kind::DuplicateKey);
  EXPECT_EQ(d.sources.find("/image")->position, at(3, 8));
}

TEST(YamlDuplicateKeys, KeysThatResolveToTheSameNameAreDuplicates) {
  y::Document d = parseOne("010: a\n8: b\n");
  EXPECT_EQ(d.value, json({{"8", "b"}}));
  EXPECT_EQ(d.warnings.size(), 1u);
}

TEST(YamlDuplicateKeys, TheReplacedValuesChildrenLeaveTheSourceMap) {
  y::Document d = parseOne("env:\n  a: 1\n  b: 2\nenv: []\n");
  EXPECT_EQ(d.value["env"], json::array());
  EXPECT_EQ(d.sources.find("/env/a"), nullptr);
  EXPECT_EQ(d.sources.find("/env")->position, at(4, 6));
}

TEST(YamlDuplicateKeys, StrictModeMakesThemAnError) {
  y::Limits strict;
  strict.rejectDuplicateKeys = true;
  y::ParseError e = errorOf("spec:\n  x: 1\n  x: 2\n", strict);
  EXPECT_EQ(e.position, at(3, 3));
  EXPECT_EQ(e.message, "mapping key \"x\" already defined at line 2");
}

// --- Anchors, aliases and merge keys ------------------------------------------------

TEST(YamlAliases, AnAliasCopiesTheAnchoredValue) {
  y::Document d = parseOne("base: &gpu\n  nvidia.com/gpu: 010\nlimits: *gpu\ncount: &n 4\nother: *n\n");
  EXPECT_EQ(d.value["limits"], json({{"nvidia.com/gpu", 8}}));
  EXPECT_TRUE(isInt(d.value["other"], 4));
  EXPECT_EQ(d.sources.find("/limits")->position, at(3, 9));  // the alias
  const y::NodeOrigin* copied = d.sources.find("/limits/nvidia.com~1gpu");
  ASSERT_NE(copied, nullptr);
  EXPECT_EQ(copied->position, at(2, 19));  // where the anchor wrote it
  EXPECT_EQ(copied->writtenText, "010");
  EXPECT_EQ(d.sources.find("/other")->writtenText, "4");
}

TEST(YamlAliases, UnknownAndSelfReferencingAnchorsAreErrors) {
  EXPECT_EQ(errorOf("a: *nope\n").message, "unknown anchor 'nope' referenced");
  y::ParseError self = errorOf("a: &x [1, *x]\n");
  EXPECT_EQ(self.message, "anchor 'x' value contains itself");
  EXPECT_EQ(self.position, at(1, 11));
}

TEST(YamlMergeKeys, MergedKeysAreAddedAndLaterKeysWin) {
  y::Document d = parseOne(
      "defaults: &d\n"
      "  cpu: 1\n"
      "  memory: 1Gi\n"
      "pod:\n"
      "  <<: *d\n"
      "  memory: 2Gi\n");
  EXPECT_EQ(d.value["pod"], json({{"cpu", 1}, {"memory", "2Gi"}}));
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_EQ(d.sources.find("/pod/cpu")->position, at(2, 8));
  EXPECT_EQ(d.sources.find("/pod/memory")->position, at(6, 11));
  EXPECT_EQ(d.sources.find("/pod/<<"), nullptr);
}

TEST(YamlMergeKeys, GoYamlV2AppliesAMergeInPlaceSoItOverridesEarlierKeys) {
  EXPECT_EQ(valueOf("m: &m {a: 2}\nx:\n  a: 1\n  <<: *m\n")["x"], json({{"a", 2}}));
}

TEST(YamlMergeKeys, InASequenceOfMapsEarlierMapsTakePrecedence) {
  json v = valueOf(
      "- &A {a: 1, b: 1}\n"
      "- &B {b: 2, c: 2}\n"
      "- <<: [*A, *B, {c: 3, d: 3}]\n"
      "  d: 4\n");
  EXPECT_EQ(v[2], json({{"a", 1}, {"b", 1}, {"c", 2}, {"d", 4}}));
}

TEST(YamlMergeKeys, InlineMapsMergeToo) {
  EXPECT_EQ(valueOf("x:\n  <<: {a: 1}\n  b: 2\n")["x"], json({{"a", 1}, {"b", 2}}));
}

TEST(YamlMergeKeys, AQuotedMergeKeyIsAnOrdinaryKey) {
  EXPECT_EQ(valueOf("\"<<\": {a: 1}\n"), json({{"<<", {{"a", 1}}}}));
}

TEST(YamlMergeKeys, MergingAnythingButMapsIsAnError) {
  EXPECT_EQ(errorOf("a: 1\n<<: 5\n").message, "map merge requires map or sequence of maps as the value");
  EXPECT_EQ(errorOf("s: &s [1]\nx:\n  <<: *s\n").position, at(3, 7));
  EXPECT_EQ(errorOf("x:\n  <<: [1]\n").message, "map merge requires map or sequence of maps as the value");
}

// --- Streams ----------------------------------------------------------------------------

TEST(YamlStreams, DocumentsAreSplitOnSeparatorLines) {
  y::ParseResult r = y::parseStream("a: 1\n---\nb: 2\n--- # comment after the separator\nc: 3\n");
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[0].value, json({{"a", 1}}));
  EXPECT_EQ(r.documents[2].value, json({{"c", 3}}));
  EXPECT_EQ(r.documents[2].index, 2u);
  EXPECT_EQ(r.documents[1].start, at(3, 1));
  EXPECT_EQ(r.documents[2].start, at(5, 1));
  EXPECT_EQ(r.documents[2].sources.find("/c")->position, at(5, 4));  // lines count from the stream start
}

TEST(YamlStreams, EmptySectionsAreSkippedAndCommentOnlySectionsAreNull) {
  y::ParseResult r = y::parseStream("---\n---\n# just a comment\n---\na: 1\n---\n\n---\n---\n");
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_TRUE(r.documents[0].value.is_null());
  EXPECT_EQ(r.documents[0].start, at(3, 1));
  EXPECT_EQ(r.documents[1].value, json({{"a", 1}}));
  EXPECT_TRUE(r.documents[2].value.is_null());  // the blank line
  EXPECT_TRUE(y::parseStream("").documents.empty());
  EXPECT_TRUE(y::parseStream("---\n").documents.empty());
}

TEST(YamlStreams, OnlyASeparatorLineSplits) {
  y::ParseResult r = y::parseStream("script: |\n  ---\n  echo\nb: \"x\n  --- y\"\n");
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.documents[0].value["script"], json("---\necho\n"));
}

TEST(YamlStreams, ContentAfterASeparatorIsAnErrorAndTheDocumentsAroundItAreParsed) {
  y::ParseResult r = y::parseStream("a: 1\n---\nb: 2\n--- !!map\nc: 3\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(4, 5));  // at the text after "---"
  EXPECT_NE(r.error->message.find("invalid document separator \"--- !!map\""), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find("invalid Yaml document separator: !!map"), std::string::npos) << r.error->message;
  // kubectl stops at the bad line (and drops "b: 2" with it); a linter shows
  // everything it can: the documents on both sides are parsed.
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[1].value, json({{"b", 2}}));
  EXPECT_EQ(r.documents[2].value, json({{"c", 3}}));
  EXPECT_EQ(r.documents[2].start, at(5, 1));
}

// apimachinery's YAMLReader: a line that starts with "---" is a separator;
// strings.TrimSpace of the rest must be empty or start with '#'.
TEST(YamlStreams, SeparatorLinesAreExactlyThoseKubectlsSplitterAccepts) {
  for (const char* separator : {"---", "---   ", "---\t", "--- # Source: chart/templates/pod.yaml", "---# comment",
                                "---\t# comment", "---\r"}) {
    y::ParseResult r = y::parseStream("a: 1\n" + std::string(separator) + "\nb: 2\n");
    EXPECT_FALSE(r.error) << "separator \"" << separator << "\": " << describe(r);
    ASSERT_EQ(r.documents.size(), 2u) << separator;
    EXPECT_EQ(r.documents[1].value, json({{"b", 2}})) << separator;
  }
}

TEST(YamlStreams, TextAfterTheDashesIsAnErrorAtThatText) {
  struct Case {
    const char* line;
    int column;
  };
  for (const Case& c : {Case{"--- !tag", 5}, Case{"---foo", 4}, Case{"--- {a: 1}", 5}, Case{"----", 4}, Case{"--- |", 5},
                        Case{"---  x # y", 6}, Case{"--- \"a\"", 5}}) {
    y::ParseResult r = y::parseStream("a: 1\n" + std::string(c.line) + "\nb: 2\n");
    ASSERT_TRUE(r.error) << c.line;
    EXPECT_EQ(r.error->position, at(2, c.column)) << c.line;
    EXPECT_NE(r.error->message.find("invalid document separator"), std::string::npos) << c.line;
    ASSERT_EQ(r.errors.size(), 1u) << c.line;
    ASSERT_EQ(r.documents.size(), 2u) << c.line;  // "a: 1" and "b: 2" both parsed
    EXPECT_EQ(r.documents[0].value, json({{"a", 1}})) << c.line;
    EXPECT_EQ(r.documents[1].value, json({{"b", 2}})) << c.line;
  }
}

TEST(YamlStreams, DashesThatDoNotStartALineDoNotSeparate) {
  EXPECT_EQ(valueOf("a: 1\n ---\nb: x---y\n"), json({{"a", "1 ---"}, {"b", "x---y"}}));
}

TEST(YamlStreams, ASecondDocumentAfterAnEndMarkerIsIgnoredWithAWarning) {
  y::Document d = parseOne("a: 1\n...\nb: 2\n");
  EXPECT_EQ(d.value, json({{"a", 1}}));
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].message.find("only the first"), std::string::npos);
  EXPECT_EQ(d.warnings[0].kind, y::ParseWarning::Kind::IgnoredContent);
}

TEST(YamlStreams, AnEndMarkerAloneEndsTheDocumentQuietly) {
  y::ParseResult r = y::parseStream("a: 1\n...\n---\nb: 2\n...\n");
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_TRUE(r.documents[0].warnings.empty());
  EXPECT_EQ(r.documents[1].value, json({{"b", 2}}));
}

TEST(YamlStreams, AScalarDocument) {
  EXPECT_TRUE(isInt(valueOf("010\n"), 8));
  EXPECT_TRUE(valueOf("~\n").is_null());
}

TEST(YamlStreams, ByteOrderMarkIsAccepted) {
  y::Document d = parseOne("\xEF\xBB\xBF" "a: 1\n");
  EXPECT_EQ(d.value, json({{"a", 1}}));
  EXPECT_EQ(d.sources.find("/a")->position, at(1, 4));
}

TEST(YamlStreams, Utf16WithByteOrderMarkIsConverted) {
  std::string le("\xFF\xFE", 2);
  for (char16_t c : std::u16string(u"a: é\n")) {
    le += static_cast<char>(c & 0xFF);
    le += static_cast<char>(c >> 8);
  }
  EXPECT_EQ(valueOf(le), json({{"a", "é"}}));
}

TEST(YamlStreams, CrLfLineEndingsAreFine) {
  y::ParseResult r = y::parseStream("a: x\r\nb: |\r\n  l1\r\n  l2\r\nc: \"q\r\n  r\"\r\n---\r\nd: 010\r\n");
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_EQ(r.documents[0].value, json({{"a", "x"}, {"b", "l1\nl2\n"}, {"c", "q r"}}));
  EXPECT_TRUE(isInt(r.documents[1].value["d"], 8));
  EXPECT_EQ(r.documents[1].sources.find("/d")->position, at(8, 4));
}

// CR-only line breaks (classic Mac OS). kubectl's reader (apimachinery's
// YAMLReader over bufio ReadLine) ends lines at LF only; go-yaml, given one
// of its documents, takes a lone CR for a line break and reads the first
// YAML document only.
y::Limits asKubectlReads() {
  y::Limits limits;
  limits.onlyWhatKubectlReads = true;
  return limits;
}

TEST(YamlCrOnlyLineBreaks, KubectlReadsOnlyTheFirstDocumentOfTheFile) {
  const std::string text = "a: 1\r---\rb: 2\r---\rc: 3\r";
  y::ParseResult r = y::parseStream(text, asKubectlReads());
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.documents[0].value, json({{"a", 1}}));
  ASSERT_EQ(r.documents[0].warnings.size(), 1u);
  const y::ParseWarning& w = r.documents[0].warnings[0];
  EXPECT_EQ(w.kind, y::ParseWarning::Kind::IgnoredContent);
  EXPECT_EQ(w.position, at(2, 1));  // the first "---" kubectl does not cut at
  EXPECT_THAT(w.message, ::testing::HasSubstr("CR-only line breaks: kubectl reads only the first document of this file"));
  EXPECT_THAT(w.message, ::testing::HasSubstr("the 2 documents from line 2 on are never applied"));
}

TEST(YamlCrOnlyLineBreaks, WithoutTheLimitEveryDocumentIsRead) {
  // gpuguard's own files (policies, facts) are read whole.
  y::ParseResult r = y::parseStream("a: 1\r---\rb: 2\r");
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_TRUE(r.documents[0].warnings.empty());
}

TEST(YamlCrOnlyLineBreaks, CommentsBeforeTheFirstDocumentDoNotCount) {
  // go-yaml's first document is the first that holds a node.
  y::ParseResult r = y::parseStream("# header\r---\ra: 1\r---\rb: 2\r", asKubectlReads());
  ASSERT_FALSE(r.error) << describe(r);
  std::vector<json> values;
  for (const y::Document& d : r.documents) values.push_back(d.value);
  EXPECT_EQ(values, (std::vector<json>{nullptr, json({{"a", 1}})}));
  ASSERT_EQ(r.documents[1].warnings.size(), 1u);
  EXPECT_EQ(r.documents[1].warnings[0].position, at(4, 1));
}

TEST(YamlCrOnlyLineBreaks, AnLfSeparatorStartsADocumentKubectlReads) {
  y::ParseResult r = y::parseStream("a: 1\r---\rb: 2\n---\nc: 3\r---\rd: 4\n", asKubectlReads());
  ASSERT_FALSE(r.error) << describe(r);
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_EQ(r.documents[0].value, json({{"a", 1}}));
  EXPECT_EQ(r.documents[1].value, json({{"c", 3}}));
  EXPECT_EQ(r.documents[1].index, 2u);  // the stream's numbering counts the dropped section
  for (const y::Document& d : r.documents) {
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_THAT(d.warnings[0].message, ::testing::HasSubstr("the lines up to the next LF line break"));
  }
}

TEST(YamlCrOnlyLineBreaks, ASeparatorLineGoingOnPastACrIsKubectlsInvalidSeparator) {
  y::ParseResult r = y::parseStream("---\ra: 1\r---\rb: 2\r", asKubectlReads());
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(1, 1));
  EXPECT_THAT(r.error->message, ::testing::HasSubstr("invalid Yaml document separator: a: 1..."));
  EXPECT_TRUE(r.documents.empty());
  // A comment after "---" is a separator kubectl accepts: the first document is read.
  y::ParseResult commented = y::parseStream("--- # pods\ra: 1\r---\rb: 2\r", asKubectlReads());
  ASSERT_FALSE(commented.error) << describe(commented);
  ASSERT_EQ(commented.documents.size(), 1u);
  EXPECT_EQ(commented.documents[0].value, json({{"a", 1}}));
}

TEST(YamlCrOnlyLineBreaks, CrLfFilesAreNotConcerned) {
  y::ParseResult r = y::parseStream("a: 1\r\n---\r\nb: 2\r\n", asKubectlReads());
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_TRUE(r.documents[0].warnings.empty());
}

// --- Errors -------------------------------------------------------------------------------

TEST(YamlErrors, DocumentsBeforeAndAfterAnErrorAreReturned) {
  y::ParseResult r = y::parseStream("a: 1\n---\nb: 2\n---\nc: [1\n---\nd: 4\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(5, 4));
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[2].value, json({{"d", 4}}));
  EXPECT_EQ(r.documents[2].index, 3u);  // the stream's numbering: the bad section was #2
  EXPECT_EQ(r.documents[2].sources.find("/d")->position, at(7, 4));
}

TEST(YamlErrors, EverySectionThatDoesNotParseHasItsOwnError) {
  y::ParseResult r = y::parseStream("a: [1\n---\nb: 2\n---\nc: \xFF\n---\nd: {\n");
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(r.errors[0].position, at(1, 4));
  EXPECT_EQ(r.errors[1].position, at(5, 4));
  EXPECT_NE(r.errors[1].message.find("UTF-8"), std::string::npos);
  EXPECT_EQ(r.errors[2].position, at(7, 4));
  EXPECT_EQ(r.error->position, r.errors[0].position);  // `error` is the first
  ASSERT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.documents[0].value, json({{"b", 2}}));
}

TEST(YamlErrors, TextAfterAFlowCollectionSaysToQuoteTheValue) {
  // kserve's sample: "{username}" was meant as a placeholder.
  y::ParseError e = errorOf("spec:\n  containers:\n    - image: {username}/torchserve-gpu:latest\n      name: c\n");
  EXPECT_EQ(e.position, at(3, 24));
  EXPECT_NE(e.message.find("did not find expected key"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("quote the whole value"), std::string::npos) << e.message;
}

TEST(YamlErrors, TabIndentationIsReportedAtTheTab) {
  y::ParseError e = errorOf("spec:\n\tcontainers: []\n");
  EXPECT_EQ(e.position, at(2, 1));
  EXPECT_NE(e.message.find("tab"), std::string::npos);
  EXPECT_EQ(errorOf("\ta: 1\n").position, at(1, 1));
  EXPECT_EQ(errorOf("a:\n  b: 1\n\t\n  c: 2\n").position, at(3, 1));
  EXPECT_EQ(errorOf("a: |\n\tx\n").position, at(2, 1));
}

TEST(YamlErrors, ATabWhereLibyamlWantsASpaceIsAnError) {
  EXPECT_EQ(errorOf("key:\tvalue\n").position, at(1, 5));
  EXPECT_EQ(errorOf("list:\n-\titem\n").position, at(2, 2));
}

TEST(YamlErrors, TabsAreFineInsideValuesFlowsAndAfterValues) {
  EXPECT_EQ(valueOf("a: x\ty\nb: [1,\t2]\nc: 3\t# comment\nd: \"\t\"\n"),
            json({{"a", "x\ty"}, {"b", {1, 2}}, {"c", 3}, {"d", "\t"}}));
}

TEST(YamlErrors, UnclosedFlowCollectionsNameTheirOpeningBracket) {
  y::ParseError seq = errorOf("a: [1, 2\nb: 3\n");
  EXPECT_EQ(seq.position.line, 2);
  EXPECT_EQ(seq.message, "did not find expected ',' or ']' to continue or close the flow sequence opened at line 1, column 4");
  // Noticed only at the end of the document: reported at the bracket.
  y::ParseError map = errorOf("x: 1\na: {b: [1], c: 2\n");
  EXPECT_EQ(map.position, at(2, 4));
  EXPECT_EQ(map.message, "did not find expected ',' or '}' to continue or close the flow mapping opened at line 2, column 4");
}

TEST(YamlErrors, UnterminatedQuotedScalar) {
  y::ParseError e = errorOf("a: 1\nb: \"open\nc: 2\n");
  EXPECT_EQ(e.position, at(2, 4));
  EXPECT_NE(e.message.find("unexpected end of stream"), std::string::npos);
  EXPECT_EQ(errorOf("a: 'open\n").position, at(1, 4));
}

TEST(YamlErrors, BadIndentationAndStrayColons) {
  y::ParseError e = errorOf("a: b: c\n");
  EXPECT_EQ(e.position, at(1, 5));
  EXPECT_NE(e.message.find("mapping values are not allowed"), std::string::npos);
  EXPECT_EQ(errorOf("a:\n  b: 1\n c: 2\n").position.line, 3);
}

TEST(YamlErrors, InvalidUtf8AndControlCharacters) {
  y::ParseError e = errorOf("a: 1\nb: \xFF\n");
  EXPECT_EQ(e.position, at(2, 4));
  EXPECT_NE(e.message.find("UTF-8"), std::string::npos);
  EXPECT_EQ(errorOf("a: \xC3\n").position, at(1, 4));              // truncated
  EXPECT_EQ(errorOf("a: \xE0\x80\x80\n").position, at(1, 4));      // overlong
  EXPECT_EQ(errorOf("a: \xED\xA0\x80\n").position, at(1, 4));      // surrogate
  EXPECT_EQ(errorOf("é: x\x01\n").position, at(1, 5));             // columns in characters
  EXPECT_NE(errorOf("a: \x7F\n").message.find("U+007F"), std::string::npos);
  EXPECT_NE(errorOf(std::string("a: x\0y\n", 7)).message.find("control character"), std::string::npos);
  y::ParseResult r = y::parseStream("a: 1\n---\nb: \xFF\n");
  EXPECT_EQ(r.documents.size(), 1u);  // the section before is fine
}

// --- Hostile input: limits, never a crash or a hang --------------------------------------

template <class F>
double seconds(F&& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(YamlHostileInput, HundredThousandOpenBracketsFailFast) {
  std::string text(100000, '[');
  y::ParseResult r;
  EXPECT_LT(seconds([&] { r = y::parseStream(text); }), 10.0);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(1, 257));
  EXPECT_NE(r.error->message.find("256"), std::string::npos);
  std::string braces;
  for (int i = 0; i < 100000; ++i) braces += "{a: ";
  EXPECT_TRUE(y::parseStream(braces).error);
}

TEST(YamlHostileInput, HundredThousandNestedBlockSequencesFailFast) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "- ";
  text += "x\n";
  y::ParseResult r;
  EXPECT_LT(seconds([&] { r = y::parseStream(text); }), 10.0);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(1, 513));
}

TEST(YamlHostileInput, DeepIndentationFailsAtTheDepthLimit) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::string(static_cast<std::size_t>(i) * 2, ' ') + "k:\n";
  y::ParseResult r = y::parseStream(text);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position.line, 257);
}

TEST(YamlHostileInput, DepthLimitIsConfigurable) {
  y::Limits l;
  l.maxDepth = 3;
  EXPECT_FALSE(y::parseStream("a: {b: [1]}\n", l).error);
  EXPECT_EQ(y::parseStream("a: {b: [[1]]}\n", l).error.value_or(y::ParseError{}).position, at(1, 9));
  EXPECT_EQ(y::parseStream("a:\n  b:\n    c:\n      d: 1\n", l).error.value_or(y::ParseError{}).position, at(4, 7));
}

TEST(YamlHostileInput, BillionLaughsIsRefusedBeforeExpansion) {
  std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  y::ParseResult r;
  EXPECT_LT(seconds([&] { r = y::parseStream(text); }), 10.0);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("excessive aliasing"), std::string::npos) << r.error->message;
}

TEST(YamlHostileInput, AliasExpansionIsBoundedByMaxNodes) {
  // Few aliases of a big anchor: not "excessive aliasing" for go-yaml, but
  // over our node budget.
  std::string text = "big: &b [";
  for (int i = 0; i < 3000; ++i) text += (i ? ", " : "") + std::to_string(i);
  text += "]\ncopies: [*b, *b, *b, *b]\n";
  y::Limits l;
  l.maxNodes = 10000;
  y::ParseResult r = y::parseStream(text, l);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(2, 18));  // the third copy crosses 10000
  EXPECT_NE(r.error->message.find("10000 nodes"), std::string::npos);
  EXPECT_FALSE(y::parseStream(text).error);
}

TEST(YamlHostileInput, AliasChainsCannotBuildDeepValues) {
  std::string text = "a0: &a0 [x]\n";
  for (int i = 1; i < 400; ++i) text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + "]\n";
  y::ParseResult r = y::parseStream(text);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("deeper"), std::string::npos);
}

TEST(YamlHostileInput, FiftyMegabyteScalarIsRefusedQuickly) {
  std::string text = "data: " + std::string(50u << 20, 'x') + "\n";
  y::ParseResult r;
  EXPECT_LT(seconds([&] { r = y::parseStream(text); }), 15.0);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(1, 7));
  EXPECT_NE(r.error->message.find("scalar is larger"), std::string::npos);
  std::string quoted = "data: \"" + std::string(9u << 20, 'x') + "\"\n";
  EXPECT_EQ(y::parseStream(quoted).error.value_or(y::ParseError{}).position, at(1, 7));
  std::string block = "data: |\n" + std::string(1u << 20, '\n');
  for (int i = 0; i < 100000; ++i) block += "  " + std::string(99, 'x') + "\n";
  EXPECT_EQ(y::parseStream(block).error.value_or(y::ParseError{}).position, at(1, 7));
}

TEST(YamlHostileInput, ScalarsWithinTheLimitAreKept) {
  y::Limits l;
  l.maxScalarBytes = 64;
  EXPECT_EQ(valueOf("a: " + std::string(60, 'x') + "\n")["a"].get<std::string>().size(), 60u);
  EXPECT_TRUE(y::parseStream("a: " + std::string(65, 'x') + "\n", l).error);
  EXPECT_FALSE(y::parseStream("a: " + std::string(64, 'x') + "\n", l).error);
}

TEST(YamlHostileInput, HugeFlowCollectionsAreRefused) {
  y::Limits l;
  l.maxFlowBytes = 1000;
  std::string text = "a: [";
  for (int i = 0; i < 1000; ++i) text += "1, ";
  text += "]\n";
  y::ParseResult r = y::parseStream(text, l);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->position, at(1, 4));
}

TEST(YamlHostileInput, OversizedInputIsRefusedUpFront) {
  y::Limits l;
  l.maxDocumentBytes = 10;
  EXPECT_EQ(errorOf("a: 12345678901\n", l).position, at(1, 1));
}

TEST(YamlHostileInput, BracketsInsideStringsCommentsAndBlockScalarsDoNotCount) {
  y::Limits l;
  l.maxDepth = 3;
  std::string text =
      "# [[[[ {{{{ \"\n"
      "a: b[[[[c\n"
      "s: 'it''s [[[['\n"
      "d: \"esc \\\" [[[[\"\n"
      "e: [x, \"[[[[\", '{{{{']\n"
      "f: |\n"
      "  [[[[[[\n"
      "g: plain\n"
      "  [[[[ continued\n"
      "i: it's [[[[\n"
      "k: \"multi\n"
      "  line [[[[\"\n"
      "m: http://x/[[[[\n";
  y::ParseResult r = y::parseStream(text, l);
  EXPECT_FALSE(r.error) << describe(r);
}

}  // namespace
