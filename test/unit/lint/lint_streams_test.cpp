// gpuguard-lint reads YAML streams the way kubectl does and never hides
// what it found: duplicate keys are reported in every format, a bad document
// does not cost the findings of the others, JSON files are read as JSON, and
// hostile inputs and outputs (dead links, closed pipes, endless files) are
// errors, never a crash or a hang. Runs the built binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using nlohmann::json;

// The first finding of `rule`, or null.
json findingOf(const json& report, const std::string& rule) {
  for (const json& f : report["findings"])
    if (f["rule"] == rule) return f;
  return nullptr;
}

// kGoodPod with its containers written twice: kubectl runs only "second".
// The duplicate key is on line 17, column 3.
const std::string kDuplicateContainers = std::string(kGoodPod) +
                                         "  containers:\n"
                                         "  - name: second\n"
                                         "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
                                         "    resources:\n"
                                         "      limits:\n"
                                         "        nvidia.com/gpu: 1\n";

// --- duplicate keys ------------------------------------------------------------

TEST(LintDuplicateKeys, AreAWarningWithFileLineColumnTheKeyAndWhatToDo) {
  TempDir dir;
  dir.write("pod.yaml", kDuplicateContainers);
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;  // kubectl applies it: a warning, not an error
  EXPECT_THAT(r.out, HasSubstr("pod.yaml:18:3: warning: Pod/good: spec.containers: Duplicate value: mapping key \"containers\" "
                               "already defined at line 12; kubectl keeps the last value. Delete one of the two keys, "
                               "or merge their values into one. [duplicate-key]"));
  EXPECT_THAT(r.out, HasSubstr("0 errors, 1 warning, 0 suppressed in 1 object (1 file)"));
}

TEST(LintDuplicateKeys, DoNotChangeTheExitStatusOfErrors) {
  const RunResult r = runLint({"--format", "json", "-"}, std::string(kFractionalPod) + "metadata:\n  name: again\n");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const json j = parseJson(r);
  EXPECT_THAT(rulesOf(j), ElementsAre("gpu-fractional", "duplicate-key"));
  EXPECT_EQ(j["summary"]["errors"], 1);
  EXPECT_EQ(j["summary"]["warnings"], 1);
}

TEST(LintDuplicateKeys, AreReportedInEveryFormat) {
  TempDir dir;
  dir.write("pod.yaml", kDuplicateContainers);

  const json j = parseJson(runLint({"--format", "json", "pod.yaml"}, "", dir.str()));
  ASSERT_EQ(j["findings"].size(), 1u);
  const json& f = j["findings"][0];
  EXPECT_EQ(f["rule"], "duplicate-key");
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_EQ(f["line"], 18);
  EXPECT_EQ(f["column"], 3);
  EXPECT_EQ(f["field"], "spec.containers");
  EXPECT_EQ(f["pointer"], "/spec/containers");
  EXPECT_EQ(f["document"], 0);

  const json sarif = parseJson(runLint({"--format", "sarif", "pod.yaml"}, "", dir.str()));
  const json& run = sarif["runs"][0];
  ASSERT_EQ(run["results"].size(), 1u);
  const json& result = run["results"][0];
  EXPECT_EQ(result["ruleId"], "duplicate-key");
  EXPECT_EQ(result["level"], "warning");
  EXPECT_EQ(result["locations"][0]["physicalLocation"]["region"], json({{"startLine", 18}, {"startColumn", 3}}));
  const json& descriptor = run["tool"]["driver"]["rules"][result["ruleIndex"].get<std::size_t>()];
  EXPECT_EQ(descriptor["id"], "duplicate-key");  // ruleIndex points at its own descriptor
  EXPECT_THAT(descriptor["help"]["text"].get<std::string>(), HasSubstr("Delete one of the two keys"));

  const RunResult junit = runLint({"--format", "junit", "pod.yaml"}, "", dir.str());
  EXPECT_THAT(junit.out, HasSubstr("<testcase name=\"Pod/good\" classname=\"pod\" file=\"pod.yaml\" time=\"0\">\n"
                                   "      <system-out>pod.yaml:18:3: warning: spec.containers: Duplicate value:"));
  EXPECT_THAT(junit.out, HasSubstr("<property name=\"gpuguard.warnings\" value=\"1\"/>"));

  const RunResult github = runLint({"--format", "github", "pod.yaml"}, "", dir.str());
  EXPECT_THAT(github.out,
              HasSubstr("::warning file=pod.yaml,line=18,col=3,title=duplicate-key Pod/good::spec.containers: Duplicate value:"));
}

TEST(LintDuplicateKeys, InJsonFilesToo) {
  TempDir dir;
  dir.write("pod.json", R"({"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "a", "name": "b"}})");
  const json f = findingOf(parseJson(runLint({"--format", "json", "pod.json"}, "", dir.str())), "duplicate-key");
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["line"], 2);
  EXPECT_EQ(f["column"], 28);
  EXPECT_EQ(f["field"], "metadata.name");
}

TEST(LintDuplicateKeys, KeysThatAreNotIdentifiersAreBracketedInTheField) {
  const RunResult r = runLint(
      {"--format", "json", "-"},
      "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    app.kubernetes.io/name: a\n    app.kubernetes.io/name: b\n");
  const json f = findingOf(parseJson(r), "duplicate-key");
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["field"], "metadata.labels[app.kubernetes.io/name]");
}

TEST(LintIgnoredContent, ADocumentAfterAnEndMarkerIsAWarning) {
  const RunResult r = runLint({"-"}, std::string(kGoodPod) + "...\n" + kFractionalPod);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;  // kubectl never reads the fractional pod
  EXPECT_THAT(r.out, HasSubstr("<stdin>:1:1: warning: Pod/good: More than one YAML document in this '---' section"));
  EXPECT_THAT(r.out, HasSubstr("[ignored-content]"));
}

// --- a bad document does not hide the others ----------------------------------------

TEST(LintStreams, ABadSeparatorIsAnErrorAndTheDocumentsOnBothSidesAreJudged) {
  for (const char* separator : {"--- !tag", "---foo", "--- {a: 1}"}) {
    const std::string stream = std::string(kFractionalPod) + separator + "\n" + kFractionalPod;
    const RunResult r = runLint({"--format", "json", "-"}, stream);
    EXPECT_EQ(r.exitCode, 2) << separator;  // unparsable input, as before
    const json j = parseJson(r);
    ASSERT_EQ(j["errors"].size(), 1u) << separator;
    EXPECT_EQ(j["errors"][0]["line"], 18) << separator;
    EXPECT_THAT(j["errors"][0]["message"].get<std::string>(), HasSubstr("invalid document separator")) << separator;
    ASSERT_EQ(j["findings"].size(), 2u) << separator;
    EXPECT_EQ(j["findings"][0]["line"], 17) << separator;
    EXPECT_EQ(j["findings"][1]["line"], 35) << separator;
    EXPECT_EQ(j["summary"]["objects"], 2) << separator;
  }
}

TEST(LintStreams, SeparatorsWithCommentsOrBlanksSeparate) {
  for (const char* separator : {"---", "--- ", "--- # Source: chart/templates/pod.yaml", "---#x"}) {
    const RunResult r = runLint({"--format", "json", "-"}, std::string(kGoodPod) + separator + "\n" + kFractionalPod);
    EXPECT_EQ(r.exitCode, 1) << separator << r.err;
    const json j = parseJson(r);
    EXPECT_EQ(j["summary"]["objects"], 2) << separator;
    EXPECT_TRUE(j["errors"].empty()) << separator;
  }
}

TEST(LintStreams, AnUnparsableDocumentKeepsTheFindingsOfTheOthers) {
  const std::string stream = std::string(kFractionalPod) + "---\napiVersion: v1\nkind: Pod\nspec: [unclosed\n---\n" +
                             kFractionalPod;
  const RunResult r = runLint({"--format", "json", "-"}, stream);
  EXPECT_EQ(r.exitCode, 2);
  const json j = parseJson(r);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["line"], 21);
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][1]["document"], 2);  // the stream's numbering
  EXPECT_EQ(j["findings"][1]["line"], 39);
}

// --- JSON files ------------------------------------------------------------------

TEST(LintJson, AJsonManifestIsJudgedWithJsonPositions) {
  TempDir dir;
  dir.write("pod.json", "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"Pod\",\n\t\"metadata\": {\"name\": \"p\"},\n"
                        "\t\"spec\": {\"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\"}],\n"
                        "\t\t\"containers\": [{\"name\": \"c\", \"image\": \"i\",\n"
                        "\t\t\t\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"0.5\"}}}]}\n}\n");
  const RunResult r = runLint({"--format", "json", "pod.json"}, "", dir.str());
  const json j = parseJson(r);
  ASSERT_TRUE(j["errors"].empty()) << r.out;
  const json f = findingOf(j, "gpu-fractional");
  ASSERT_FALSE(f.is_null()) << r.out;
  EXPECT_EQ(f["line"], 7);
  EXPECT_EQ(f["column"], 47);
}

// Red team 33 C4: since kubectl 1.33 (kubernetes/kubernetes#130666) a text
// that starts with '{' but is not JSON is read as YAML: flow-style YAML,
// kubectl's own -o kyaml output without its "---", JSON with a comment or a
// trailing comma. Each asks 0.5 GPU: the finding proves it was read.
TEST(LintJson, WhatStartsWithABraceButIsNotJsonIsReadAsYamlAsKubectlDoes) {
  const std::string limits = "resources: {limits: {nvidia.com/gpu: \"0.5\"}}";
  const std::vector<std::string> texts = {
      "{apiVersion: v1, kind: Pod, metadata: {name: flow1}, spec: {containers: [{name: c, image: busybox, " + limits + "}]}}\n",
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"flow2\"}, # a comment\n"
      " \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"busybox\", " + limits + "}]}}\n",
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"flow3\"}, \"spec\": {\"containers\": "
      "[{\"name\": \"c\", \"image\": \"busybox\", " + limits + "}],}}\n",
      "{\n  kind: \"Pod\",\n  apiVersion: \"v1\",\n  metadata: {\n    name: \"kyaml\",\n  },\n  spec: {\n"
      "    containers: [{\n      name: \"c\",\n      image: \"busybox\",\n      " + limits + ",\n    }],\n  },\n}\n",
  };
  for (const std::string& text : texts) {
    const RunResult r = runLint({"--format", "json", "-"}, text);
    EXPECT_EQ(r.exitCode, 1) << text << r.out << r.err;
    const json j = parseJson(r);
    EXPECT_TRUE(j["errors"].empty()) << text << r.out;
    EXPECT_FALSE(findingOf(j, "gpu-fractional").is_null()) << text << r.out;
  }
}

// A JSON object, "---" and YAML documents: kubectl reads them all.
TEST(LintJson, YamlDocumentsAfterOneJsonObjectAreJudgedAtTheirLines) {
  const std::string text =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"v1\"},\"spec\":{\"containers\":[{\"name\":"
      "\"c\",\"image\":\"busybox\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"0.5\"}}}]}}\n---\n" +
      std::string(kFractionalPod);
  const RunResult r = runLint({"--format", "json", "-"}, text);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  const json j = parseJson(r);
  EXPECT_TRUE(j["errors"].empty()) << r.out;
  std::vector<int> lines;
  for (const json& f : j["findings"])
    if (f["rule"] == "gpu-fractional") lines.push_back(f["line"].get<int>());
  EXPECT_THAT(lines, ElementsAre(1, 19)) << r.out;  // kFractionalPod's line 17, after two lines
}

// After two JSON objects kubectl reads the stream as JSON to its end.
TEST(LintJson, YamlAfterTwoJsonObjectsIsAnErrorThatSaysWhy) {
  const RunResult r = runLint({"-"}, "{\"kind\": \"ConfigMap\"}\n{\"kind\": \"ConfigMap\"}\n{kind: Pod}\n");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.out, HasSubstr("<stdin>:3:2: error: invalid character 'k' looking for beginning of object key string; "
                               "the stream starts with two JSON objects, so kubectl reads the rest as JSON too, not YAML"));
}

// Neither JSON nor YAML: the YAML error, and JSON's as kubectl reports it.
TEST(LintJson, ATextThatIsNeitherNamesBothReasons) {
  const RunResult r = runLint({"-"}, "{\"kind\": \"Pod\", \"spec\": [}\n");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.out, HasSubstr("(the text starts with '{': kubectl reads it as JSON first, and that fails too: "
                               "invalid character '}' looking for beginning of value at line 1, column 26)"));
}

// Red team 33 C5: kubectl v1.35 refuses a %YAML directive (its YAMLReader
// cuts the "---" after it away) and a document that is only "...", and
// stops there; the documents around them are still judged here.
TEST(LintStreams, ADirectiveOrAnEndMarkerAloneIsAnInputErrorAsForKubectl) {
  const RunResult directive = runLint({"-"}, "%YAML 1.1\n---\n" + std::string(kFractionalPod));
  EXPECT_EQ(directive.exitCode, 2) << directive.out;
  EXPECT_THAT(directive.out, HasSubstr("<stdin>:1:1: error: did not find expected <document start>: a %YAML or %TAG "
                                       "directive needs \"---\" after it in the same document"));
  EXPECT_THAT(directive.out, HasSubstr("[gpu-fractional]"));
  const RunResult dots = runLint({"-"}, std::string(kGoodPod) + "---\n...\n---\n" + kFractionalPod);
  EXPECT_EQ(dots.exitCode, 2) << dots.out;
  EXPECT_THAT(dots.out, HasSubstr("<stdin>:19:1: error: did not find expected node content: the document end marker"));
  EXPECT_THAT(dots.out, HasSubstr("[gpu-fractional]"));
  // After a document, "..." ends it: fine for kubectl.
  EXPECT_EQ(runLint({"-"}, std::string(kGoodPod) + "...\n").exitCode, 0);
}

// Red team 33 C5: kubectl v1.35 cannot open a list inside a List ("*unstructured.
// Unstructured is not a list") and sends none of that List's items, those before the
// nested list too; the file's other documents it still sends (checked against
// kube-apiserver v1.37.2: a Pod document before and after the List were both created).
// So the List is an input error and none of its pods is judged; the Pod beside it is.
TEST(LintStreams, AListHoldingAListIsAnInputErrorAndNoneOfItsItemsIsJudged) {
  const std::string fractional = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME"},"spec":{"containers":)"
                                 R"([{"name":"c","image":"busybox","resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}})";
  const auto pod = [&](const std::string& name) {
    std::string p = fractional;
    return p.replace(p.find("NAME"), 4, name);
  };
  const std::vector<std::string> fractionalOnly = {"--format", "json", "--disable", "gpu-missing-toleration",
                                                   "--disable", "gpu-missing-driver-pin", "-"};
  const std::string nested = R"({"apiVersion":"v1","kind":"List","items":[)" + pod("l2") +
                             ",\n {\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[" + pod("l3") + "]},\n" +
                             pod("l4") + "]}\n";
  const RunResult r = runLint(fractionalOnly, pod("beside") + "\n---\n" + nested);
  EXPECT_EQ(r.exitCode, 2) << r.out;
  const json j = parseJson(r);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_THAT(j["errors"][0]["message"].get<std::string>(),
              HasSubstr("item 1 of the List is itself a list (kind PodList, with items): kubectl refuses the whole "
                        "List"));
  ASSERT_THAT(rulesOf(j), ElementsAre("gpu-fractional"));
  EXPECT_EQ(j["findings"][0]["object"]["name"], "beside");
  // The same List without the nested one: each item judged.
  const RunResult flat =
      runLint(fractionalOnly, R"({"apiVersion":"v1","kind":"List","items":[)" + pod("l2") + "]}\n");
  EXPECT_EQ(flat.exitCode, 1) << flat.out;
  EXPECT_THAT(rulesOf(parseJson(flat)), ElementsAre("gpu-fractional"));
}

// --- hostile inputs and outputs ---------------------------------------------------------

TEST(LintHostileInput, ASymlinkLoopIsAnErrorNamedOrFoundInADirectory) {
  TempDir dir;
  dir.write("d/pod.yaml", kFractionalPod);
  std::filesystem::create_symlink("loop.yaml", dir.path() / "d/loop.yaml");
  std::filesystem::create_symlink("missing.yaml", dir.path() / "d/dangling.yaml");
  const RunResult named = runLint({"d/loop.yaml"}, "", dir.str());
  EXPECT_EQ(named.exitCode, 2);
  EXPECT_THAT(named.out, HasSubstr("d/loop.yaml: error: cannot read file: Too many levels of symbolic links"));
  const RunResult walked = runLint({"--format", "json", "d"}, "", dir.str());
  EXPECT_EQ(walked.exitCode, 2);
  const json j = parseJson(walked);
  ASSERT_EQ(j["errors"].size(), 2u);
  EXPECT_EQ(j["errors"][0]["file"], "d/dangling.yaml");
  EXPECT_EQ(j["errors"][1]["file"], "d/loop.yaml");
  EXPECT_THAT(rulesOf(j), ElementsAre("gpu-fractional"));  // the real file is still judged
}

TEST(LintHostileInput, AnUnreadableFileIsAnErrorAndTheOthersAreJudged) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads any file";
  TempDir dir;
  const auto secret = dir.write("a-secret.yaml", kGoodPod);
  dir.write("b-pod.yaml", kFractionalPod);
  chmod(secret.c_str(), 0);
  const RunResult r = runLint({"--format", "json", "."}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  const json j = parseJson(r);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_THAT(j["errors"][0]["message"].get<std::string>(), HasSubstr("Permission denied"));
  EXPECT_THAT(rulesOf(j), ElementsAre("gpu-fractional"));
}

TEST(LintHostileInput, AnEndlessOrHugeFileIsAnErrorWithoutReadingItAll) {
  TempDir dir;
  const auto huge = dir.path() / "huge.yaml";
  { std::ofstream(huge) << "a: 1\n"; }
  std::filesystem::resize_file(huge, 100ull << 30);  // sparse: 100 GB that take no disk
  for (const std::string& path : {huge.string(), std::string("/dev/zero")}) {
    const RunResult r = runLint({path}, "", "", 60);
    EXPECT_FALSE(r.timedOut) << path;
    EXPECT_EQ(r.exitCode, 2) << path;
    EXPECT_THAT(r.out, HasSubstr("input is larger than the limit of 67108864 bytes")) << path;
  }
}

TEST(LintHostileInput, AClosedStandardInputIsAnError) {
  const RunResult r = runCommand({"bash", "-c", "exec \"$0\" - <&-", lintBinary()});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("<stdin>: error: cannot read standard input: Bad file descriptor"));
}

TEST(LintHostileInput, AReaderThatClosesThePipeEarlyEndsTheRunQuietly) {
  TempDir dir;
  for (int i = 0; i < 3000; ++i) dir.write("pods/pod-" + std::to_string(i) + ".yaml", kFractionalPod);
  // Far more than a pipe holds: the writes after head exits fail with EPIPE.
  const RunResult r = runCommand(
      {"bash", "-c", "\"$0\" --format text pods | head -1; echo \"status=${PIPESTATUS[0]}\"", lintBinary()}, "",
      dir.str(), 120);
  EXPECT_FALSE(r.timedOut);
  EXPECT_THAT(r.out, HasSubstr("pods/pod-0.yaml:17:25: error:"));
  EXPECT_THAT(r.out, HasSubstr("status=1"));  // the run's status, not 141 (killed by SIGPIPE)
  EXPECT_EQ(r.err, "");
}

TEST(LintHostileInput, APendingDiagnosisEndsQuietlyWhenItsReaderClosesThePipe) {
  TempDir dir;
  for (int i = 0; i < 1000; ++i) dir.write("pods/pod-" + std::to_string(i) + ".yaml", kFractionalPod);
  const std::string nodes = sourceDir() + "/test/data/snapshots/nodes.json";
  const RunResult r = runCommand({"bash", "-c",
                                  "\"$0\" --nodes \"$1\" pods | head -1 >/dev/null; echo \"status=${PIPESTATUS[0]}\"",
                                  lintBinary(), nodes},
                                 "", dir.str(), 120);
  EXPECT_FALSE(r.timedOut);
  const RunResult full = runLint({"--nodes", nodes, "pods"}, "", dir.str());
  ASSERT_GT(full.out.size(), 256u * 1024) << "the report must overflow the pipe for the test to mean anything";
  EXPECT_THAT(r.out, HasSubstr("status=" + std::to_string(full.exitCode)));  // the run's status, quietly
  EXPECT_EQ(r.err, "");
}

TEST(LintHostileInput, AnUnknownFormatIsAUsageError) {
  const RunResult r = runLint({"--format", "yaml", "-"}, kGoodPod);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown format \"yaml\" (text, json, sarif, junit, github)"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace gpuguard::lint_test
