// Input shapes whose cost once grew faster than the input (issue 23): a
// `kind: List` is judged item by item, a JSON array is refused at its first
// character as kubectl refuses it, --fix with thousands of edits in one
// object fixes them all. Growth itself is measured by ctest lint.shapes
// (test/bench/lint_shapes.sh -c), never by a wall-clock limit here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lint/fix/fix.h"
#include "lint/lint_file.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

// A pod that asks for a GPU in requests only, without toleration or pin:
// findings at /spec/... of each item.
std::string podItem(const std::string& name, const std::string& image = "nvidia/cuda:12.4.1-base-ubuntu22.04") {
  return "- apiVersion: v1\n"
         "  kind: Pod\n"
         "  metadata:\n"
         "    name: " + name + "\n"
         "    namespace: ml\n"
         "  spec:\n"
         "    containers:\n"
         "    - name: cuda\n"
         "      image: " + image + "\n"
         "      resources:\n"
         "        limits:\n"
         "          nvidia.com/gpu: \"0.5\"\n";
}

// --- a JSON array ------------------------------------------------------------------

TEST(LintJsonArray, IsAnInputErrorAsKubectlRefusesIt) {
  // kubectl apply -f: error validating "x.json": error validating data: invalid object to validate
  TempDir dir;
  dir.write("pods.json", R"([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}])");
  const RunResult r = runLint({"pods.json"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("pods.json:1:1: error: the document is a list ([...], a JSON array), not a Kubernetes "
                               "object: kubectl refuses it (error validating data: invalid object to validate)"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("no Kubernetes objects found")));
}

TEST(LintJsonArray, IsFoundAfterCommentsAndBlankLinesWithItsPosition) {
  const RunResult r = runLint({"--format", "json", "-"}, "# generated\n\n   [\n  {\"kind\": \"Pod\"}\n]\n");
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  const json j = parseJson(r);
  ASSERT_EQ(j["errors"].size(), 1u) << r.out;
  EXPECT_EQ(j["errors"][0]["line"], 3);
  EXPECT_EQ(j["errors"][0]["column"], 4);
}

TEST(LintJsonArray, OnlyTheArrayDocumentOfAStreamIsAnError) {
  const RunResult r = runLint({"--format", "json", "-"}, std::string(kFractionalPod) + "---\n[1, 2]\n");
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  const json j = parseJson(r);
  EXPECT_EQ(j["summary"]["objects"], 1);
  EXPECT_EQ(j["summary"]["errors"], 1);  // gpu-fractional in the pod before it
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["line"], 19);
}

TEST(LintJsonArray, AnArrayInsideAnObjectIsFine) {
  const RunResult r = runLint({"-"}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '[1]'}\n");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

// --- kind: List, item by item --------------------------------------------------------

TEST(LintList, EachItemIsJudgedAndNamedAtItsPlaceInTheList) {
  const std::string list = "apiVersion: v1\nkind: List\nitems:\n" + podItem("a") + podItem("b");
  const RunResult r = runLint({"--format", "json", "-"}, list);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const json j = parseJson(r);
  json second;
  for (const json& f : j["findings"]) {
    if (f["rule"] == "gpu-fractional" && f["object"]["name"] == "b") second = f;
  }
  ASSERT_FALSE(second.is_null()) << r.out;
  EXPECT_EQ(second["field"], "items[1].spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(second["pointer"], "/items/1/spec/containers/0/resources/limits/nvidia.com~1gpu");
  EXPECT_EQ(second["line"], 27);
  EXPECT_EQ(second["column"], 27);
  EXPECT_EQ(second["object"]["kind"], "Pod");
  EXPECT_EQ(second["object"]["namespace"], "ml");
  EXPECT_EQ(second["podTemplate"], "spec");
  EXPECT_EQ(j["summary"]["objects"], 1);  // one document, as before
}

TEST(LintList, TheListsOwnSuppressionStillCoversItsItems) {
  const std::string list =
      "apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n"
      "    ignore.gpuguard.io/gpu-fractional: \"HAMi shares these GPUs\"\n"
      "items:\n" +
      podItem("a");
  const RunResult r = runLint({"--format", "json", "--show-suppressed", "-"}, list);
  const json j = parseJson(r);
  bool suppressed = false;
  for (const json& f : j["findings"]) {
    if (f["rule"] == "gpu-fractional") suppressed = f.value("suppressed", false);
  }
  EXPECT_TRUE(suppressed) << r.out;
  EXPECT_EQ(j["summary"]["suppressed"].get<int>() >= 1, true);
}

TEST(LintList, IneffectiveSuppressionsAndDuplicateKeysAreFoundOnTheListAndInItems) {
  const std::string list =
      "apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    ignore.gpuguard.io/gpu-fractionl: \"typo\"\n"
      "items:\n" +
      podItem("a") + "  kind: Pod\n";
  const RunResult r = runLint({"--format", "json", "-"}, list);
  const json j = parseJson(r);
  std::vector<std::string> seen;
  for (const json& f : j["findings"]) {
    if (f["rule"] == "ineffective-suppression" || f["rule"] == "duplicate-key") {
      seen.push_back(f["rule"].get<std::string>() + " " + f["field"].get<std::string>() + " " +
                     f["object"]["kind"].get<std::string>() + " " + std::to_string(f["line"].get<int>()));
    }
  }
  EXPECT_THAT(seen, ::testing::UnorderedElementsAre(
                        "ineffective-suppression metadata.annotations[ignore.gpuguard.io/gpu-fractionl] List 5",
                        "duplicate-key items[0].kind Pod 19"));
}

TEST(LintList, ImageExemptionsNameEachItemsOwnImages) {
  // Judged whole, the List was one subject holding every item's images.
  TempDir dir;
  dir.write(".gpuguard.yaml", "exemptions:\n  - image: 'registry\\.corp/exempt:.*'\n");
  dir.write("list.yaml", "apiVersion: v1\nkind: List\nitems:\n" + podItem("exempt", "registry.corp/exempt:1") +
                             podItem("judged"));
  const RunResult r = runLint({"--format", "json", "list.yaml"}, "", dir.str());
  const json j = parseJson(r);
  std::set<std::string> names;
  for (const json& f : j["findings"]) names.insert(f["object"]["name"].get<std::string>());
  EXPECT_EQ(names, std::set<std::string>{"judged"}) << r.out;
}

TEST(LintList, ALargeListIsJudgedCompletely) {
  std::string list = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 3000; ++i) list += podItem("p" + std::to_string(i));
  const lint::FileReport report = lint::lintText("big.yaml", list, lint::LintPolicy{});
  std::size_t fractional = 0;
  for (const lint::Located& l : report.findings) fractional += l.finding.rule == "gpu-fractional";
  EXPECT_EQ(fractional, 3000u);
  EXPECT_EQ(report.objects.size(), 3000u);
  EXPECT_EQ(report.objects.back().ref.pointer, "/items/2999");
}

// --- --fix with many edits --------------------------------------------------------------

TEST(LintFixScale, EveryContainerOfALargePodIsFixed) {
  std::string pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  containers:\n";
  const int containers = 2000;
  for (int i = 0; i < containers; ++i) {
    pod += "  - name: c" + std::to_string(i) +
           "\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n";
  }
  const lint::FixResult fixed = lint::fixText(pod, lint::LintPolicy{});
  ASSERT_TRUE(fixed.changed);
  std::size_t renamed = 0;
  for (std::size_t at = fixed.text.find("      limits:\n"); at != std::string::npos;
       at = fixed.text.find("      limits:\n", at + 1)) {
    ++renamed;
  }
  EXPECT_EQ(renamed, static_cast<std::size_t>(containers));
  EXPECT_EQ(fixed.text.find("requests:"), std::string::npos);
  EXPECT_THAT(fixed.text, HasSubstr("  tolerations:\n"));  // and the pod's toleration
}

}  // namespace
}  // namespace gpuguard::lint_test
