// The contract between the engine and one check. Each check lives in its own
// file under rules/checks/, has a public id, a default severity and its
// documentation (with a wrong and a right example), and is registered by one
// line in rules/checks/registered.inc (tools/new-rule.sh writes all of these).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "rules/cluster_reach.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/field_path.h"
#include "rules/finding.h"
#include "rules/fix.h"
#include "rules/gpu_use.h"
#include "rules/input_facts.h"
#include "rules/label_fields.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

struct RuleDoc {
  std::string_view id;            // public API: configs, suppressions and CI gates use it
  Severity defaultSeverity;
  std::string_view summary;       // one line: what it catches
  std::string_view description;   // why it matters: what Kubernetes / NVIDIA do
  std::string_view remediation;   // what to do
  std::string_view wrongExample;  // YAML that triggers it
  std::string_view rightExample;  // the same YAML, fixed
  // The policy keys (rules/policy.h) the rule reads besides `rules`, which
  // sets every rule's severity: its options, the way a clang-tidy check
  // declares its own. gpuguard-lint --explain and docs/rules.md show them.
  std::span<const std::string_view> policyKeys = {};
  // For a rule whose errors the cluster's facts can overturn (without them it
  // judges by a policy constant the facts replace), what it judges against
  // then, in a few words: "the policy's gpuTaints". Empty: the facts never
  // clear its errors. While the webhook's facts are configured but missing it
  // reports such errors as warnings, so that losing the facts never denies
  // what they would admit (docs/cluster-facts.md, Fail-safe).
  std::string_view withoutFacts = {};
};

// What a front end may know about the text behind a JSON value. The linter
// knows how a YAML scalar was written (010 vs 8); the webhook knows nothing.
class SourceHints {
 public:
  virtual ~SourceHints() = default;
  // The plain (unquoted) scalar text at `pointer`, when the front end has it.
  virtual const std::string* writtenText(std::string_view pointer) const = 0;
};

// One Kubernetes object under judgement, with its pod specs already found.
struct CheckContext {
  const nlohmann::json& object;
  const std::vector<PodSite>& sites;
  const Policy& policy;
  const SourceHints* hints = nullptr;  // may be null
  // What the rest of the input defines (DeviceClasses, claim templates).
  const InputFacts& facts;
  // The cluster's facts (rules/cluster_facts.h), or null: judge without them.
  const ClusterFacts* cluster = nullptr;
  // The object's namespace (the request's, else metadata.namespace, else
  // "default"): where its claims and namespace defaults are looked up.
  std::string_view namespaceName = "default";
  // Where each pod site can go in the cluster (null without facts).
  ReachMemo* reachMemo = nullptr;
  // The object's label, selector and toleration fields, found once for the
  // checks that read them (never null when the engine runs the checks).
  LabelFieldsMemo* labelFieldsMemo = nullptr;

  // What counts as a GPU here: the policy's names, the input's classes and
  // the cluster's.
  GpuFacts gpu() const { return GpuFacts{policy, facts, cluster, namespaceName}; }

  // Where the pod of `site` can go in the cluster, computed once per site
  // (rules/cluster_reach.h). Only with facts: `cluster` must not be null.
  const PodReach& reach(const PodSite& site) const {
    return reachMemo->of(site, *cluster, gpu(), namespaceName);
  }

  const LabelFields& labelFields() const { return labelFieldsMemo->of(object); }

  const std::string* writtenText(const FieldPath& path) const {
    return hints ? hints->writtenText(path.jsonPointer()) : nullptr;
  }
};

// Collects what a check finds; the engine fills in rule id and severity.
// A check says what the API server would say: the path, a typed field error
// (FieldError::invalid(shown, detail), ::required(detail)...) and the value
// as written ("" when something is missing).
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void report(const FieldPath& path, FieldError error, std::string value = {}) = 0;
  // A finding with the edits that fix it (rules/fix.h): --fix and /mutate apply them.
  virtual void reportFixable(const FieldPath& path, FieldError error, std::string value, Fix fix) = 0;
  // A finding whose default severity is not the rule's: a warning-worthy
  // choice inside an error rule (device-plugin-config: FAIL_ON_INIT_ERROR=false),
  // or a plain error inside a warning rule (dra-with-device-plugin: a negative
  // count). The policy still decides: `rules: {<id>: error|warning}` sets the
  // severity of all the rule's findings, `off` drops them all.
  virtual void reportWithDefault(const FieldPath& path, FieldError error, std::string value,
                                 Severity defaultSeverity) {
    (void)defaultSeverity;
    report(path, std::move(error), std::move(value));
  }
  // Both: a finding with its own default severity and the edits that fix it.
  virtual void reportFixableWithDefault(const FieldPath& path, FieldError error, std::string value, Fix fix,
                                        Severity defaultSeverity) {
    (void)defaultSeverity;
    reportFixable(path, std::move(error), std::move(value), std::move(fix));
  }
};

class Rule {
 public:
  virtual ~Rule() = default;
  virtual const RuleDoc& doc() const = 0;
  virtual void check(const CheckContext& ctx, Reporter& out) const = 0;
  std::string_view id() const { return doc().id; }
};

}  // namespace gpuguard
