// rules/fix: the JSON-level edits rules emit, as the RFC 6902 operations
// POST /mutate sends; applying them gives the object --fix aims at.
#include "rules/fix.h"

#include <gtest/gtest.h>

namespace gpuguard {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const FieldPath kSpec = FieldPath{}.field("spec");
const ordered_json kGpuToleration = {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};

JsonEdit addToleration(ordered_json toleration = kGpuToleration) {
  return JsonEdit::addToList(kSpec.field("tolerations"), std::move(toleration));
}

TEST(ToJsonPatch, AMissingListIsCreatedWithTheItem) {
  const json pod = json::parse(R"({"spec": {"containers": []}})");
  const json patch = toJsonPatch({addToleration()}, pod);
  EXPECT_EQ(patch, json::parse(R"([{"op": "add", "path": "/spec/tolerations",
      "value": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}])"));
}

TEST(ToJsonPatch, ItemsGoToTheHeadOfAnExistingListInTheOrderGiven) {
  const json pod = json::parse(R"({"spec": {"tolerations": [{"key": "other", "operator": "Exists"}]}})");
  ordered_json second = kGpuToleration;
  second["key"] = "example.com/gpu";
  const json patched = pod.patch(toJsonPatch({addToleration(), addToleration(second)}, pod));
  ASSERT_EQ(patched["spec"]["tolerations"].size(), 3u);
  EXPECT_EQ(patched["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(patched["spec"]["tolerations"][1]["key"], "example.com/gpu");
  EXPECT_EQ(patched["spec"]["tolerations"][2]["key"], "other");
}

TEST(ToJsonPatch, SeveralItemsForAMissingListMakeOneList) {
  const json pod = json::parse(R"({"spec": {}})");
  ordered_json second = kGpuToleration;
  second["effect"] = "NoExecute";
  const json patched = pod.patch(toJsonPatch({addToleration(), addToleration(second)}, pod));
  EXPECT_EQ(patched["spec"]["tolerations"].size(), 2u);
}

TEST(ToJsonPatch, SetMemberAddsToAMapOrCreatesIt) {
  const FieldPath resources = kSpec.field("containers").index(0).field("resources");
  const JsonEdit limit = JsonEdit::setMember(resources.field("limits"), "nvidia.com/gpu", 1);
  const json without = json::parse(R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}})");
  EXPECT_EQ(toJsonPatch({limit}, without),
            json::parse(R"([{"op": "add", "path": "/spec/containers/0/resources/limits",
                             "value": {"nvidia.com/gpu": 1}}])"));
  const json with = json::parse(R"({"spec": {"containers": [{"resources": {"limits": {"cpu": "1"}}}]}})");
  EXPECT_EQ(toJsonPatch({limit}, with),
            json::parse(R"([{"op": "add", "path": "/spec/containers/0/resources/limits/nvidia.com~1gpu", "value": 1}])"));
}

TEST(ToJsonPatch, RenameIsAMoveAndIdenticalEditsCountOnce) {
  const FieldPath resources = kSpec.field("containers").index(0).field("resources");
  const JsonEdit rename = JsonEdit::renameMember(resources, "requests", "limits");
  const json pod = json::parse(R"({"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": 1}}}]}})");
  EXPECT_EQ(toJsonPatch({rename, rename}, pod),
            json::parse(R"([{"op": "move", "from": "/spec/containers/0/resources/requests",
                             "path": "/spec/containers/0/resources/limits"}])"));
}

TEST(ToJsonPatch, AnEditWhoseParentIsMissingIsLeftOut) {
  const json noSpec = json::parse(R"({"kind": "TrainJob"})");
  EXPECT_TRUE(toJsonPatch({addToleration()}, noSpec).empty());
}

}  // namespace
}  // namespace gpuguard
