// Helpers that let rule tests read like a specification:
//   EXPECT_THAT(rulesHit(judgeYaml(R"(...)")), ElementsAre("gpu-fractional"));
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "rules/engine.h"
#include "rules/registry.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::testing {

// What the YAML loader saw of how each scalar was written (010 vs 8), as
// gpuguard-lint gives it to the rules.
class YamlHints final : public SourceHints {
 public:
  explicit YamlHints(const yaml::SourceMap& map) : map_(map) {}
  const std::string* writtenText(std::string_view pointer) const override {
    const yaml::NodeOrigin* o = map_.find(pointer);
    return o && o->plainScalar ? &o->writtenText : nullptr;
  }

 private:
  const yaml::SourceMap& map_;
};

// The documents of a YAML stream the way gpuguard-lint reads them; a test's
// YAML that does not parse is the test's own mistake.
inline yaml::ParseResult parsedYaml(const std::string& text) {
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error) throw std::runtime_error("test YAML does not parse: " + parsed.error->message);
  return parsed;
}

// Parses one YAML document the way gpuguard-lint does (YAML 1.1 scalars,
// with written-text hints) and judges it.
inline std::vector<Finding> judgeYaml(const std::string& text, const Policy& policy = {}) {
  const yaml::ParseResult parsed = parsedYaml(text);
  if (parsed.documents.size() != 1) throw std::runtime_error("test YAML must hold one document");
  const YamlHints hints(parsed.documents.front().sources);
  return judge(parsed.documents.front().value, policy, JudgeOptions{&hints});
}

// Judges every document of a YAML stream with what all of them define
// (DeviceClasses, claim templates) known to each, and the cluster's facts when
// given; with `hints`, each document with its written-text hints. The
// findings of all documents, in document order.
inline std::vector<Finding> judgeDocuments(const std::string& text, const Policy& policy,
                                           const ClusterFacts* cluster, bool hints) {
  const yaml::ParseResult parsed = parsedYaml(text);
  InputFacts facts;
  for (const yaml::Document& doc : parsed.documents) facts.add(doc.value);
  std::vector<Finding> all;
  for (const yaml::Document& doc : parsed.documents) {
    const YamlHints written(doc.sources);
    JudgeOptions options;
    if (hints) options.hints = &written;
    options.facts = &facts;
    options.cluster = cluster;
    for (Finding& f : judge(doc.value, policy, options)) all.push_back(std::move(f));
  }
  return all;
}

// Judges a YAML stream as gpuguard-lint judges one file: what all documents
// define (DeviceClasses, claim templates) is known to each, each document with
// its written-text hints, and with the cluster's facts when given. The
// findings of all documents, in document order.
inline std::vector<Finding> judgeFile(const std::string& text, const Policy& policy = {},
                                      const ClusterFacts* cluster = nullptr) {
  return judgeDocuments(text, policy, cluster, true);
}

// Judges every document of a YAML stream as the linter judges one input:
// what all of them define (DeviceClasses, claim templates) is known to each.
// The findings of all documents, in document order.
inline std::vector<Finding> judgeInput(const std::string& text, const Policy& policy = {}) {
  return judgeDocuments(text, policy, nullptr, false);
}

// The cluster facts of a YAML stream of Nodes, NodePools, Namespaces and DRA
// objects, as a snapshot file gives them (rules/cluster_facts.h).
inline std::shared_ptr<const ClusterFacts> clusterOf(const std::string& text) {
  const yaml::ParseResult parsed = parsedYaml(text);
  ClusterFactsBuilder builder;
  builder.setSource("snapshot test");
  builder.markListed(FactKind::Node);
  for (const yaml::Document& doc : parsed.documents) builder.add(doc.value);
  return builder.build();
}

// Judges every document of `text` with the cluster facts of `cluster`
// (clusterOf). The findings of all documents, in document order.
inline std::vector<Finding> judgeWithCluster(const std::string& text, const ClusterFacts& cluster,
                                             const Policy& policy = {}) {
  return judgeDocuments(text, policy, &cluster, false);
}

// The rule ids of the findings, in order (suppressed ones excluded).
inline std::vector<std::string> rulesHit(const std::vector<Finding>& findings) {
  std::vector<std::string> ids;
  for (const Finding& f : findings) {
    if (!f.suppressed) ids.push_back(f.rule);
  }
  return ids;
}

// Only the findings of one rule.
inline std::vector<Finding> only(const std::vector<Finding>& findings, const std::string& rule) {
  std::vector<Finding> out;
  std::copy_if(findings.begin(), findings.end(), std::back_inserter(out),
               [&](const Finding& f) { return f.rule == rule; });
  return out;
}

// A policy with every rule off except the given ones.
inline Policy onlyRules(std::initializer_list<std::string> ids) {
  Policy p;
  for (const Rule* r : allRules()) {
    const bool keep = std::find(ids.begin(), ids.end(), std::string(r->id())) != ids.end();
    if (!keep) p.rules[std::string(r->id())] = RuleSetting::Off;
  }
  return p;
}

}  // namespace gpuguard::testing

namespace gpuguard::testing {

// A Pod (or, with kind "Deployment", a Deployment) whose one container has
// the given `resources:` body, indented under the container. Tolerations and
// a driver pin are included so that only the resources are under test.
inline std::string gpuPod(const std::string& resources, const std::string& kind = "Pod") {
  std::string spec =
      "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "  nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"
      "  containers:\n  - name: c\n    image: busybox\n    resources:\n";
  std::string body;
  std::size_t start = 0;
  while (start < resources.size()) {
    std::size_t nl = resources.find('\n', start);
    if (nl == std::string::npos) nl = resources.size();
    body += "      " + resources.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
  if (kind == "Pod") return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + spec + body;
  std::string indented;
  for (std::size_t i = 0, s = 0; i <= (spec + body).size(); ++i) {
    const std::string all = spec + body;
    if (i == all.size() || all[i] == '\n') {
      if (i > s) indented += "    " + all.substr(s, i - s) + "\n";
      s = i + 1;
    }
  }
  return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n" + indented;
}

// The rule ids the four rules of the API server's validateResourceRequirements
// (gpu-invalid-quantity, gpu-fractional, gpu-requests-limits-mismatch,
// gpu-requests-without-limits) give a gpuPod with `resources`: each is judged
// beside the other three, which must stay quiet where it speaks.
inline std::vector<std::string> quantityRulesFor(const std::string& resources, const std::string& kind = "Pod") {
  static const Policy quantityRules = onlyRules({"gpu-invalid-quantity", "gpu-fractional",
                                                 "gpu-requests-limits-mismatch", "gpu-requests-without-limits"});
  return rulesHit(judgeYaml(gpuPod(resources, kind), quantityRules));
}

}  // namespace gpuguard::testing
