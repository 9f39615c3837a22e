// LabelFields: one walk of the whole object lists where it writes labels,
// node selection and tolerations (rules/label_fields.h), for the checks that
// used to walk the object each on their own (label-value-not-string,
// gpu-label-value, node-affinity-gt-lt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules/label_fields.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using Kind = LabelField::Kind;

std::vector<std::string> pathsOf(const LabelFields& fields) {
  std::vector<std::string> out;
  for (const LabelField& f : fields.all()) out.push_back(f.path.apiPath());
  return out;
}

const LabelField& at(const LabelFields& fields, const std::string& apiPath) {
  for (const LabelField& f : fields.all()) {
    if (f.path.apiPath() == apiPath) return f;
  }
  throw std::runtime_error("not listed: " + apiPath);
}

TEST(LabelFieldsTest, ListsEachKindOfFieldWithItsPathAndValue) {
  const json pod = json::parse(R"({
    "metadata": {"labels": {"app": "x"}},
    "spec": {
      "nodeSelector": {"nvidia.com/gpu.present": "true"},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
      "affinity": {"nodeAffinity": {}, "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}, "matchExpressions": []}}]}}
    }})");
  const LabelFields fields(pod);
  EXPECT_THAT(pathsOf(fields),
              ElementsAre("metadata", "spec.affinity.nodeAffinity",
                          "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
                          "matchExpressions",
                          "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
                          "matchLabels",
                          "spec.nodeSelector", "spec.tolerations"));
  EXPECT_EQ(at(fields, "metadata").kind, Kind::Metadata);
  EXPECT_EQ(at(fields, "spec.affinity.nodeAffinity").kind, Kind::NodeAffinity);
  EXPECT_EQ(at(fields, "spec.nodeSelector").kind, Kind::NodeSelector);
  EXPECT_EQ(at(fields, "spec.tolerations").kind, Kind::Tolerations);
  EXPECT_EQ(*at(fields, "spec.nodeSelector").value, pod["spec"]["nodeSelector"]);
  EXPECT_EQ(at(fields, "spec.tolerations").value, &pod["spec"]["tolerations"]);
}

TEST(LabelFieldsTest, ListsAFieldBeforeWhatItsValueHoldsAndNamesTheFieldAroundEach) {
  const json pv = json::parse(R"({"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["4"]}]}]}}}})");
  const LabelFields fields(pv);
  ASSERT_THAT(pathsOf(fields), ElementsAre("spec.nodeAffinity", "spec.nodeAffinity.required.nodeSelectorTerms[0]."
                                                                "matchExpressions"));
  EXPECT_EQ(fields.all()[0].enclosing, LabelField::kNone);
  EXPECT_EQ(fields.all()[1].enclosing, 0u);
  const auto isNodeAffinity = [](const LabelField& f) { return f.kind == Kind::NodeAffinity; };
  EXPECT_TRUE(fields.insideAny(fields.all()[1], isNodeAffinity));
  EXPECT_FALSE(fields.insideAny(fields.all()[0], isNodeAffinity));
}

TEST(LabelFieldsTest, InsideAnyLooksAtEveryFieldAroundNotOnlyTheNearest) {
  // Odd, but custom resources may hold anything: a nodeAffinity inside the
  // tolerations, a nodeSelector inside that.
  const json odd = json::parse(R"({"spec": {"tolerations": [{"nodeAffinity": {"x": {"nodeSelector": {"a": 1}}}}]}})");
  const LabelFields fields(odd);
  ASSERT_THAT(pathsOf(fields), ElementsAre("spec.tolerations", "spec.tolerations[0].nodeAffinity",
                                           "spec.tolerations[0].nodeAffinity.x.nodeSelector"));
  const LabelField& selector = fields.all()[2];
  EXPECT_EQ(selector.enclosing, 1u);
  EXPECT_TRUE(fields.insideAny(selector, [](const LabelField& f) { return f.kind == Kind::Tolerations; }));
  EXPECT_FALSE(fields.insideAny(selector, [](const LabelField& f) { return f.kind == Kind::MatchLabels; }));
}

TEST(LabelFieldsTest, ListsMetadataWithoutGoingBelowItAndSkipsStatus) {
  const json object = json::parse(R"({
    "metadata": {"annotations": {"nodeSelector": {"a": "b"}}},
    "status": {"nodeSelector": {"a": "b"}},
    "spec": {"template": {"metadata": {"labels": {"tolerations": "x"}}}}})");
  EXPECT_THAT(pathsOf(LabelFields(object)), ElementsAre("metadata", "spec.template.metadata"));
}

TEST(LabelFieldsTest, ListsFieldsOfAnyTypeAndInsideArraysOfCustomResources) {
  const json custom = json::parse(R"({"spec": {"workers": [{"nodeSelector": ["not", "a", "map"]},
                                                            {"tolerations": "none"}]}})");
  const LabelFields fields(custom);
  ASSERT_THAT(pathsOf(fields), ElementsAre("spec.workers[0].nodeSelector", "spec.workers[1].tolerations"));
  EXPECT_TRUE(fields.all()[0].value->is_array());
  EXPECT_TRUE(fields.all()[1].value->is_string());
}

TEST(LabelFieldsTest, StopsBelowItsDepthLimit) {
  // A nodeSelector as a member of the object at depth d is listed while d is
  // at most kMaxDepth (the root is depth 0).
  const auto nested = [](int depth) {
    json inner = {{"nodeSelector", {{"a", "b"}}}};
    for (int i = 0; i < depth; ++i) inner = {{"x", inner}};
    return inner;
  };
  EXPECT_EQ(LabelFields(nested(LabelFields::kMaxDepth)).all().size(), 1u);
  EXPECT_TRUE(LabelFields(nested(LabelFields::kMaxDepth + 1)).all().empty());
}

TEST(LabelFieldsTest, AScalarOrEmptyObjectListsNothing) {
  EXPECT_TRUE(LabelFields(json(3)).all().empty());
  EXPECT_TRUE(LabelFields(json::object()).all().empty());
}

TEST(LabelFieldsMemoTest, WalksOnceAndHandsOutTheSameList) {
  const json object = json::parse(R"({"spec": {"nodeSelector": {}}})");
  LabelFieldsMemo memo;
  const LabelFields& first = memo.of(object);
  EXPECT_EQ(&memo.of(object), &first);
  EXPECT_EQ(first.all().size(), 1u);
}

}  // namespace
}  // namespace gpuguard
