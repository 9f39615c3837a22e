// Properties over the real-world corpus (../shared/corpus/real: 193 GPU
// manifests from 31 public repositories, see its README), checked for every
// Kubernetes object in it:
//  * gpuguard-lint and gpuguard-webhook decide the same: the linter front end
//    (lint::lintText: YAML 1.1 loading with written-text hints, then judge)
//    and the webhook (webhook::review on an AdmissionReview v1 CREATE
//    wrapping the same object as JSON) agree on allowed/denied, on the rules
//    that deny and on the rules that warn, under several policies;
//  * the engine's verdict survives a JSON round trip (what the API server
//    sends is the object re-serialised);
//  * an UPDATE that changes nothing is never denied, and DELETE is allowed;
//  * every reply is valid JSON whose response.uid echoes the request.
// Quantity properties (parse -> canonical -> parse, order against a big
// decimal reference) live in quantity_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint/catalog.h"
#include "lint/lint_file.h"
#include "rules/engine.h"
#include "webhook/admission.h"
#include "yaml/policy_file.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path corpusDir() { return fs::path(GPUGUARD_SOURCE_DIR) / ".." / "shared" / "corpus" / "real"; }

std::vector<fs::path> corpusFiles() {
  std::vector<fs::path> files;
  if (!fs::is_directory(corpusDir())) return files;
  for (const auto& e : fs::recursive_directory_iterator(corpusDir())) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml") &&
        e.path().string().find("/_licenses/") == std::string::npos) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Decided {
  bool denied = false;
  std::vector<std::string> errors;    // rule ids that deny, sorted
  std::vector<std::string> warnings;  // rule ids that warn, sorted
};

bool operator==(const Decided& a, const Decided& b) {
  return a.denied == b.denied && a.errors == b.errors && a.warnings == b.warnings;
}

std::string show(const Decided& d) {
  std::string s = d.denied ? "denied; errors:" : "allowed; errors:";
  for (const auto& e : d.errors) s += " " + e;
  s += "; warnings:";
  for (const auto& w : d.warnings) s += " " + w;
  return s;
}

Decided fromFindings(const std::vector<Finding>& findings) {
  Decided d;
  for (const Finding& f : findings) {
    if (f.suppressed) continue;
    (f.severity == Severity::Error ? d.errors : d.warnings).push_back(f.rule);
  }
  std::sort(d.errors.begin(), d.errors.end());
  std::sort(d.warnings.begin(), d.warnings.end());
  d.denied = !d.errors.empty();
  return d;
}

std::string namespaceOf(const json& object) {
  const auto m = object.find("metadata");
  if (m != object.end() && m->is_object()) {
    const auto ns = m->find("namespace");
    if (ns != m->end() && ns->is_string()) return ns->get<std::string>();
  }
  return "default";
}

// An AdmissionReview v1 as kube-apiserver sends it for `operation`.
std::string reviewBody(const json& object, const std::string& operation, const std::string& uid) {
  const std::string kind = object.value("kind", "");
  const std::string apiVersion = object.value("apiVersion", "");
  const auto slash = apiVersion.find('/');
  const std::string group = slash == std::string::npos ? "" : apiVersion.substr(0, slash);
  const std::string version = slash == std::string::npos ? apiVersion : apiVersion.substr(slash + 1);
  json name = nullptr;
  if (object.contains("metadata") && object["metadata"].is_object() && object["metadata"].contains("name")) {
    name = object["metadata"]["name"];
  }
  json request = {
      {"uid", uid},
      {"kind", {{"group", group}, {"version", version}, {"kind", kind}}},
      {"resource", {{"group", group}, {"version", version}, {"resource", "objects"}}},
      {"requestKind", {{"group", group}, {"version", version}, {"kind", kind}}},
      {"namespace", namespaceOf(object)},
      {"operation", operation},
      {"userInfo", {{"username", "property-test"}, {"groups", {"system:authenticated"}}}},
      {"object", operation == "DELETE" ? json(nullptr) : object},
      {"oldObject", operation == "CREATE" ? json(nullptr) : object},
      {"dryRun", false},
      {"options", {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}}},
  };
  if (name.is_string()) request["name"] = name;
  return json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}}.dump();
}

struct WebhookReply {
  webhook::AdmissionResult result;
  json body;
};

WebhookReply review(const json& object, const std::string& operation, const webhook::AdmissionPolicy& policy) {
  const std::string uid = "3e0c2b64-0000-4000-8000-" + std::to_string(std::hash<std::string>{}(object.dump()) % 1000000000000ull);
  WebhookReply r{webhook::review(reviewBody(object, operation, uid), policy), nullptr};
  r.body = json::parse(r.result.body, nullptr, false);
  EXPECT_FALSE(r.body.is_discarded()) << r.result.body;
  if (r.result.httpStatus == 200) {
    EXPECT_EQ(r.body["response"]["uid"], uid);
    EXPECT_EQ(r.body["response"]["allowed"].get<bool>(), r.result.decision == webhook::Decision::Allowed);
  }
  return r;
}

Decided fromReply(const WebhookReply& r) {
  Decided d;
  for (const webhook::RuleHit& h : r.result.hits) (h.denied ? d.errors : d.warnings).push_back(h.rule);
  std::sort(d.errors.begin(), d.errors.end());
  std::sort(d.warnings.begin(), d.warnings.end());
  d.denied = r.result.decision == webhook::Decision::Denied;
  return d;
}

// The policy files both front ends run with, each building its own policy
// from the same document; suppressions are explicit, since that is the one
// default in which the front ends differ.
std::vector<std::pair<std::string, yaml::PolicyDocument>> policies() {
  std::vector<std::pair<std::string, yaml::PolicyDocument>> out;
  for (const char* text : {"allowSuppressions: true", "allowSuppressions: false",
                           "allowSuppressions: false\nrules: {'*': warning}",
                           "allowSuppressions: false\nmaxGpusPerNode: 1\nassumeExtendedResourceToleration: true",
                           "allowSuppressions: false\nexemptions: [{kind: Deployment, rules: [gpu-missing-toleration]}, "
                           "{image: 'nvcr\\.io/nvidia/.*'}]"}) {
    out.emplace_back(text, yaml::parsePolicy(text, "policy.yaml"));
  }
  return out;
}

struct CorpusDocument {
  fs::path file;
  std::string text;
  std::size_t index;
  json value;
};

// Every Kubernetes object in the corpus, as the linter would judge it.
const std::vector<CorpusDocument>& corpusDocuments() {
  static const std::vector<CorpusDocument> docs = [] {
    std::vector<CorpusDocument> out;
    for (const fs::path& file : corpusFiles()) {
      const std::string text = readFile(file);
      const yaml::ParseResult parsed = yaml::parseStream(text);
      for (const yaml::Document& d : parsed.documents) {
        if (lint::isKubernetesObject(d.value)) out.push_back({file, text, d.index, d.value});
      }
    }
    return out;
  }();
  return docs;
}

TEST(CorpusProperty, LinterAndWebhookDecideTheSameForEveryRealDocument) {
  if (corpusFiles().empty()) GTEST_SKIP() << "no corpus at " << corpusDir();
  std::size_t compared = 0, denied = 0;
  for (const auto& [policyName, document] : policies()) {
    const lint::LintPolicy lintPolicy = lint::LintPolicy::from(document);
    const webhook::AdmissionPolicy admissionPolicy = webhook::AdmissionPolicy::from(document);
    for (const fs::path& file : corpusFiles()) {
      const std::string text = readFile(file);
      // The linter as the CLI runs it, but knowing of each document only what
      // the webhook knows: itself, not the DRA objects the rest of the file
      // defines (what the linter makes of those: lint_input_facts_test).
      lint::LintOptions alone;
      alone.eachDocumentAlone = true;
      const lint::FileReport report = lint::lintText(file.string(), text, lintPolicy, alone);
      const yaml::ParseResult parsed = yaml::parseStream(text);
      for (const yaml::Document& doc : parsed.documents) {
        if (!lint::isKubernetesObject(doc.value)) continue;
        // A pod spec without an image (a Spark pod template, an operator's
        // pod spec) is judged whole by both: compared like any other.
        std::vector<Finding> lintFindings;
        for (const lint::Located& l : report.findings) {
          // The linter's checks of how the YAML is written (duplicate-key,
          // ignored-content) have no counterpart: the webhook never sees YAML.
          const lint::CatalogEntry* entry = lint::findEntry(l.finding.rule);
          const bool sourceCheck = entry && entry->source == lint::Source::BuiltInCheck;
          if (l.document == doc.index && !sourceCheck) lintFindings.push_back(l.finding);
        }
        const Decided lint = fromFindings(lintFindings);
        const WebhookReply reply = review(doc.value, "CREATE", admissionPolicy);
        ASSERT_EQ(reply.result.httpStatus, 200) << file << " document " << doc.index << ": " << reply.result.body;
        const Decided webhook = fromReply(reply);
        EXPECT_TRUE(lint == webhook) << policyName << ": " << file.lexically_relative(corpusDir()) << " document "
                                     << doc.index << "\n  lint:    " << show(lint) << "\n  webhook: " << show(webhook);
        ++compared;
        denied += webhook.denied;
      }
    }
  }
  const std::size_t perPolicy = compared / policies().size();
  EXPECT_GE(perPolicy, 150u) << "the corpus should hold well over 150 Kubernetes objects";
  EXPECT_GT(denied, 0u) << "some real documents should be denied";
  RecordProperty("documents", static_cast<int>(perPolicy));
  RecordProperty("denials", static_cast<int>(denied));
}

TEST(CorpusProperty, VerdictSurvivesAJsonRoundTrip) {
  if (corpusFiles().empty()) GTEST_SKIP() << "no corpus at " << corpusDir();
  const Policy policy;
  for (const CorpusDocument& d : corpusDocuments()) {
    const json again = json::parse(d.value.dump());
    ASSERT_EQ(again, d.value);
    const std::vector<Finding> a = judge(d.value, policy);
    const std::vector<Finding> b = judge(again, policy);
    ASSERT_EQ(a.size(), b.size()) << d.file << " document " << d.index;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].rule, b[i].rule) << d.file;
      EXPECT_EQ(a[i].pointer(), b[i].pointer()) << d.file;
      EXPECT_EQ(a[i].severity, b[i].severity) << d.file;
      EXPECT_EQ(a[i].message(), b[i].message()) << d.file;
    }
  }
}

TEST(CorpusProperty, AnUpdateThatChangesNothingIsNeverDeniedAndDeleteIsAllowed) {
  if (corpusFiles().empty()) GTEST_SKIP() << "no corpus at " << corpusDir();
  const webhook::AdmissionPolicy policy;
  for (const CorpusDocument& d : corpusDocuments()) {
    const WebhookReply update = review(d.value, "UPDATE", policy);
    EXPECT_EQ(update.result.httpStatus, 200) << d.file;
    EXPECT_EQ(update.result.decision, webhook::Decision::Allowed)
        << d.file << " document " << d.index << ": " << update.result.body;
    const WebhookReply del = review(d.value, "DELETE", policy);
    EXPECT_EQ(del.result.decision, webhook::Decision::Allowed) << d.file;
  }
}

TEST(CorpusProperty, EveryFindingLocatesInItsFile) {
  if (corpusFiles().empty()) GTEST_SKIP() << "no corpus at " << corpusDir();
  for (const fs::path& file : corpusFiles()) {
    const lint::FileReport report = lint::lintText(file.string(), readFile(file), lint::LintPolicy{});
    for (const lint::Located& l : report.findings) {
      EXPECT_GE(l.line, 1) << file << ": " << l.finding.rule << " at " << l.finding.pointer();
      EXPECT_GE(l.column, 1) << file << ": " << l.finding.rule << " at " << l.finding.pointer();
    }
  }
}

}  // namespace
}  // namespace gpuguard
