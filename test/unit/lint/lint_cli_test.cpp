// gpuguard-lint as users, pre-commit and CI run it: the built binary, its
// exit status, stdout and stderr. Covers exit codes, --output, the
// configuration file, suppressions, rule docs, generated (Helm/kustomize)
// streams, parallel runs and hostile input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "rules/registry.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

// --- exit codes ------------------------------------------------------------

TEST(LintCli, ExitsZeroWhenThereIsNothingWrong) {
  TempDir dir;
  dir.write("pod.yaml", kGoodPod);
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");  // silence on success, like a compiler
}

TEST(LintCli, ExitsOneOnAnErrorFindingWithFileLineColumn) {
  TempDir dir;
  dir.write("pod.yaml", kFractionalPod);
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.out, HasSubstr("pod.yaml:17:25: error: Pod/fractional: spec.containers[0].resources.limits[nvidia.com/gpu]"));
  EXPECT_THAT(r.out, HasSubstr("[gpu-fractional]"));
  EXPECT_THAT(r.out, HasSubstr("1 error, 0 warnings, 0 suppressed in 1 object (1 file)"));
}

TEST(LintCli, ExitsZeroWhenTheOnlyFindingsAreWarnings) {
  TempDir dir;
  dir.write("pod.yaml", kFractionalPod);
  dir.write(".gpuguard.yaml", "rules:\n  gpu-fractional: warning\n");
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pod.yaml:17:25: warning:"));
}

TEST(LintCli, ExitsTwoOnUnparsableInputButStillLintsTheOtherFiles) {
  TempDir dir;
  dir.write("a-broken.yaml", "apiVersion: v1\nkind: Pod\nspec: [unclosed\n");
  dir.write("b-pod.yaml", kFractionalPod);
  const RunResult r = runLint({"--format", "json", "."}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  const json j = parseJson(r);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["file"], "./a-broken.yaml");
  EXPECT_GT(j["errors"][0]["line"].get<int>(), 0);
  EXPECT_THAT(rulesOf(j), ::testing::ElementsAre("gpu-fractional"));
}

TEST(LintCli, ExitsTwoOnAMissingPathAndReportsItInEveryFormat) {
  TempDir dir;
  dir.write("pod.yaml", kGoodPod);
  for (const char* format : {"text", "json", "sarif", "junit", "github"}) {
    const RunResult r = runLint({"--format", format, "pod.yaml", "missing.yaml"}, "", dir.str());
    EXPECT_EQ(r.exitCode, 2) << format;
    EXPECT_THAT(r.err, HasSubstr("missing.yaml: no such file or directory")) << format;
    EXPECT_THAT(r.out, HasSubstr("missing.yaml")) << format;
  }
}

TEST(LintCli, ExitsTwoOnBadUsage) {
  EXPECT_EQ(runLint({}).exitCode, 2);
  EXPECT_EQ(runLint({"--format", "xml", "x.yaml"}).exitCode, 2);
  EXPECT_EQ(runLint({"--no-such-option", "x.yaml"}).exitCode, 2);
  EXPECT_EQ(runLint({"--jobs", "0", "x.yaml"}).exitCode, 2);
  const RunResult r = runLint({"--dry-run", "x.yaml"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("--dry-run only goes with --fix"));
}

TEST(LintCli, VersionAndHelpExitZero) {
  const RunResult v = runLint({"--version"});
  EXPECT_EQ(v.exitCode, 0);
  EXPECT_THAT(v.out, HasSubstr("gpuguard-lint "));
  const RunResult h = runLint({"--help"});
  EXPECT_EQ(h.exitCode, 0);
  for (const char* f : {"sarif", "junit", "github", "--fix", "--dry-run", "--rules-table"}) {
    EXPECT_THAT(h.out, HasSubstr(f));
  }
}

// --- --output and diagnostics ------------------------------------------------

TEST(LintCli, OutputWritesTheReportToAFileInEveryFormatAndLeavesStdoutEmpty) {
  TempDir dir;
  dir.write("pod.yaml", kFractionalPod);
  for (const char* format : {"text", "json", "sarif", "junit", "github"}) {
    const std::string file = std::string("report.") + format;
    const RunResult r = runLint({"--format", format, "--output", file, "pod.yaml"}, "", dir.str());
    EXPECT_EQ(r.exitCode, 1) << format;
    EXPECT_EQ(r.out, "") << format;
    const std::string report = readFile(dir.path() / file);
    EXPECT_THAT(report, HasSubstr("gpu-fractional")) << format;
  }
}

TEST(LintCli, AnUnwritableOutputIsExitTwo) {
  TempDir dir;
  dir.write("pod.yaml", kGoodPod);
  const RunResult r = runLint({"--output", "no/such/dir/report.txt", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot write"));
}

// --- configuration -----------------------------------------------------------

TEST(LintCli, TheConfigIsFoundInAParentDirectory) {
  TempDir dir;
  dir.write(".gpuguard.yaml", "rules: {gpu-fractional: off}\n");
  dir.write("deploy/pod.yaml", kFractionalPod);
  const RunResult r = runLint({"pod.yaml"}, "", (dir.path() / "deploy").string());
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST(LintCli, AnExplicitConfigWins) {
  TempDir dir;
  dir.write(".gpuguard.yaml", "rules: {gpu-fractional: off}\n");
  dir.write("strict.yaml", "rules: {gpu-fractional: error}\n");
  dir.write("pod.yaml", kFractionalPod);
  EXPECT_EQ(runLint({"pod.yaml"}, "", dir.str()).exitCode, 0);
  EXPECT_EQ(runLint({"--config", "strict.yaml", "pod.yaml"}, "", dir.str()).exitCode, 1);
}

TEST(LintCli, AnUnknownConfigKeyIsExitTwoNamingTheKeyAndTheFile) {
  TempDir dir;
  dir.write(".gpuguard.yaml", "rules: {}\nmaxGpuPerNode: 8\n");
  dir.write("pod.yaml", kGoodPod);
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr(".gpuguard.yaml"), HasSubstr("maxGpuPerNode"), HasSubstr("unknown key")));
  EXPECT_EQ(r.out, "");
}

TEST(LintCli, AWrongTypeInTheConfigIsExitTwoNamingTheKeyAndTheFile) {
  TempDir dir;
  dir.write("policy.yaml", "maxGpusPerNode: eight\n");
  dir.write("pod.yaml", kGoodPod);
  RunResult r = runLint({"--config", "policy.yaml", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("policy.yaml"), HasSubstr("maxGpusPerNode")));

  dir.write("policy.yaml", "rules:\n  gpu-fractional: loud\n");
  r = runLint({"--config", "policy.yaml", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("policy.yaml"), HasSubstr("rules.gpu-fractional")));

  dir.write("policy.yaml", "rules:\n  no-such-rule: off\n");
  r = runLint({"--config", "policy.yaml", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("policy.yaml"), HasSubstr("no-such-rule")));

  dir.write("policy.yaml", "exclude: charts/**\n");
  r = runLint({"--config", "policy.yaml", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("policy.yaml"), HasSubstr("exclude")));

  dir.write("policy.yaml", "rules: [\n");
  r = runLint({"--config", "policy.yaml", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("policy.yaml:"));
}

TEST(LintCli, AMissingExplicitConfigIsExitTwo) {
  TempDir dir;
  dir.write("pod.yaml", kGoodPod);
  const RunResult r = runLint({"--config", "nope.yaml", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("nope.yaml"));
}

TEST(LintCli, IncludeAndExcludeGlobsApplyToDirectoryWalks) {
  TempDir dir;
  dir.write(".gpuguard.yaml", "include: [\"deploy/**\", \"*.json\"]\nexclude: [\"deploy/charts/**\", \"*-ignored.yaml\"]\n");
  dir.write("deploy/app.yaml", kFractionalPod);
  dir.write("deploy/sub/app.yml", kFractionalPod);
  dir.write("deploy/charts/llm/templates/pod.yaml", "{{ broken helm template }}\n");
  dir.write("deploy/x-ignored.yaml", kFractionalPod);
  dir.write("other/app.yaml", kFractionalPod);
  dir.write("other/pod.json", R"({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}})");
  dir.write("deploy/.hidden/app.yaml", kFractionalPod);
  dir.write("deploy/notes.txt", kFractionalPod);

  auto files = [](const RunResult& r) {
    std::set<std::string> out;
    const json j = json::parse(r.out);
    for (const json& f : j["findings"]) out.insert(f["file"]);
    return out;
  };
  RunResult r = runLint({"--format", "json", "."}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(files(r), (std::set<std::string>{"./deploy/app.yaml", "./deploy/sub/app.yml"}));
  EXPECT_EQ(json::parse(r.out)["summary"]["files"], 3);  // and other/pod.json

  // The globs are relative to the config file's directory, wherever the
  // linter runs from.
  r = runLint({"--format", "json", "."}, "", (dir.path() / "deploy").string());
  EXPECT_EQ(files(r), (std::set<std::string>{"./app.yaml", "./sub/app.yml"}));
  r = runLint({"--format", "json", "deploy"}, "", dir.str());
  EXPECT_EQ(files(r), (std::set<std::string>{"deploy/app.yaml", "deploy/sub/app.yml"}));

  // Files named one by one (as pre-commit passes them) are filtered too.
  r = runLint({"--format", "json", "deploy/charts/llm/templates/pod.yaml", "other/app.yaml", "deploy/app.yaml"}, "",
              dir.str());
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(files(r), (std::set<std::string>{"deploy/app.yaml"}));
}

// --- suppressions -------------------------------------------------------------

std::string suppressedPod(const std::string& annotation) {
  std::string pod = kFractionalPod;
  pod.replace(pod.find("  name: fractional\n"), 19, "  name: fractional\n  annotations:\n    " + annotation + "\n");
  return pod;
}

TEST(LintCli, ASuppressedFindingIsCountedButNotListedUnlessAsked) {
  TempDir dir;
  dir.write("pod.yaml", suppressedPod("ignore.gpuguard.io/gpu-fractional: \"HAMi shares this GPU\""));
  RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_THAT(r.out, Not(HasSubstr("gpu-fractional")));
  EXPECT_THAT(r.out, HasSubstr("0 errors, 0 warnings, 1 suppressed"));

  r = runLint({"--show-suppressed", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_THAT(r.out, HasSubstr("pod.yaml:19:25: suppressed:"));
  EXPECT_THAT(r.out, HasSubstr("[gpu-fractional] (HAMi shares this GPU)"));

  r = runLint({"--format", "json", "pod.yaml"}, "", dir.str());
  json j = parseJson(r);
  EXPECT_TRUE(j["findings"].empty());
  EXPECT_EQ(j["summary"]["suppressed"], 1);

  r = runLint({"--format", "json", "--show-suppressed", "pod.yaml"}, "", dir.str());
  j = parseJson(r);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["suppressed"], true);
  EXPECT_EQ(j["findings"][0]["suppressionReason"], "HAMi shares this GPU");
  EXPECT_EQ(j["findings"][0]["line"], 19);
}

TEST(LintCli, EveryFormatCountsSuppressedFindings) {
  TempDir dir;
  dir.write("pod.yaml", suppressedPod("ignore.gpuguard.io/gpu-fractional: \"HAMi shares this GPU\""));
  const RunResult sarif = runLint({"--format", "sarif", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(sarif.exitCode, 0);
  const json s = parseJson(sarif);
  ASSERT_EQ(s["runs"][0]["results"].size(), 1u);
  EXPECT_EQ(s["runs"][0]["results"][0]["suppressions"][0]["kind"], "inSource");
  EXPECT_EQ(s["runs"][0]["results"][0]["suppressions"][0]["justification"], "HAMi shares this GPU");

  const RunResult junit = runLint({"--format", "junit", "pod.yaml"}, "", dir.str());
  EXPECT_THAT(junit.out, HasSubstr("skipped=\"1\""));
  EXPECT_THAT(junit.out, HasSubstr("<skipped message=\"suppressed: gpu-fractional: HAMi shares this GPU\"/>"));
  EXPECT_THAT(junit.out, HasSubstr("<property name=\"gpuguard.suppressed\" value=\"1\"/>"));

  const RunResult github = runLint({"--format", "github", "pod.yaml"}, "", dir.str());
  EXPECT_THAT(github.out, Not(HasSubstr("::")));
  EXPECT_THAT(github.out, HasSubstr("1 suppressed"));
  const RunResult shown = runLint({"--format", "github", "--show-suppressed", "pod.yaml"}, "", dir.str());
  EXPECT_THAT(shown.out, HasSubstr("::notice file=pod.yaml,line=19,col=25,title=gpu-fractional Pod/fractional (suppressed)::"));
}

TEST(LintCli, ASuppressionNeedsAReason) {
  TempDir dir;
  dir.write("pod.yaml", suppressedPod("ignore.gpuguard.io/gpu-fractional: \"\""));
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.out, HasSubstr("0 suppressed"));
}

TEST(LintCli, AllowSuppressionsFalseInTheConfigIgnoresAnnotations) {
  TempDir dir;
  dir.write("pod.yaml", suppressedPod("ignore.gpuguard.io/gpu-fractional: \"HAMi shares this GPU\""));
  dir.write(".gpuguard.yaml", "allowSuppressions: false\n");
  EXPECT_EQ(runLint({"pod.yaml"}, "", dir.str()).exitCode, 1);
}

TEST(LintCli, ExemptionsInTheConfigSkipTheirRulesAndABadPatternIsExit2) {
  TempDir dir;
  dir.write("pod.yaml", suppressedPod("team: ml"));
  EXPECT_EQ(runLint({"pod.yaml"}, "", dir.str()).exitCode, 1) << "the fractional GPU, without an exemption";
  dir.write(".gpuguard.yaml", "exemptions:\n  - kind: 'Pod|Job'\n    name: 'frac.*'\n    rules: [gpu-fractional]\n");
  EXPECT_EQ(runLint({"pod.yaml"}, "", dir.str()).exitCode, 0);

  dir.write(".gpuguard.yaml", "exemptions:\n  - kind: Pod\n  - image: '(?=x)'\n");
  const RunResult bad = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_THAT(bad.err, HasSubstr(".gpuguard.yaml: exemptions[1].image: \"(?=x)\": invalid pattern: "));
}

// --- rule documentation ---------------------------------------------------------

// --list-rules and --explain: test/unit/lint/lint_catalog_test.cpp.

std::string between(const std::string& text, const std::string& begin, const std::string& end) {
  const std::size_t b = text.find(begin);
  const std::size_t e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return "<markers not found>";
  const std::size_t start = text.find('\n', b) + 1;
  return text.substr(start, e - start);
}

TEST(LintCli, DocsRulesMdIsGeneratedFromTheRegistry) {
  const RunResult r = runLint({"--rules-markdown"});
  ASSERT_EQ(r.exitCode, 0);
  const std::string committed = readFile(sourceDir() + "/docs/rules.md");
  EXPECT_TRUE(r.out == committed)
      << "docs/rules.md is stale: the rule registry changed. Regenerate it with\n"
         "    test/lint/update_docs.sh          (or: build/gpuguard-lint --rules-markdown > docs/rules.md)\n"
         "and commit the result.";
}

TEST(LintCli, TheReadmeRulesTableMatchesTheRegistry) {
  const RunResult r = runLint({"--rules-table"});
  ASSERT_EQ(r.exitCode, 0);
  for (const Rule* rule : allRules()) EXPECT_THAT(r.out, HasSubstr("[`" + std::string(rule->id()) + "`]"));
  const std::string readme = readFile(sourceDir() + "/README.md");
  EXPECT_TRUE(between(readme, "<!-- rules-table:begin -->", "<!-- rules-table:end -->") == r.out)
      << "README.md's rules table (between <!-- rules-table:begin --> and <!-- rules-table:end -->) is stale.\n"
         "Regenerate it with\n    test/lint/update_docs.sh\nand commit the result.";
}

// --- generated manifests: helm template / kubectl kustomize on stdin ------------

// What `helm template` prints: "---" separators followed by "# Source:"
// comments, documents that are empty after templating, and objects that
// are not Kubernetes objects.
constexpr const char* kHelmOutput = R"(---
# Source: llm/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: llm
---
# Source: llm/templates/disabled.yaml
---
# Source: llm/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: "vllm/vllm-openai:v0.6.3"
          resources:
            requests:
              nvidia.com/gpu: 1
--- # trailing comment on the separator
# Source: llm/values-schema.yaml
replicaCount: 1
image: {repository: vllm}
)";

TEST(LintCli, HelmTemplateOutputOnStdinIsLintedWithPositions) {
  const RunResult r = runLint({"--format", "json", "-"}, kHelmOutput);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const json j = parseJson(r);
  EXPECT_EQ(j["summary"]["objects"], 2);  // the ServiceAccount and the Deployment
  EXPECT_TRUE(j["errors"].empty());
  bool found = false;
  for (const json& f : j["findings"]) {
    EXPECT_EQ(f["file"], "<stdin>");
    EXPECT_EQ(f["document"], 2);
    if (f["rule"] == "gpu-requests-without-limits") {
      found = true;
      EXPECT_EQ(f["line"], 22);  // the requests: line
    }
  }
  EXPECT_TRUE(found) << r.out;
}

TEST(LintCli, KubectlKustomizeOutputOnStdinIsLinted) {
  if (runCommand({"sh", "-c", "command -v kubectl"}).exitCode != 0) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  dir.write("kustomization.yaml", "resources:\n- pod.yaml\ncommonLabels:\n  team: ml\n");
  dir.write("pod.yaml", kFractionalPod);
  const RunResult built = runCommand({"kubectl", "kustomize", dir.str()}, "", "", 120);
  if (built.exitCode != 0) GTEST_SKIP() << "kubectl kustomize failed: " << built.err;
  const RunResult r = runLint({"--format", "json", "-"}, built.out);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(rulesOf(parseJson(r)), ::testing::ElementsAre("gpu-fractional"));
}

TEST(LintCli, ABomAndCrlfLineEndingsKeepPositions) {
  std::string crlf;
  for (char c : std::string(kFractionalPod)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const RunResult r = runLint({"-"}, "\xEF\xBB\xBF" + crlf);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<stdin>:17:25: error:"));
}

TEST(LintCli, TabsInIndentationAreAParseErrorWithAPosition) {
  const RunResult r = runLint({"-"}, "apiVersion: v1\nkind: Pod\nspec:\n\tcontainers: []\n");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.out, HasSubstr("<stdin>:4:1: error: found a tab character used for indentation"));
}

TEST(LintCli, ASeparatorFollowedByTextIsAParseErrorWithAPosition) {
  const RunResult r = runLint({"--format", "json", "-"}, std::string(kGoodPod) + "--- apiVersion: v1\nkind: Pod\n");
  EXPECT_EQ(r.exitCode, 2);
  const json j = parseJson(r);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["line"], 18);
  EXPECT_EQ(j["errors"][0]["column"], 5);  // the text after "---"
  EXPECT_THAT(j["errors"][0]["message"].get<std::string>(), HasSubstr("separator"));
}

TEST(LintCli, NonKubernetesDocumentsAreSkippedQuietly) {
  const RunResult r = runLint({"-"}, "# values.yaml\nreplicas: 2\n---\n- a\n- b\n---\njust a string\n---\n");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");
}

// --- many files in parallel -----------------------------------------------------

TEST(LintCli, OutputIsIdenticalForOneAndFourJobs) {
  TempDir dir;
  for (int i = 0; i < 40; ++i) {
    const std::string n = std::to_string(i);
    dir.write("d" + std::to_string(i % 4) + "/pod-" + n + ".yaml", i % 3 ? kFractionalPod : kGoodPod);
  }
  dir.write("d1/broken.yaml", "a: [\n");
  const std::string examples = sourceDir() + "/manifests/examples";
  for (const char* format : {"text", "json", "sarif", "junit", "github"}) {
    const RunResult one = runLint({"-j1", "--format", format, ".", examples}, "", dir.str());
    const RunResult four = runLint({"-j4", "--format", format, ".", examples}, "", dir.str());
    EXPECT_EQ(one.exitCode, 2) << format;
    EXPECT_EQ(four.exitCode, 2) << format;
    EXPECT_TRUE(one.out == four.out) << format;
    EXPECT_FALSE(one.out.empty()) << format;
  }
}

// --- hostile input ---------------------------------------------------------------

void expectRejectedQuickly(const std::string& input, const std::string& what) {
  const RunResult r = runLint({"--format", "json", "-"}, input, "", 60);
  EXPECT_FALSE(r.timedOut) << what;
  EXPECT_EQ(r.signal, 0) << what << " crashed:\n" << r.err;
  EXPECT_EQ(r.exitCode, 2) << what;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << what;
  ASSERT_EQ(j["errors"].size(), 1u) << what;
  EXPECT_GT(j["errors"][0]["line"].get<int>(), 0) << what;
}

TEST(LintCli, DeepNestingIsAnErrorNotACrash) {
  expectRejectedQuickly("a: " + std::string(100000, '['), "100000 nested flow sequences");
  std::string block;
  for (int i = 0; i < 3000; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "- \n";
  expectRejectedQuickly(block + std::string(3000, ' ') + "x\n", "3000 nested block sequences");
}

TEST(LintCli, AnAliasBombIsAnErrorNotAHang) {
  std::string bomb = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k) bomb += std::string(k ? "," : "") + "*" + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  expectRejectedQuickly("apiVersion: v1\nkind: Pod\n" + bomb, "billion laughs");
}

TEST(LintCli, AFiftyMegabyteScalarIsAnErrorNotAHang) {
  expectRejectedQuickly("apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"" + std::string(50u << 20, 'x') + "\"\n",
                        "a 50 MB scalar");
}

TEST(LintCli, BinaryGarbageIsAnError) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919) % 256);
  const RunResult r = runLint({"-"}, garbage, "", 60);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exitCode, 2);
}

}  // namespace
}  // namespace gpuguard::lint_test
