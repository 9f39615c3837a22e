// Duplicated keys and merge keys cost what they replace, not the whole map
// (red team 33 C3: a map whose keys were written twice, or a merge list of
// many aliases, retired each old value by scanning the map's every source
// entry: 1.1 MB of duplicate labels took 25 s). The reports stay what they
// were: each duplicate named, with the line of the value it replaces.
// Growth is checked by ratio (test/unit/cpu_growth.h): 8N against N.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "test/unit/cpu_growth.h"
#include "yaml/yaml_to_json.h"

namespace {

namespace y = gpuguard::yaml;
using nlohmann::json;

y::Document parseOne(const std::string& text) {
  y::ParseResult r = y::parseStream(text);
  EXPECT_FALSE(r.error) << (r.error ? r.error->message : "") << "\ninput:\n" << text;
  EXPECT_EQ(r.documents.size(), 1u) << text;
  return r.documents.empty() ? y::Document{} : std::move(r.documents.front());
}

// --- what is reported ---------------------------------------------------------

TEST(YamlDuplicateKeys, EachRepeatNamesTheLineOfTheValueItReplaces) {
  y::Document d = parseOne("k:\n  a: 1\nother: x\nk: 2\nk:\n  b: 3\n");
  EXPECT_EQ(d.value, json({{"k", {{"b", 3}}}, {"other", "x"}}));
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_EQ(d.warnings[0].message, "mapping key \"k\" already defined at line 1; kubectl keeps the last value");
  EXPECT_EQ(d.warnings[1].message, "mapping key \"k\" already defined at line 4; kubectl keeps the last value");
  EXPECT_EQ(d.sources.find("/k/a"), nullptr);  // the first value's child is gone
  ASSERT_NE(d.sources.find("/k/b"), nullptr);
  EXPECT_EQ(d.sources.find("/k/b")->position.line, 6);
  ASSERT_NE(d.sources.find("/other"), nullptr);  // a sibling written between the repeats stays
  EXPECT_EQ(d.sources.find("/other")->position.line, 3);
}

TEST(YamlDuplicateKeys, AKeyAMergeSetIsReplacedSilentlyThenReportedWhenRepeated) {
  y::Document d = parseOne("m: &m\n  a: 1\n  c: {d: 1}\nx:\n  <<: [*m, *m]\n  c: 2\n  a: 3\n  a: 4\n");
  EXPECT_EQ(d.value["x"], json({{"a", 4}, {"c", 2}}));
  ASSERT_EQ(d.warnings.size(), 1u);  // a merged key written again is no duplicate; written twice, it is
  EXPECT_EQ(d.warnings[0].message, "mapping key \"a\" already defined at line 7; kubectl keeps the last value");
  EXPECT_EQ(d.warnings[0].pointer, "/x/a");
  EXPECT_EQ(d.sources.find("/x/c/d"), nullptr);
  EXPECT_EQ(d.sources.find("/x/a")->position.line, 8);
  EXPECT_EQ(d.sources.find("/x/c")->position.line, 6);
}

// go-yaml v2: a merge sets every key of its source, over what was written
// before it; keys written after it replace it again.
TEST(YamlDuplicateKeys, AMergeReplacesTheKeysBeforeItAndTheirSources) {
  y::Document d = parseOne("m: &m {a: 1, b: {c: 2}}\nx:\n  a: 0\n  <<: *m\n  e: 5\n  b: 9\n");
  EXPECT_EQ(d.value["x"], json({{"a", 1}, {"b", 9}, {"e", 5}}));
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_EQ(d.sources.find("/x/a")->position.line, 1);
  EXPECT_EQ(d.sources.find("/x/b/c"), nullptr);
  EXPECT_EQ(d.sources.find("/x/e")->position.line, 5);
}

// --- growth -------------------------------------------------------------------

constexpr std::size_t kSmall = 2000;
using gpuguard::testing::kSuperLinearRatio;

// How much more parsing make(8N) costs than make(N); the texts are made untimed.
double growth(const std::function<std::string(std::size_t)>& make) {
  const std::string small = make(kSmall);
  const std::string large = make(8 * kSmall);
  const auto parse = [](const std::string& text) {
    const y::ParseResult r = y::parseStream(text);
    EXPECT_FALSE(r.error) << r.error->message;
  };
  return gpuguard::testing::growthOf([&] { parse(small); }, [&] { parse(large); });
}

std::string podWithLabels(const std::string& labels) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n" + labels + "spec:\n  containers: []\n";
}

TEST(YamlDuplicateKeyGrowth, LabelsWrittenTwiceEachAreLinear) {
  const double ratio = growth([](std::size_t n) {
    std::string labels;
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t i = 0; i < n / 2; ++i) labels += "    key-" + std::to_string(i) + ": v\n";
    return podWithLabels(labels);
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the duplicate pairs cost " << ratio << "x";
}

TEST(YamlDuplicateKeyGrowth, OneKeyWrittenManyTimesIsLinear) {
  const double ratio = growth([](std::size_t n) {
    std::string labels;
    for (std::size_t i = 0; i < n; ++i) labels += "    k: v" + std::to_string(i) + "\n";
    return podWithLabels(labels);
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the repeats cost " << ratio << "x";
}

TEST(YamlDuplicateKeyGrowth, AMergeListOfManyAliasesIsLinear) {
  const double ratio = growth([](std::size_t n) {
    std::string merge = "    <<: [*m";
    for (std::size_t i = 1; i < n; ++i) merge += ", *m";
    return "base: &m {a: b}\n" + podWithLabels(merge + "]\n");
  });
  EXPECT_LT(ratio, kSuperLinearRatio) << "8x the aliases cost " << ratio << "x";
}

}  // namespace
