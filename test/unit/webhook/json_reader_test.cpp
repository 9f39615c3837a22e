// webhook::readJson: the AdmissionReview reader. It must accept and reject
// exactly what nlohmann::json::parse does and build the very same tree; only
// its speed, its pruning and its nesting limit differ. The differential fuzz
// harness (test/fuzz/fuzz_json_reader.cpp) checks the same on arbitrary bytes.
#include "webhook/json_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/fuzz/same_json.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Read {
  bool ok = false;
  json value;
  JsonReadError error;
};

Read read(std::string_view text, const JsonReadOptions& options = {}) {
  Read r;
  r.ok = readJson(text, r.value, r.error, options);
  return r;
}

// ---------------------------------------------------------------------------
// Same accept/reject set and same tree as nlohmann.
// ---------------------------------------------------------------------------

struct TextCase {
  const char* name;
  std::string text;
};

std::string printable(const TextCase& c) { return c.name; }
// GoogleTest (and so ctest) names the case by this, not by its bytes.
void PrintTo(const TextCase& c, std::ostream* os) { *os << c.name; }

std::vector<TextCase> validTexts() {
  return {
      {"empty_object", "{}"},
      {"empty_array", "[]"},
      {"scalars_at_top_level", "\"s\""},
      {"number_at_top_level", "7"},
      {"literals", "[true,false,null]"},
      {"surrounding_whitespace", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n\t "},
      {"utf8_bom", "\xEF\xBB\xBF{\"a\":1}"},
      {"simple_escapes", R"(["\"\\\/\b\f\n\r\t"])"},
      {"unicode_escape", R"(["\u00e9\u20AC\u0000"])"},
      {"surrogate_pair", R"(["\ud83d\ude00"])"},
      {"utf8_two_three_four_bytes", "[\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"]"},
      {"utf8_edges", "[\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\"]"},
      {"del_is_not_a_control_for_json", "[\"\x7F\"]"},
      {"escaped_key", R"({"st\u0061tus":1})"},
      {"long_string_with_escapes_at_run_edges", "[\"abcdefg\\nhijklmnop\\\"qrstuvwx\\\\\"]"},
      {"max_unsigned", "18446744073709551615"},
      {"unsigned_overflow_is_double", "18446744073709551616"},
      {"min_signed", "-9223372036854775808"},
      {"signed_overflow_is_double", "-9223372036854775809"},
      {"minus_zero_integer", "-0"},
      {"minus_zero_double", "-0.0"},
      {"exponents", "[1e5,1E5,1e+5,1e-5,0e0,-0E-0]"},
      {"underflow_is_zero", "[1e-400,-1e-400]"},
      {"largest_double", "1.7976931348623157e308"},
      {"many_digits", "[0.1000000000000000055511151231257827021181583404541015625,123456789012345678901234567890]"},
      {"duplicate_keys_last_wins", R"({"a":1,"b":2,"a":{"c":3}})"},
      {"nested", R"({"a":[{"b":[[],{}]},null]})"},
      // fuzz_json_reader, crash-e1e586a4...: nlohmann's lexer reads a NUL byte
      // where a token starts as the end of input, so what follows is ignored.
      {"nul_after_the_value_ends_the_input", std::string("{\"a\":1} \0 x]", 12)},
  };
}

std::vector<TextCase> invalidTexts() {
  return {
      {"empty", ""},
      {"only_whitespace", " \n"},
      {"only_bom", "\xEF\xBB\xBF"},
      {"partial_bom", "\xEF\xBB{}"},
      {"bom_after_whitespace", " \xEF\xBB\xBF{}"},
      {"trailing_comma_array", "[1,]"},
      {"trailing_comma_object", R"({"a":1,})"},
      {"leading_comma", "[,1]"},
      {"missing_comma", "[1 2]"},
      {"missing_colon", R"({"a" 1})"},
      {"unquoted_key", "{a:1}"},
      {"single_quotes", "['a']"},
      {"comment", "[1]//c"},
      {"block_comment", "/*c*/[1]"},
      {"trailing_garbage", "{} x"},
      {"two_values", "1 2"},
      {"unclosed_array", "[1"},
      {"unclosed_object", R"({"a":1)"},
      {"unclosed_string", R"(["abc)"},
      {"mismatched_brackets", "[}"},
      {"raw_newline_in_string", "[\"a\nb\"]"},
      {"raw_tab_in_string", "[\"a\tb\"]"},
      {"raw_nul_in_string", std::string("[\"a\0b\"]", 6)},
      {"unknown_escape", R"(["\x41"])"},
      {"short_unicode_escape", R"(["\u12"])"},
      {"bad_hex_digit", R"(["\u12G4"])"},
      {"lone_high_surrogate", R"(["\ud800"])"},
      {"high_surrogate_then_text", R"(["\ud800abcdef"])"},
      {"high_surrogate_then_high", R"(["\ud800\ud800"])"},
      {"lone_low_surrogate", R"(["\udc00"])"},
      {"overlong_two_bytes", "[\"\xC0\x80\"]"},
      {"overlong_three_bytes", "[\"\xE0\x80\x80\"]"},
      {"overlong_four_bytes", "[\"\xF0\x80\x80\x80\"]"},
      {"encoded_surrogate", "[\"\xED\xA0\x80\"]"},
      {"beyond_u10ffff", "[\"\xF4\x90\x80\x80\"]"},
      {"lead_byte_f5", "[\"\xF5\x80\x80\x80\"]"},
      {"stray_continuation", "[\"\x80\"]"},
      {"truncated_sequence", "[\"\xE2\x82\"]"},
      {"invalid_utf8_in_key", "{\"\xFF\":1}"},
      {"non_ascii_outside_strings", "[\xC3\xA9]"},
      {"leading_zero", "01"},
      {"leading_plus", "+1"},
      {"bare_minus", "-"},
      {"dot_without_digits", "1."},
      {"leading_dot", ".5"},
      {"exponent_without_digits", "1e"},
      {"exponent_sign_only", "1e+"},
      {"hex_number", "0x10"},
      {"nan", "NaN"},
      {"infinity", "Infinity"},
      {"overflowing_double", "1e400"},
      {"overflowing_negative_double", "-1e400"},
      {"overflowing_integer_digits", "1" + std::string(400, '0')},
      {"truncated_literal", "tru"},
      {"capitalised_literal", "True"},
      {"literal_with_suffix", "nullx"},
      {"nul_instead_of_a_value", std::string("[1,\0]", 5)},
      {"only_nul", std::string("\0", 1)},
      {"nul_inside_a_literal", std::string("tr\0e", 4)},
  };
}

class ValidJson : public ::testing::TestWithParam<TextCase> {};

TEST_P(ValidJson, IsAcceptedWithTheTreeNlohmannBuilds) {
  const TextCase& c = GetParam();
  const json expected = json::parse(c.text);  // the table itself must be right
  const Read r = read(c.text);
  ASSERT_TRUE(r.ok) << r.error.message;
  EXPECT_TRUE(fuzz::sameJson(r.value, expected)) << r.value.dump() << " vs " << expected.dump();
}

INSTANTIATE_TEST_SUITE_P(JsonReader, ValidJson, ::testing::ValuesIn(validTexts()),
                         [](const auto& info) { return printable(info.param); });

class InvalidJson : public ::testing::TestWithParam<TextCase> {};

TEST_P(InvalidJson, IsRejectedLikeNlohmannRejectsIt) {
  const TextCase& c = GetParam();
  ASSERT_TRUE(json::parse(c.text, nullptr, false).is_discarded());  // the table itself must be right
  const Read r = read(c.text);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.tooDeep);
  EXPECT_THAT(r.error.message, StartsWith("parse error at byte "));
  EXPECT_LE(r.error.byte, c.text.size());
}

INSTANTIATE_TEST_SUITE_P(JsonReader, InvalidJson, ::testing::ValuesIn(invalidTexts()),
                         [](const auto& info) { return printable(info.param); });

// ---------------------------------------------------------------------------
// Numbers are typed as nlohmann types them.
// ---------------------------------------------------------------------------

TEST(JsonReader, IntegersThatFitAreUnsignedOrSigned) {
  const Read r = read("[0,18446744073709551615,-1,-9223372036854775808,-0]");
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.value[0].is_number_unsigned());
  EXPECT_EQ(r.value[1].get<std::uint64_t>(), 18446744073709551615ULL);
  EXPECT_TRUE(r.value[2].is_number_integer() && !r.value[2].is_number_unsigned());
  EXPECT_EQ(r.value[3].get<std::int64_t>(), INT64_MIN);
  EXPECT_TRUE(r.value[4].is_number_integer() && !r.value[4].is_number_unsigned());
  EXPECT_EQ(r.value[4].get<std::int64_t>(), 0);
}

TEST(JsonReader, IntegersThatDoNotFitBecomeDoubles) {
  const Read r = read("[18446744073709551616,-9223372036854775809]");
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.value[0].is_number_float());
  EXPECT_EQ(r.value[0].get<double>(), 18446744073709551616.0);
  EXPECT_EQ(r.value[1].get<double>(), -9223372036854775809.0);
}

TEST(JsonReader, FractionsAndExponentsAreDoublesAndKeepTheirSign) {
  const Read r = read("[-0.0,1e2,2.5E-1,1e-400]");
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.value[0].is_number_float());
  EXPECT_TRUE(std::signbit(r.value[0].get<double>()));
  EXPECT_EQ(r.value[1].get<double>(), 100.0);
  EXPECT_EQ(r.value[2].get<double>(), 0.25);
  EXPECT_EQ(r.value[3].get<double>(), 0.0);  // underflow rounds to zero, as strtod does
}

TEST(JsonReader, ADoubleThatOverflowsIsAnErrorNamingTheNumber) {
  const Read r = read("[1, 1e400]");
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error.byte, 4u);
  EXPECT_THAT(r.error.message, HasSubstr("number overflow parsing '1e400'"));
}

// ---------------------------------------------------------------------------
// Strings, keys and errors.
// ---------------------------------------------------------------------------

TEST(JsonReader, EscapesDecodeToUtf8) {
  const Read r = read(R"(["a\"b\\c\/d\n\u00e9\ud83d\ude00"])");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.value[0].get<std::string>(), "a\"b\\c/d\n\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(JsonReader, EscapedNulIsKeptInsideTheString) {
  const Read r = read(R"(["a\u0000b"])");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.value[0].get<std::string>(), std::string("a\0b", 3));
}

TEST(JsonReader, ADuplicateKeyKeepsTheLastValue) {
  const Read r = read(R"({"a":1,"a":[2]})");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.value, json::parse(R"({"a":[2]})"));
}

TEST(JsonReader, ErrorsNameTheByteLineAndColumn) {
  const Read r = read("{\n  \"a\": [1,\n  ]\n}");
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error.byte, 15u);
  EXPECT_EQ(r.error.message, "parse error at byte 15 (line 3, column 3): unexpected ']'; expected a value");
}

TEST(JsonReader, InvalidUtf8IsReportedAtTheOffendingByte) {
  const Read r = read("[\"ok\xFF\"]");
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error.byte, 4u);
  EXPECT_THAT(r.error.message, HasSubstr("ill-formed UTF-8 byte 0xFF"));
}

TEST(JsonReader, AControlCharacterInAStringIsNamed) {
  const Read r = read("[\"a\x01\"]");
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error.message, HasSubstr("control character 0x01 must be escaped"));
}

// ---------------------------------------------------------------------------
// Nesting limit.
// ---------------------------------------------------------------------------

TEST(JsonReader, NestingUpToTheLimitIsRead) {
  const std::string text = std::string(5, '[') + std::string(5, ']');
  EXPECT_TRUE(read(text, {5, nullptr, kKeepAll}).ok);
}

TEST(JsonReader, NestingBeyondTheLimitStopsAtTheFirstBracketTooMany) {
  const std::string text = std::string(6, '[') + std::string(6, ']');
  const Read r = read(text, {5, nullptr, kKeepAll});
  ASSERT_FALSE(r.ok);
  EXPECT_TRUE(r.error.tooDeep);
  EXPECT_EQ(r.error.byte, 5u);
  EXPECT_EQ(r.error.message, "JSON nesting deeper than 5 levels");
}

TEST(JsonReader, HostileNestingIsRefusedWithoutExhaustingTheStack) {
  const Read r = read(std::string(1'000'000, '['));
  ASSERT_FALSE(r.ok);
  EXPECT_TRUE(r.error.tooDeep);
}

// ---------------------------------------------------------------------------
// Value limit: a body's bytes bound its tree only through the number of
// values (a million empty strings in 3 MB took a 202 MiB tree).
// ---------------------------------------------------------------------------

TEST(JsonReader, ValuesUpToTheLimitAreRead) {
  JsonReadOptions options;
  options.maxValues = 4;  // the array and its three strings
  EXPECT_TRUE(read(R"(["","",""])", options).ok);
}

TEST(JsonReader, OneValueBeyondTheLimitStopsTheReadThere) {
  JsonReadOptions options;
  options.maxValues = 4;
  const Read r = read(R"(["","","",""])", options);
  ASSERT_FALSE(r.ok);
  EXPECT_TRUE(r.error.tooMany);
  EXPECT_FALSE(r.error.tooDeep);
  EXPECT_EQ(r.error.byte, 10u);  // the fourth string
  EXPECT_EQ(r.error.message, "more than 4 JSON values to keep (the webhook's memory bound)");
}

// ---------------------------------------------------------------------------
// Pruning.
// ---------------------------------------------------------------------------

constexpr JsonContext kTop = 1;
constexpr JsonContext kSpec = 2;

// Drops "status" at the top level and "secret" directly inside "spec".
JsonContext dropStatusAndSpecSecret(JsonContext parent, std::string_view key) {
  if (parent == kTop) {
    if (key == "status") return kDropMember;
    return key == "spec" ? kSpec : kKeepAll;
  }
  return key == "secret" ? kDropMember : kKeepAll;
}

const JsonReadOptions kPruning{200, dropStatusAndSpecSecret, kTop};

TEST(JsonReader, PruningDropsOnlyTheChosenMembers) {
  const Read r = read(R"({"status":{"big":[1,2,3]},"spec":{"secret":"s","x":{"secret":1},"y":[{"secret":2}]},"a":{"status":3}})",
                      kPruning);
  ASSERT_TRUE(r.ok) << r.error.message;
  EXPECT_EQ(r.value, json::parse(R"({"spec":{"x":{"secret":1},"y":[{"secret":2}]},"a":{"status":3}})"));
}

TEST(JsonReader, PruningMatchesKeysAfterDecodingEscapes) {
  const Read r = read(R"({"st\u0061tus":1,"spec":{}})", kPruning);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.value, json::parse(R"({"spec":{}})"));
}

TEST(JsonReader, ADroppedValueIsStillValidated) {
  for (const char* text : {R"({"status":[1,]})", R"({"status":"\ud800"})", "{\"status\":\"\xC0\x80\"}",
                           R"({"status":1e400})", R"({"status":{"a" 1}})", R"({"status":tru})"}) {
    const Read r = read(text, kPruning);
    EXPECT_FALSE(r.ok) << text;
    EXPECT_THAT(r.error.message, StartsWith("parse error at byte ")) << text;
  }
}

TEST(JsonReader, ADroppedValueCountsTowardsTheNestingLimit) {
  const std::string text = R"({"status":)" + std::string(3, '[') + std::string(3, ']') + "}";
  EXPECT_TRUE(read(text, {4, dropStatusAndSpecSecret, kTop}).ok);
  const Read r = read(text, {3, dropStatusAndSpecSecret, kTop});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.error.tooDeep);
}

TEST(JsonReader, DroppedValuesDoNotCountTowardsTheValueLimit) {
  JsonReadOptions options = kPruning;
  options.maxValues = 2;  // the object and "spec"'s empty object
  EXPECT_TRUE(read(R"({"status":[1,2,3,4,5,6,7,8],"spec":{}})", options).ok);
  options.maxValues = 1;
  EXPECT_TRUE(read(R"({"status":[1,2,3,4,5,6,7,8],"spec":{}})", options).error.tooMany);
}

// The scan of plain string bytes goes 16, then 8, then 1 byte at a time:
// a quote, an escape, a control character or a UTF-8 sequence at any offset
// of any length of string is found where nlohmann finds it.
TEST(JsonReader, EveryOffsetOfAStringIsScannedAlike) {
  for (std::size_t length = 0; length <= 40; ++length) {
    for (std::size_t at = 0; at <= length; ++at) {
      const std::string plain(length, 'a');
      for (const std::string& inserted : {std::string("\\n"), std::string("\xC3\xA9"), std::string("\x01"),
                                          std::string("\xFF"), std::string("\"")}) {
        const std::string text = "[\"" + plain.substr(0, at) + inserted + plain.substr(at) + "\"]";
        const Read r = read(text);
        const bool nlohmannAccepts = json::accept(text);
        ASSERT_EQ(r.ok, nlohmannAccepts) << text;
        if (r.ok) {
          EXPECT_EQ(r.value, json::parse(text)) << text;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Reading into a tree that holds an earlier document (the webhook reads each
// review into the tree of the previous one, to reuse its allocations): the
// result is the tree an empty one would get, whatever the tree held.
// ---------------------------------------------------------------------------

std::vector<std::string> documentsOfManyShapes() {
  std::vector<std::string> texts;
  for (const TextCase& c : validTexts()) texts.push_back(c.text);
  for (const char* text : {
           R"({"metadata":{"name":"a","labels":{"x":"1","y":"2"}},"spec":{"containers":[{"name":"c","args":["a","b"]}]}})",
           R"({"metadata":{"name":"bb","labels":{"y":"22","z":"3"}},"spec":{"containers":[]}})",
           R"({"metadata":{"labels":{"x":{"deeper":[1,2,3]}}},"spec":{"containers":[{"name":"c"},{"name":"d","args":[]}]}})",
           R"({"metadata":[],"spec":"a string where an object was"})",
           R"({"a long key that does not fit a short string buffer":"and a value longer than that too, well over fifteen"})",
           R"([{"a":1},{"b":[2,{"c":3}]},"x",4.5,-6,18446744073709551615,null,true])",
           R"([[],[[]],{},{"":{}}])",
           R"({"d":1,"d":{"e":2},"d":[3]})",
       }) {
    texts.emplace_back(text);
  }
  return texts;
}

TEST(JsonReaderReuse, AnyDocumentReadIntoAnyOtherGivesTheTreeReadIntoNothing) {
  const std::vector<std::string> texts = documentsOfManyShapes();
  for (const std::string& before : texts) {
    for (const std::string& after : texts) {
      json tree;
      JsonReadError error;
      ASSERT_TRUE(readJson(before, tree, error)) << before;
      ASSERT_TRUE(readJson(after, tree, error)) << after;
      EXPECT_TRUE(fuzz::sameJson(tree, json::parse(after))) << before << " then " << after << ": " << tree.dump();
    }
  }
}

TEST(JsonReaderReuse, MembersTheNewDocumentLacksAreGoneAndItsOwnAreAdded) {
  json tree;
  JsonReadError error;
  ASSERT_TRUE(readJson(R"({"labels":{"app":"a","tier":"web"},"old":[1,2,3]})", tree, error));
  ASSERT_TRUE(readJson(R"({"labels":{"app":"b","team":"ml"},"new":{}})", tree, error));
  EXPECT_EQ(tree, json::parse(R"({"labels":{"app":"b","team":"ml"},"new":{}})"));
}

// Two reads of one name are as many reads as the tree has members: the
// member never named must still go.
TEST(JsonReaderReuse, ADuplicateKeyDoesNotKeepAMemberTheNewDocumentLacks) {
  json tree;
  JsonReadError error;
  ASSERT_TRUE(readJson(R"({"a":1,"b":{"c":2}})", tree, error));
  ASSERT_TRUE(readJson(R"({"a":3,"a":4})", tree, error));
  EXPECT_EQ(tree, json::parse(R"({"a":4})"));
  ASSERT_TRUE(readJson(R"({"b":1,"a":2,"b":{"x":[]}})", tree, error));
  EXPECT_EQ(tree, json::parse(R"({"a":2,"b":{"x":[]}})"));
}

TEST(JsonReaderReuse, ArraysShrinkAndGrowToTheNewDocument) {
  json tree;
  JsonReadError error;
  ASSERT_TRUE(readJson("[1,2,3,4]", tree, error));
  ASSERT_TRUE(readJson("[5]", tree, error));
  EXPECT_EQ(tree, json::parse("[5]"));
  ASSERT_TRUE(readJson("[6,[7],{}]", tree, error));
  EXPECT_EQ(tree, json::parse("[6,[7],{}]"));
  ASSERT_TRUE(readJson("[]", tree, error));
  EXPECT_EQ(tree, json::array());
}

TEST(JsonReaderReuse, AMemberTheFilterDropsIsNotKeptFromTheEarlierTree) {
  json tree;
  JsonReadError error;
  ASSERT_TRUE(readJson(R"({"status":{"big":[1]},"spec":{"secret":"s","x":1}})", tree, error));
  ASSERT_TRUE(readJson(R"({"status":{"big":[1]},"spec":{"secret":"s","x":2}})", tree, error, kPruning));
  EXPECT_EQ(tree, json::parse(R"({"spec":{"x":2}})"));
}

TEST(JsonReaderReuse, AReadThatFailsHalfWayLeavesATreeTheNextReadStillReplacesWhole) {
  json tree;
  JsonReadError error;
  ASSERT_TRUE(readJson(R"({"a":{"b":[1,2]},"c":"d"})", tree, error));
  EXPECT_FALSE(readJson(R"({"a":{"e":[3,)", tree, error));
  ASSERT_TRUE(readJson(R"({"f":true})", tree, error));
  EXPECT_EQ(tree, json::parse(R"({"f":true})"));
}

// ---------------------------------------------------------------------------
// Freeing a tree.
// ---------------------------------------------------------------------------

TEST(JsonRelease, AReadTreeIsFreedAndLeftEmpty) {
  Read r = read(R"({"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","args":["x",1,null,[[]]]}]}})");
  ASSERT_TRUE(r.ok);
  releaseJson(r.value);
  EXPECT_EQ(r.value, json::object());
}

TEST(JsonRelease, ATreeDeeperThanItsRecursionIsFreedToo) {
  json root = json::array();
  json* innermost = &root;
  for (int depth = 0; depth < 100'000; ++depth) innermost = &innermost->emplace_back(json::array());
  releaseJson(root);  // kReleaseDepth levels by recursion, the rest by nlohmann's destructor
  EXPECT_EQ(root, json::array());
}

TEST(JsonRelease, AScalarIsLeftAsItIs) {
  json value = "text";
  releaseJson(value);
  EXPECT_EQ(value, "text");
}

}  // namespace
}  // namespace gpuguard::webhook
