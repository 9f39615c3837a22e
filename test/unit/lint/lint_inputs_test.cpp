// Which files gpuguard-lint reads: path globs (include/exclude in
// .gpuguard.yaml) and the directory walk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lint/inputs.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

using lint::expandInputs;
using lint::globMatch;

TEST(LintGlob, StarAndQuestionMarkStayWithinASegment) {
  EXPECT_TRUE(globMatch("deploy/*.yaml", "deploy/pod.yaml"));
  EXPECT_FALSE(globMatch("deploy/*.yaml", "deploy/sub/pod.yaml"));
  EXPECT_TRUE(globMatch("deploy/po?.yaml", "deploy/pod.yaml"));
  EXPECT_FALSE(globMatch("deploy?pod.yaml", "deploy/pod.yaml"));
}

TEST(LintGlob, DoubleStarCrossesSegments) {
  EXPECT_TRUE(globMatch("charts/**", "charts/llm/templates/pod.yaml"));
  EXPECT_TRUE(globMatch("charts/**", "charts/x.yaml"));
  EXPECT_TRUE(globMatch("**/templates/*.yaml", "charts/llm/templates/pod.yaml"));
  EXPECT_TRUE(globMatch("**/templates/*.yaml", "templates/pod.yaml"));
  EXPECT_FALSE(globMatch("**/templates/*.yaml", "charts/mytemplates/pod.yaml"));
  EXPECT_TRUE(globMatch("charts/**/values.yaml", "charts/values.yaml"));
  EXPECT_TRUE(globMatch("charts/**/values.yaml", "charts/a/b/values.yaml"));
  EXPECT_TRUE(globMatch("deploy/**.json", "deploy/a/b.json"));
  EXPECT_FALSE(globMatch("charts/**", "other/charts/x.yaml"));
}

TEST(LintGlob, APatternWithoutASlashMatchesTheFileNameAnywhere) {
  EXPECT_TRUE(globMatch("*.json", "a/b/c.json"));
  EXPECT_TRUE(globMatch("kustomization.yaml", "overlays/prod/kustomization.yaml"));
  EXPECT_FALSE(globMatch("*.json", "a/b/c.yaml"));
}

TEST(LintGlob, LeadingDotSlashIsIgnored) {
  EXPECT_TRUE(globMatch("./deploy/*.yaml", "deploy/a.yaml"));
  EXPECT_TRUE(globMatch("deploy/*.yaml", "./deploy/a.yaml"));
}

TEST(LintInputs, DirectoriesAreWalkedInSortedOrderSkippingHiddenOnes) {
  TempDir dir;
  for (const char* f : {"b.yaml", "a.yml", "c.json", "d.txt", ".git/x.yaml", "sub/z.yaml", ".hidden.yaml"}) {
    dir.write(f, "x: 1\n");
  }
  const lint::ExpandedInputs in = expandInputs({dir.str(), (dir.path() / "missing").string()}, {}, {});
  std::vector<std::string> names;
  for (const std::string& f : in.files) names.push_back(f.substr(dir.str().size() + 1));
  EXPECT_EQ(names, (std::vector<std::string>{".hidden.yaml", "a.yml", "b.yaml", "c.json", "sub/z.yaml"}));
  ASSERT_EQ(in.problems.size(), 1u);
}

TEST(LintInputs, GlobsAreAlsoMatchedRelativeToTheConfigDirectory) {
  TempDir dir;
  dir.write("deploy/charts/a.yaml", "x: 1\n");
  dir.write("deploy/b.yaml", "x: 1\n");
  const std::string deploy = (dir.path() / "deploy").string();
  lint::ExpandedInputs in = expandInputs({deploy}, {}, {"deploy/charts/**"}, dir.str());
  ASSERT_EQ(in.files.size(), 1u);
  EXPECT_TRUE(in.files[0].ends_with("deploy/b.yaml"));
  in = expandInputs({deploy}, {}, {"deploy/charts/**"});  // no config: the pattern is relative to the walk
  EXPECT_EQ(in.files.size(), 2u);
}

TEST(LintInputs, AFileNamedTwiceIsLintedOnce) {
  TempDir dir;
  const std::string a = dir.write("a.yaml", "x: 1\n").string();
  const lint::ExpandedInputs in = expandInputs({a, dir.str(), dir.str() + "/./a.yaml"}, {}, {});
  EXPECT_EQ(in.files, std::vector<std::string>{a});
}

TEST(LintInputs, StdinIsNeverFiltered) {
  const lint::ExpandedInputs in = expandInputs({"-"}, {"nothing/**"}, {"*"});
  EXPECT_EQ(in.files, std::vector<std::string>{"-"});
}

}  // namespace
}  // namespace gpuguard::lint_test
