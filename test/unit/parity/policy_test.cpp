// The policy's patterns (cudaImages, exemptions): RE2, full match, compiled
// once per load, errors that name the key and the entry, linear time on
// hostile input; and the policy document split among its readers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "lint/lint_policy.h"
#include "rules/exemptions.h"
#include "rules/pattern.h"
#include "test/unit/test_support.h"
#include "webhook/admission_policy.h"
#include "yaml/policy_file.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using nlohmann::json;
using testing::judgeYaml;
using testing::rulesHit;

yaml::PolicyDocument policyFile(const std::string& text) { return yaml::parsePolicy(text, ".gpuguard.yaml"); }

std::string policyError(const std::string& text) {
  try {
    policyFile(text);
  } catch (const PolicyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

// --- Pattern: RE2, always the whole string --------------------------------------

TEST(Pattern, MatchesTheWholeStringOnly) {
  const Pattern p("nvidia-.*");
  EXPECT_TRUE(p.fullMatch("nvidia-device-plugin"));
  EXPECT_FALSE(p.fullMatch("my-nvidia-device-plugin")) << "no implicit .* before";
  EXPECT_FALSE(Pattern("kube-system").fullMatch("kube-system-2")) << "no implicit .* after";
  EXPECT_TRUE(Pattern("a|b").fullMatch("b")) << "an alternation is anchored as a whole";
  EXPECT_FALSE(Pattern("a|b").fullMatch("ab"));
}

TEST(Pattern, ANamedGroupGivesTheTextItTook) {
  const Pattern p(R"(registry\.corp/ml/train:(?P<cuda>\d+\.\d+)-.*)");
  EXPECT_TRUE(p.hasGroup("cuda"));
  EXPECT_EQ(p.fullMatchGroup("registry.corp/ml/train:12.4-torch2.3", "cuda"), "12.4");
  EXPECT_EQ(p.fullMatchGroup("registry.corp/ml/train:latest", "cuda"), std::nullopt);
  EXPECT_EQ(Pattern("x(?P<cuda>1)?").fullMatchGroup("x", "cuda"), "") << "a group that took no part";
}

TEST(Pattern, WhatRe2CannotDoIsAnErrorWithItsReason) {
  EXPECT_THROW(Pattern("(a"), PatternError);
  EXPECT_THROW(Pattern(R"((a)\1)"), PatternError) << "no backreferences";
  EXPECT_THROW(Pattern("(?=a)a"), PatternError) << "no lookahead";
  try {
    Pattern("(a");
  } catch (const PatternError& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing )"));
  }
}

// A backtracking engine takes about 2^n steps for (a+)+$ on n a's and a
// mismatch at the end; n = 30 is already minutes. RE2 stays linear.
TEST(Pattern, AHostileInputMatchesInLinearTime) {
  const Pattern evil("(a+)+$");
  const Pattern nested("(a|aa|a?)*b");
  auto seconds = [](const Pattern& p, std::size_t n) {
    const std::string input = std::string(n, 'a') + "!";
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {  // the best of three: a shared machine is noisy
      const auto start = std::chrono::steady_clock::now();
      EXPECT_FALSE(p.fullMatch(input));
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  };
  for (const Pattern* p : {&evil, &nested}) {
    const double small = seconds(*p, 1 << 14);
    const double large = seconds(*p, 1 << 18);  // 16x the input
    EXPECT_LT(large, 2.0) << p->text() << " on 256 Ki characters";
    // Linear: about 16x (quadratic would be 256x); the floor keeps timer
    // resolution on the small run from deciding.
    EXPECT_LT(large, 64 * std::max(small, 1e-4)) << p->text() << ": " << small << " s, then " << large << " s";
  }
}

// --- cudaImages --------------------------------------------------------------------

std::string podRunning(const std::string& image, const std::string& driverMajor) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector:\n"
         "    nvidia.com/cuda.driver-version.major: \"" + driverMajor + "\"\n"
         "  containers:\n  - name: c\n    image: " + image + "\n"
         "    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
}

const char* const kCudaImages = R"(
rules: {"*": off, cuda-driver-too-old: error}
cudaImages:
  - image: 'registry\.corp/ml/train:(?P<cuda>\d+\.\d+)-.*'
  - image: 'registry\.corp/ml/legacy(:.*)?'
    cuda: "11.8"
)";

TEST(CudaImages, ANamedGroupGivesTheCudaVersionOfAnImageTheTableDoesNotKnow) {
  const Policy policy = policyFile(kCudaImages).engine;
  const auto f = judgeYaml(podRunning("registry.corp/ml/train:12.4-torch2.3", "470"), policy);
  ASSERT_THAT(rulesHit(f), ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA 12.4 (policy cudaImages) needs an NVIDIA driver >= 525.60.13"));
  EXPECT_THAT(judgeYaml(podRunning("registry.corp/ml/train:12.4-torch2.3", "550"), policy), IsEmpty());
  const Policy withoutCudaImages = policyFile("rules: {\"*\": off, cuda-driver-too-old: error}").engine;
  EXPECT_THAT(judgeYaml(podRunning("registry.corp/ml/train:12.4-torch2.3", "470"), withoutCudaImages), IsEmpty())
      << "without the policy the tag says nothing";
}

TEST(CudaImages, AFixedVersionServesImagesWhoseTagSaysNothing) {
  const Policy policy = policyFile(kCudaImages).engine;
  EXPECT_THAT(rulesHit(judgeYaml(podRunning("registry.corp/ml/legacy", "440"), policy)),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(rulesHit(judgeYaml(podRunning("registry.corp/ml/legacy:2023", "440"), policy)),
              ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(judgeYaml(podRunning("registry.corp/ml/legacy:2023", "450"), policy), IsEmpty());
  EXPECT_THAT(judgeYaml(podRunning("registry.corp/ml/legacy-new:1", "440"), policy), IsEmpty())
      << "the pattern matches the whole reference, not a prefix";
}

TEST(CudaImages, ComeBeforeTheBuiltInTableAndTheFirstMatchDecides) {
  const Policy policy = policyFile(R"(
rules: {"*": off, cuda-driver-too-old: error}
cudaImages:
  - {image: 'nvidia/cuda:12\..*', cuda: "11.0"}
  - {image: 'nvidia/cuda:.*', cuda: "13.0"}
)").engine;
  // The table says 12.4 (needs 525); the policy's first entry says 11.0 (450).
  EXPECT_THAT(rulesHit(judgeYaml(podRunning("nvidia/cuda:12.4.1-base-ubuntu22.04", "470"), policy)), IsEmpty());
  EXPECT_EQ(policy.cudaVersionOfImage("nvidia/cuda:12.4.1-base-ubuntu22.04"), "11.0");
  EXPECT_EQ(policy.cudaVersionOfImage("nvidia/cuda:11.8.0-base"), "13.0");
  EXPECT_EQ(policy.cudaVersionOfImage("busybox"), std::nullopt);
}

TEST(CudaImages, InvalidEntriesNameTheKeyAndTheEntry) {
  EXPECT_THAT(policyError("cudaImages: [{image: 'a(b'}]"),
              HasSubstr(".gpuguard.yaml: cudaImages[0].image: \"a(b\": invalid pattern: missing )"));
  EXPECT_THAT(policyError("cudaImages: [{image: 'x', cuda: '11.8'}, {image: 'y'}]"),
              HasSubstr("cudaImages[1]: says no CUDA version"));
  EXPECT_THAT(policyError("cudaImages: [{image: 'x(?P<cuda>.*)', cuda: '11.8'}]"),
              HasSubstr("cudaImages[0]: gives the CUDA version twice"));
  EXPECT_THAT(policyError("cudaImages: [{image: 'x', cuda: 'eleven'}]"), HasSubstr("cudaImages[0].cuda: must be a CUDA version"));
  EXPECT_THAT(policyError("cudaImages: [{cuda: '11.8'}]"), HasSubstr("cudaImages[0].image: is required"));
  EXPECT_THAT(policyError("cudaImages: [{image: 'x', cuda: '1', tag: y}]"), HasSubstr("cudaImages[0].tag: unknown key"));
  EXPECT_THAT(policyError("cudaImages: {image: x}"), HasSubstr("cudaImages: must be a list"));
}

// --- exemptions ------------------------------------------------------------------

const char* const kExemptions = R"(
exemptions:
  - namespace: 'sandbox-.*'
    rules: [gpu-missing-driver-pin]
  - image: 'nvcr\.io/nvidia/k8s/dcgm-exporter:.*'
  - kind: 'DaemonSet'
    name: 'nvidia-.*'
)";

// A pod with a GPU and no toleration and no driver pin: two errors.
std::string barePod(const std::string& metadata, const std::string& images = "[busybox]") {
  std::string containers;
  std::size_t i = 0;
  std::string list = images.substr(1, images.size() - 2);
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    containers += "  - {name: c" + std::to_string(i++) + ", image: \"" + list.substr(start, comma - start) +
                  "\", resources: {limits: {nvidia.com/gpu: 1}}}\n";
    start = comma + 1;
  }
  return "apiVersion: v1\nkind: Pod\nmetadata: " + metadata + "\nspec:\n  containers:\n" + containers;
}

std::vector<std::string> judgedWith(const std::string& yaml, const Exemptions& exemptions,
                                    std::string_view namespaceName = "") {
  const json object = yaml::parseStream(yaml).documents.at(0).value;
  JudgeOptions options;
  options.exemptions = &exemptions;
  options.namespaceName = namespaceName;
  return rulesHit(judge(object, Policy{}, options));
}

TEST(Exemptions, ANamespaceEntrySkipsOnlyItsRulesThere) {
  const Exemptions e = policyFile(kExemptions).exemptions;
  EXPECT_THAT(judgedWith(barePod("{name: p, namespace: sandbox-ml}"), e), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(judgedWith(barePod("{name: p, namespace: prod}"), e),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_THAT(judgedWith(barePod("{name: p, namespace: my-sandbox-ml}"), e),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"))
      << "full match: 'sandbox-.*' is not found inside another name";
}

TEST(Exemptions, TheCallersNamespaceWinsOverTheObjects) {
  // The webhook passes the request's namespace: a pod created with no
  // metadata.namespace is still in one.
  const Exemptions e = policyFile(kExemptions).exemptions;
  EXPECT_THAT(judgedWith(barePod("{name: p}"), e, "sandbox-a"), ElementsAre("gpu-missing-toleration"));
}

TEST(Exemptions, AnImageEntryNeedsEveryContainerToRunAMatchingImage) {
  const Exemptions e = policyFile(kExemptions).exemptions;
  EXPECT_THAT(judgedWith(barePod("{name: p}", "[nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04]"), e), IsEmpty());
  // A pod author cannot borrow the exemption by adding that container.
  EXPECT_THAT(judgedWith(barePod("{name: p}", "[nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5,evil/miner:1]"), e),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
}

TEST(Exemptions, EveryFieldOfAnEntryMustMatch) {
  const Exemptions e = policyFile(kExemptions).exemptions;
  const std::string daemonSet =
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: NAME}\nspec:\n  template:\n    spec:\n"
      "      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
  auto named = [&](const std::string& name) {
    std::string y = daemonSet;
    return y.replace(y.find("NAME"), 4, name);
  };
  EXPECT_THAT(judgedWith(named("nvidia-dcgm"), e), IsEmpty());
  EXPECT_THAT(judgedWith(named("dcgm"), e), Not(IsEmpty())) << "the kind alone is not enough";
  EXPECT_THAT(judgedWith(barePod("{name: nvidia-x}"), e), Not(IsEmpty())) << "the name alone is not enough";
}

TEST(Exemptions, AGeneratedNameIsMatchedByItsPrefix) {
  const Exemptions e = policyFile("exemptions: [{name: 'nvidia-device-plugin-.*'}]").exemptions;
  EXPECT_THAT(judgedWith(barePod("{generateName: nvidia-device-plugin-}"), e), IsEmpty());
}

TEST(Exemptions, InvalidEntriesNameTheKeyAndTheEntry) {
  EXPECT_THAT(policyError("exemptions: [{namespace: a}, {image: '[z-a]'}]"),
              HasSubstr(".gpuguard.yaml: exemptions[1].image: \"[z-a]\": invalid pattern: invalid character class range"));
  EXPECT_THAT(policyError("exemptions: [{rules: [gpu-fractional]}]"), HasSubstr("exemptions[0]: names no object"));
  EXPECT_THAT(policyError("exemptions: [{kind: Pod, rules: [gpu-fractionl]}]"),
              HasSubstr("exemptions[0].rules[0]: unknown rule id \"gpu-fractionl\""));
  EXPECT_THAT(policyError("exemptions: [{kind: Pod, rules: []}]"), HasSubstr("exemptions[0].rules: must be a non-empty list"));
  EXPECT_THAT(policyError("exemptions: [{kind: Pod, namespaces: x}]"), HasSubstr("exemptions[0].namespaces: unknown key"));
  EXPECT_THAT(policyError("exemptions: [{kind: 7}]"), HasSubstr("exemptions[0].kind: must be a string"));
}

// --- the document: one schema, split among its readers ----------------------------

TEST(PolicyDocument, EachKeyGoesToItsReader) {
  const yaml::PolicyDocument d = policyFile(R"(
rules: {gpu-fractional: warning}
maxGpusPerNode: 4
allowSuppressions: false
exemptNamespaces: [kube-system]
include: ["**/*.yaml"]
exclude: ["charts/**"]
exemptions: [{kind: DaemonSet}]
)");
  EXPECT_EQ(d.engine.maxGpusPerNode, 4);
  EXPECT_EQ(d.engine.severityOf("gpu-fractional", Severity::Error), Severity::Warning);
  EXPECT_EQ(d.allowSuppressions, false);
  EXPECT_THAT(d.exemptNamespaces, ElementsAre("kube-system"));
  EXPECT_THAT(d.include, ElementsAre("**/*.yaml"));
  EXPECT_THAT(d.exclude, ElementsAre("charts/**"));
  EXPECT_EQ(d.exemptions.size(), 1u);
}

TEST(PolicyDocument, AnUnknownKeyListsEveryKnownOne) {
  const std::string e = policyError("exemptNamespace: [kube-system]");
  EXPECT_THAT(e, HasSubstr(".gpuguard.yaml: exemptNamespace: unknown key (known: rules, "));
  for (const char* key : {"cudaImages", "exemptions", "allowSuppressions", "exemptNamespaces", "include", "exclude"}) {
    EXPECT_THAT(e, HasSubstr(key));
  }
}

TEST(PolicyDocument, EachFrontEndDecidesWhatAnUnsetAllowSuppressionsMeans) {
  const yaml::PolicyDocument unset = policyFile("maxGpusPerNode: 8");
  EXPECT_TRUE(lint::LintPolicy::from(unset).allowSuppressions) << "a repository reviews its annotations";
  EXPECT_FALSE(webhook::AdmissionPolicy::from(unset).allowSuppressions) << "any pod author can write one";
  EXPECT_FALSE(lint::LintPolicy::from(policyFile("allowSuppressions: false")).allowSuppressions);
  EXPECT_TRUE(webhook::AdmissionPolicy::from(policyFile("allowSuppressions: true")).allowSuppressions);
}

}  // namespace
}  // namespace gpuguard
