// FieldPath: where a finding points, in the API server's notation and as an
// RFC 6901 JSON pointer. Findings carry both strings, so they are pinned here
// for every kind of segment and every character that needs escaping.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "rules/k8s/field_path.h"

namespace gpuguard {
namespace {

TEST(FieldPath, TheRootIsEmptyAndPrintsAsNothing) {
  const FieldPath root;
  EXPECT_TRUE(root.empty());
  EXPECT_EQ(root.apiPath(), "");
  EXPECT_EQ(root.jsonPointer(), "");
}

TEST(FieldPath, FieldsAreJoinedByDotsAndSlashes) {
  const FieldPath p = FieldPath{}.field("spec").field("template").field("spec");
  EXPECT_FALSE(p.empty());
  EXPECT_EQ(p.apiPath(), "spec.template.spec");
  EXPECT_EQ(p.jsonPointer(), "/spec/template/spec");
}

TEST(FieldPath, IndexesAreBracketedInTheApiPathAndPlainInThePointer) {
  const FieldPath p = FieldPath{}.field("spec").field("containers").index(0).field("env").index(12);
  EXPECT_EQ(p.apiPath(), "spec.containers[0].env[12]");
  EXPECT_EQ(p.jsonPointer(), "/spec/containers/0/env/12");
}

TEST(FieldPath, MapKeysAreBracketedUnquotedAndEscapedOnlyInThePointer) {
  const FieldPath p = FieldPath{}.field("resources").field("limits").key("nvidia.com/gpu");
  EXPECT_EQ(p.apiPath(), "resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(p.jsonPointer(), "/resources/limits/nvidia.com~1gpu");
}

TEST(FieldPath, TildesAndSlashesAreEscapedInEveryNamedSegment) {
  const FieldPath p = FieldPath{}.field("a~b/c").key("~/~1");
  EXPECT_EQ(p.apiPath(), "a~b/c[~/~1]");
  EXPECT_EQ(p.jsonPointer(), "/a~0b~1c/~0~1~01");
}

TEST(FieldPath, AFieldAfterAKeyOrIndexGetsADot) {
  const FieldPath p = FieldPath{}.field("metadata").field("labels").key("app").field("x").index(3).field("y");
  EXPECT_EQ(p.apiPath(), "metadata.labels[app].x[3].y");
  EXPECT_EQ(p.jsonPointer(), "/metadata/labels/app/x/3/y");
}

TEST(FieldPath, APathMayStartWithAnIndexOrAKey) {
  EXPECT_EQ(FieldPath{}.index(2).field("kind").apiPath(), "[2].kind");
  EXPECT_EQ(FieldPath{}.index(2).field("kind").jsonPointer(), "/2/kind");
  EXPECT_EQ(FieldPath{}.key("k").apiPath(), "[k]");
  EXPECT_EQ(FieldPath{}.key("k").jsonPointer(), "/k");
}

TEST(FieldPath, EmptyNamesAreKeptAsEmptySegments) {
  const FieldPath p = FieldPath{}.field("data").key("");
  EXPECT_EQ(p.apiPath(), "data[]");
  EXPECT_EQ(p.jsonPointer(), "/data/");
}

TEST(FieldPath, LongNamesAndLargeIndexesPrintWhole) {
  const std::string longName(300, 'n');
  const FieldPath p = FieldPath{}.field(longName).index(18446744073709551615ULL);
  EXPECT_EQ(p.apiPath(), longName + "[18446744073709551615]");
  EXPECT_EQ(p.jsonPointer(), "/" + longName + "/18446744073709551615");
}

TEST(FieldPath, ExtendingLeavesTheParentAsItWas) {
  const FieldPath parent = FieldPath{}.field("spec");
  const FieldPath a = parent.field("a");
  const FieldPath b = parent.index(1);
  EXPECT_EQ(parent.apiPath(), "spec");
  EXPECT_EQ(a.apiPath(), "spec.a");
  EXPECT_EQ(b.apiPath(), "spec[1]");
}

TEST(FieldPath, ACopyOutlivesTheOriginalAndTheTemporariesItWasBuiltFrom) {
  FieldPath kept;
  {
    std::string name = "containers";
    const FieldPath original = FieldPath{}.field("spec").field(name);
    kept = original.index(0);
    name = "overwritten";
  }
  EXPECT_EQ(kept.apiPath(), "spec.containers[0]");
}

TEST(FieldPath, AssignmentAndMoveKeepTheValue) {
  FieldPath a = FieldPath{}.field("a");
  FieldPath b = FieldPath{}.field("b");
  a = b;
  EXPECT_EQ(a.apiPath(), "b");
  const FieldPath& alias = a;
  a = alias;  // self-assignment
  EXPECT_EQ(a.apiPath(), "b");
  FieldPath moved = std::move(b);
  EXPECT_EQ(moved.jsonPointer(), "/b");
  b = std::move(moved);
  EXPECT_EQ(b.jsonPointer(), "/b");
}

TEST(FieldPath, AVectorOfPathsSurvivesReallocation) {
  std::vector<FieldPath> paths;
  const FieldPath list = FieldPath{}.field("items");
  for (std::size_t i = 0; i < 100; ++i) paths.push_back(list.index(i));
  EXPECT_EQ(paths[0].apiPath(), "items[0]");
  EXPECT_EQ(paths[99].jsonPointer(), "/items/99");
}

TEST(FieldPath, AVeryDeepPathIsBuiltPrintedAndFreedWithoutRecursion) {
  FieldPath p;
  for (int i = 0; i < 200000; ++i) p = p.index(0);
  EXPECT_EQ(p.jsonPointer().size(), 400000u);
}

TEST(PathTrail, TheRootBecomesTheEmptyPath) {
  const PathTrail root;
  EXPECT_TRUE(root.toFieldPath().empty());
  EXPECT_EQ(root.toFieldPath().jsonPointer(), "");
}

TEST(PathTrail, BecomesTheFieldPathOfTheSameSteps) {
  const PathTrail root;
  const PathTrail spec = root.field("spec");
  const PathTrail containers = spec.field("containers");
  const PathTrail first = containers.index(0);
  const PathTrail resources = first.field("resources");
  const PathTrail limits = resources.field("limits");
  const FieldPath viaTrail = limits.key("nvidia.com/gpu").toFieldPath();
  const FieldPath direct =
      FieldPath{}.field("spec").field("containers").index(0).field("resources").field("limits").key("nvidia.com/gpu");
  EXPECT_EQ(viaTrail.apiPath(), direct.apiPath());
  EXPECT_EQ(viaTrail.jsonPointer(), direct.jsonPointer());
  EXPECT_EQ(viaTrail.apiPath(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
}

TEST(PathTrail, AFieldPathMadeFromItOutlivesTheTrail) {
  FieldPath kept;
  {
    const std::string key = "a~b/c";
    const PathTrail root;
    const PathTrail metadata = root.field("metadata");
    kept = metadata.field("labels").key(key).toFieldPath();  // temporaries live to the end of the statement
  }
  EXPECT_EQ(kept.apiPath(), "metadata.labels[a~b/c]");
  EXPECT_EQ(kept.jsonPointer(), "/metadata/labels/a~0b~1c");
}

// Trails of any depth (toFieldPath keeps the steps of short ones on the stack).
FieldPath trailOfIndexes(const PathTrail& trail, int more) {
  if (more == 0) return trail.toFieldPath();
  return trailOfIndexes(trail.index(static_cast<std::size_t>(more)), more - 1);
}

TEST(PathTrail, BecomesTheSameFieldPathAtEveryDepth) {
  for (const int depth : {1, 31, 32, 33, 100}) {
    FieldPath direct;
    for (int i = depth; i >= 1; --i) direct = direct.index(static_cast<std::size_t>(i));
    EXPECT_EQ(trailOfIndexes(PathTrail{}, depth).jsonPointer(), direct.jsonPointer()) << depth;
  }
}

TEST(EscapeJsonPointerToken, EscapesTildeBeforeSlashAndNothingElse) {
  EXPECT_EQ(escapeJsonPointerToken("nvidia.com/gpu"), "nvidia.com~1gpu");
  EXPECT_EQ(escapeJsonPointerToken("a~b"), "a~0b");
  EXPECT_EQ(escapeJsonPointerToken("~1"), "~01");
  EXPECT_EQ(escapeJsonPointerToken("plain-key_1.x"), "plain-key_1.x");
  EXPECT_EQ(escapeJsonPointerToken(""), "");
}

}  // namespace
}  // namespace gpuguard
