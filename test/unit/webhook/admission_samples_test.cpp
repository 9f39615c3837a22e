// The admission decision, continued (see admission_test.cpp): real requests
// captured from kube-apiserver, and the webhook deciding like gpuguard-lint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <thread>
#include <vector>

#include "test/unit/webhook/admission_test_support.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"
#include "webhook/admission.h"
#include "lint/lint_file.h"
#include "yaml/policy_file.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using gpuguard::testing::onlyRules;
using namespace admission_test;

// ---------------------------------------------------------------------------
// Real requests captured from kube-apiserver v1.20.2 (test/data/admission-samples).
// ---------------------------------------------------------------------------

std::filesystem::path samplesDir() {
  return std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test" / "data" / "admission-samples";
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AdmissionSamples, RealApiServerRequestsGetTheExpectedDecision) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(samplesDir())) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(name);
    ++seen;
    const std::string body = readFile(entry.path());
    const json request = json::parse(body)["request"];
    const Reply r = reviewRaw(body);
    EXPECT_EQ(r.result.httpStatus, 200);
    EXPECT_EQ(r.body["apiVersion"], "admission.k8s.io/v1");
    EXPECT_EQ(r.response()["uid"], request["uid"]);
    EXPECT_EQ(r.result.operation, request["operation"]);
    EXPECT_EQ(r.result.kind, request["kind"]["kind"]);
    EXPECT_EQ(r.result.namespaceName, "default");
    EXPECT_EQ(r.result.dryRun, request["dryRun"].get<bool>());
    const std::string op = request["operation"];
    if (op == "DELETE") {
      EXPECT_TRUE(r.allowed());
    } else if (op == "UPDATE") {
      // Admitted before (no webhook then): what they already had is a warning.
      EXPECT_TRUE(r.allowed());
      EXPECT_THAT(r.warnings(), Contains(StartsWith("gpu-missing-toleration: ")));
    } else {
      // A GPU pod or Deployment with no toleration (denied) and no driver pin (a warning).
      EXPECT_FALSE(r.allowed());
      EXPECT_THAT(r.message(), HasSubstr("tolerations: Required value: no toleration for the GPU node taint"));
      EXPECT_THAT(r.rules(true), Contains("gpu-missing-toleration"));
      EXPECT_THAT(r.rules(false), Contains("gpu-missing-driver-pin"));
    }
  }
  EXPECT_EQ(seen, 15);
}

TEST(AdmissionSamples, ThePrunedParseJudgesLikeAFullParse) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  const AdmissionPolicy policy;
  for (const auto& entry : std::filesystem::directory_iterator(samplesDir())) {
    if (entry.path().extension() != ".json") continue;  // INDEX.md describes them
    SCOPED_TRACE(entry.path().filename().string());
    const std::string body = readFile(entry.path());
    const json request = json::parse(body)["request"];
    if (request["operation"] != "CREATE") continue;
    std::vector<std::string> full;
    for (const Finding& f : judge(request["object"], policy.engine)) full.push_back(f.rule + " " + f.field());
    std::vector<std::string> webhook;
    const Reply r = reviewRaw(body, policy);
    for (const RuleHit& h : r.result.hits) webhook.push_back(h.rule);
    ASSERT_EQ(full.size(), webhook.size());
    for (std::size_t i = 0; i < full.size(); ++i) EXPECT_THAT(full[i], StartsWith(webhook[i] + " "));
  }
}

TEST(AdmissionSamples, EveryTruncationOfARealRequestIsA400) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  const std::string body = readFile(samplesDir() / "01-CREATE-Pod-gpu-pod.json");
  ASSERT_FALSE(body.empty());
  for (std::size_t len = 0; len < body.size(); len += 7) {
    const AdmissionResult r = review(std::string_view(body).substr(0, len), AdmissionPolicy{});
    ASSERT_EQ(r.httpStatus, 400) << "length " << len;
    ASSERT_TRUE(json::accept(r.body));
  }
}

// Each thread reads a review into the tree its previous review left (see
// ParsedReview): the answer must never depend on what came before. Every
// sample, a malformed body and one too large to keep (over 64 KiB), reviewed
// on one thread in order and then backwards, are answered byte for byte as
// each is on a thread of its own.
TEST(AdmissionSamples, ReviewsOnOneThreadAreAnsweredAsIfEachCameAlone) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  std::vector<std::string> bodies;
  for (const auto& entry : std::filesystem::directory_iterator(samplesDir())) {
    if (entry.path().extension() == ".json") bodies.push_back(readFile(entry.path()));
  }
  std::sort(bodies.begin(), bodies.end());
  json large = json::parse(bodies.front());
  large["request"]["object"]["metadata"]["annotations"]["padding"] = std::string(70'000, 'x');
  bodies.insert(bodies.begin() + 3, large.dump());
  bodies.insert(bodies.begin() + 5, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":)");
  std::vector<std::string> alone;
  for (const std::string& body : bodies) {
    std::thread([&] { alone.push_back(review(body, AdmissionPolicy{}).body); }).join();
  }
  std::vector<std::size_t> order(bodies.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::size_t> backwards(order.rbegin(), order.rend());
  order.insert(order.end(), backwards.begin(), backwards.end());
  std::thread([&] {
    for (const std::size_t i : order) EXPECT_EQ(review(bodies[i], AdmissionPolicy{}).body, alone[i]) << "body " << i;
  }).join();
}

// With cluster facts a thread keeps the reach of the pods it judged
// (rules/reach_cache.h) and gives it to a later object that is the same but
// for its identity. Every sample, a replica of each (another name and uid)
// and of each Pod one pinned to the tainted driver, reviewed with one cache
// in order and then backwards, are answered byte for byte as without it,
// and the replicas did use what was kept.
TEST(AdmissionSamples, AReachKeptFromEarlierReviewsChangesNoAnswer) {
  if (!std::filesystem::is_directory(samplesDir())) GTEST_SKIP() << "no samples at " << samplesDir();
  using gpuguard::testing::gpuNode;
  const std::string machine = "cpu: \"64\", memory: 512Gi, pods: \"110\"";
  const auto cluster = gpuguard::testing::clusterOf(
      gpuNode({.name = "gpu-550", .driver = "550", .taints = gpuguard::testing::kGpuTaint, .machine = machine}) +
      gpuNode({.name = "gpu-570", .driver = "570", .gpus = "nvidia.com/gpu: \"4\"", .machine = machine}));
  std::vector<std::string> bodies;
  for (const auto& entry : std::filesystem::directory_iterator(samplesDir())) {
    if (entry.path().extension() != ".json") continue;
    bodies.push_back(readFile(entry.path()));
    json replica = json::parse(bodies.back());
    json& metadata = replica["request"]["object"]["metadata"];
    if (!metadata.is_object()) continue;
    metadata["name"] = "replica-" + metadata.value("name", std::string());
    metadata["uid"] = "0f0f0f0f-0000-4000-8000-000000000001";
    bodies.push_back(replica.dump());
    // The same pod reaching only the tainted 550 node: a reach of its own.
    json& spec = replica["request"]["object"]["spec"];
    if (!spec.is_object() || !spec.contains("containers")) continue;
    spec["nodeSelector"]["nvidia.com/cuda.driver-version.major"] = "550";
    bodies.push_back(replica.dump());
  }
  std::vector<std::size_t> order(bodies.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<std::size_t> backwards(order.rbegin(), order.rend());
  order.insert(order.end(), backwards.begin(), backwards.end());
  const AdmissionPolicy policy;
  ReachCache cache;
  for (const std::size_t i : order) {
    EXPECT_EQ(review(bodies[i], policy, {}, FactsInUse{cluster.get(), {}, &cache}).body,
              review(bodies[i], policy, {}, FactsInUse{cluster.get(), {}, nullptr}).body)
        << "body " << i;
  }
  EXPECT_GT(cache.hits(), bodies.size() / 4) << "replicas and the second pass read what was kept";
}

// ---------------------------------------------------------------------------
// Decision parity: gpuguard-lint and the webhook decide the same for the
// same object, with the same engine and the same policy.
// ---------------------------------------------------------------------------

struct Decided {
  bool denied = false;
  std::vector<std::string> errors;    // rule ids that deny, in order
  std::vector<std::string> warnings;  // rule ids that warn, in order
};

Decided lintSide(const std::vector<Finding>& findings) {
  Decided d;
  for (const Finding& f : findings) {
    if (f.suppressed) continue;
    (f.severity == Severity::Error ? d.errors : d.warnings).push_back(f.rule);
  }
  d.denied = !d.errors.empty();
  return d;
}

Decided webhookSide(const json& object, const AdmissionPolicy& policy) {
  const Reply r = reviewRaw(reviewBody(object), policy);
  Decided d;
  d.denied = !r.allowed();
  d.errors = r.rules(true);
  d.warnings = r.rules(false);
  return d;
}

// Findings the linter makes only because it reads the YAML text (an
// unquoted 010 is the octal 8, yes is a boolean): an AdmissionReview carries
// JSON, so the webhook cannot make them, and for built-in kinds the API
// server rejects such values at decode, before any webhook. They are removed
// from the lint side, and only these rules may have them.
std::vector<Finding> withoutSourceTextFindings(const std::vector<Finding>& lintFindings, const json& object,
                                               const lint::LintPolicy& policy) {
  std::vector<std::string> plain;
  for (const Finding& f : judge(object, policy.engine, JudgeOptions{.exemptions = &policy.exemptions})) {
    plain.push_back(f.rule + "\n" + f.field());
  }
  std::vector<Finding> out;
  for (const Finding& f : lintFindings) {
    auto it = std::find(plain.begin(), plain.end(), f.rule + "\n" + f.field());
    if (it != plain.end()) {
      plain.erase(it);
      out.push_back(f);
    } else {
      EXPECT_THAT(f.rule, ::testing::AnyOf("gpu-label-value", "label-value-not-string"))
          << "only the YAML-text rules may depend on how a value was written: " << f.fieldError();
    }
  }
  return out;
}

void expectParity(const std::string& what, const Decided& lint, const Decided& webhook) {
  EXPECT_EQ(lint.denied, webhook.denied) << what;
  EXPECT_EQ(lint.errors, webhook.errors) << what;
  EXPECT_EQ(lint.warnings, webhook.warnings) << what;
}

// Policy files both front ends read, each front end building its own
// policy from the same document. Suppressions are set explicitly: the two
// front ends only differ in what an unset allowSuppressions means.
std::vector<std::pair<std::string, yaml::PolicyDocument>> parityPolicies() {
  std::vector<std::pair<std::string, yaml::PolicyDocument>> out;
  for (const char* text : {
           "allowSuppressions: true",
           "allowSuppressions: false",
           "allowSuppressions: false\nrules: {gpu-missing-driver-pin: warning, gpu-missing-toleration: warning}",
           "allowSuppressions: true\nexemptions: [{kind: 'StatefulSet|JobSet', rules: [gpu-fractional, gpu-invalid-quantity]}, "
           "{image: 'registry\\.corp/.*'}]",
       }) {
    out.emplace_back(text, yaml::parsePolicy(text, "parity.yaml"));
  }
  return out;
}

// The findings gpuguard-lint's judging makes for a one-document text (as a
// whole object: the webhook never receives a fragment).
std::vector<Finding> lintFindings(const std::string& text, const lint::LintPolicy& policy) {
  const yaml::ParseResult parsed = yaml::parseStream(text);
  EXPECT_EQ(parsed.documents.size(), 1u);
  return parsed.documents.empty() ? std::vector<Finding>{} : lint::judgeDocument(parsed.documents.front(), policy);
}

const char* const kParityCases[] = {
    kGoodPod,
    kBarePod,
    kSuppressedPod,
    R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: [{operator: Exists}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: ["534"]}]
  containers:
  - {name: a, resources: {limits: {nvidia.com/gpu: 2}}}
  initContainers:
  - {name: i, resources: {requests: {nvidia.com/gpu: 1}}}
)",
    R"(
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  template:
    metadata:
      annotations: {ignore.gpuguard.io/gpu-fractional: "testing"}
    spec:
      containers:
      - {name: a, resources: {limits: {nvidia.com/gpu: 1.5, nvidia.com/mig-1g.10gb: "2"}, requests: {nvidia.com/gpu: 1}}}
)",
    R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, labels: {team: 7}}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            nodeSelector: {nvidia.com/cuda.driver-version.major: 550}
            containers:
            - {name: w, resources: {limits: {nvidia.com/gpu: "-1"}}}
)",
    R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Equal, value: "true", effect: NoSchedule}]
      containers:
      - {name: a, resources: {limits: {nvidia.com/gpu: "1 GPU"}}}
)",
};

TEST(DecisionParity, InlineCasesDecideTheSameInLintAndWebhook) {
  for (const auto& [policyName, document] : parityPolicies()) {
    const lint::LintPolicy lintPolicy = lint::LintPolicy::from(document);
    const AdmissionPolicy admissionPolicy = AdmissionPolicy::from(document);
    for (const char* yaml : kParityCases) {
      const json object = objectFromYaml(yaml);
      const Decided lint = lintSide(withoutSourceTextFindings(lintFindings(yaml, lintPolicy), object, lintPolicy));
      const Decided webhook = webhookSide(object, admissionPolicy);
      expectParity(policyName + " on:" + yaml, lint, webhook);
    }
  }
}

TEST(DecisionParity, TheEndToEndCasesDecideTheSameInLintAndWebhook) {
  // The manifests the e2e suite applies to a real API server, through the
  // real gpuguard-lint front end (lintText) and through the webhook.
  const std::filesystem::path root = std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test" / "e2e" / "cases";
  std::size_t documents = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = readFile(entry.path());
    for (const auto& [policyName, document] : parityPolicies()) {
      const lint::LintPolicy lintPolicy = lint::LintPolicy::from(document);
      const AdmissionPolicy admissionPolicy = AdmissionPolicy::from(document);
      lint::LintOptions alone;  // the webhook sees one object, not the DRA objects beside it
      alone.eachDocumentAlone = true;
      const lint::FileReport report = lint::lintText(entry.path().string(), text, lintPolicy, alone);
      const yaml::ParseResult parsed = yaml::parseStream(text);
      std::size_t judged = 0;
      for (const yaml::Document& doc : parsed.documents) {
        if (!doc.value.is_object() || !doc.value.contains("kind") || !doc.value.contains("apiVersion")) continue;
        ++judged;
        std::vector<Finding> lintFindings;
        for (const lint::Located& l : report.findings) {
          if (l.document == doc.index) lintFindings.push_back(l.finding);
        }
        // lintText sorts by line; the webhook reports in engine order.
        Decided lint = lintSide(withoutSourceTextFindings(lintFindings, doc.value, lintPolicy));
        Decided webhook = webhookSide(doc.value, admissionPolicy);
        std::sort(lint.errors.begin(), lint.errors.end());
        std::sort(lint.warnings.begin(), lint.warnings.end());
        std::sort(webhook.errors.begin(), webhook.errors.end());
        std::sort(webhook.warnings.begin(), webhook.warnings.end());
        expectParity(policyName + " on " + entry.path().string() + " document " + std::to_string(doc.index), lint,
                     webhook);
      }
      EXPECT_EQ(judged, report.documents) << entry.path();
      if (policyName == parityPolicies().front().first) documents += judged;
    }
  }
  EXPECT_GE(documents, 13u);
}

}  // namespace
}  // namespace gpuguard::webhook
