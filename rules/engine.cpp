#include "rules/engine.h"

#include <algorithm>

#include "rules/k8s/json_access.h"
#include "rules/object_ref.h"
#include "rules/pod_admission.h"
#include "rules/registry.h"

namespace gpuguard {
namespace {

using nlohmann::json;

class Collector : public Reporter {
 public:
  Collector(const Rule& rule, const Policy& policy, Severity severity, std::vector<Finding>& out)
      : rule_(rule), policy_(policy), severity_(severity), out_(out) {}

  void report(const FieldPath& path, FieldError error, std::string value) override {
    add(path, std::move(error), std::move(value), severity_);
  }

  void reportFixable(const FieldPath& path, FieldError error, std::string value, Fix fix) override {
    add(path, std::move(error), std::move(value), severity_);
    out_.back().fix = std::move(fix);
  }

  // The finding's own default, unless the policy sets the rule's severity.
  void reportWithDefault(const FieldPath& path, FieldError error, std::string value,
                         Severity defaultSeverity) override {
    add(path, std::move(error), std::move(value), policy_.severityOf(rule_.id(), defaultSeverity).value_or(severity_));
  }

  void reportFixableWithDefault(const FieldPath& path, FieldError error, std::string value, Fix fix,
                                Severity defaultSeverity) override {
    reportWithDefault(path, std::move(error), std::move(value), defaultSeverity);
    out_.back().fix = std::move(fix);
  }

 private:
  void add(const FieldPath& path, FieldError error, std::string value, Severity severity) {
    Finding f;
    f.rule = std::string(rule_.id());
    f.severity = severity;
    f.path = path;
    f.error = std::move(error);
    f.value = std::move(value);
    out_.push_back(std::move(f));
  }

  const Rule& rule_;
  const Policy& policy_;
  Severity severity_;
  std::vector<Finding>& out_;
};

// The suppression reason for `rule` in the annotations of `node`, if any.
const std::string* suppressionIn(const json& node, const std::string& annotationKey) {
  const json* metadata = objectAt(node, "metadata");
  const json* annotations = metadata ? objectAt(*metadata, "annotations") : nullptr;
  return annotations ? stringAt(*annotations, annotationKey) : nullptr;
}

// Walks from the object root along the finding's path; every object on the
// way (the object itself, a List item, a pod template) may carry the
// annotation. A suppression needs a non-empty reason.
void applySuppression(const json& object, Finding& f) {
  const std::string annotationKey = std::string(kSuppressionPrefix) + f.rule;
  const std::vector<FieldPath::Step> steps = f.path.segments();
  const json* node = &object;
  for (std::size_t i = 0; node; node = i < steps.size() ? stepInto(*node, steps[i++]) : nullptr) {
    if (const std::string* reason = suppressionIn(*node, annotationKey); reason && !reason->empty()) {
      f.suppressed = true;
      f.suppressionReason = *reason;
      return;
    }
  }
}

}  // namespace

std::vector<Finding> judge(const json& object, const Policy& policy, const JudgeOptions& options) {
  std::vector<Finding> findings;
  if (!object.is_object()) return findings;
  std::vector<PodSite> sites = findPodSites(object);
  InputFacts own;
  if (!options.facts) own.add(object);
  const InputFacts& input = options.facts ? *options.facts : own;
  const json* metadata = objectAt(object, "metadata");
  std::string ns(options.namespaceName);
  if (ns.empty() && metadata) ns = stringOr(*metadata, "namespace");
  if (ns.empty()) ns = "default";
  // Before any rule: the pods' placement is what it is after admission.
  applyAdmissionPlugins(sites, GpuFacts{policy, input, options.cluster, ns});
  // Kept reaches only where they depend on nothing but this object, the facts and the policy.
  ReachCache::Slots* kept = options.reachCache && options.cluster && !options.facts && own.empty()
                                ? &options.reachCache->slotsFor(object, sites.size(), ns, *options.cluster, policy)
                                : nullptr;
  ReachMemo reachMemo = kept ? ReachMemo(sites, *kept) : ReachMemo();
  LabelFieldsMemo labelFieldsMemo;
  const CheckContext ctx{object,          sites, policy, options.hints, input,
                         options.cluster, ns,    options.cluster ? &reachMemo : nullptr, &labelFieldsMemo};
  const bool anyExemptions = options.exemptions && !options.exemptions->empty();
  const ExemptionSubject subject = anyExemptions ? exemptionSubject(object, sites, options.namespaceName) : ExemptionSubject{};
  for (const Rule* rule : allRules()) {
    const std::optional<Severity> severity = policy.severityOf(rule->id(), rule->doc().defaultSeverity);
    if (!severity) continue;
    if (options.fragment && judgesOf(*rule) == Judges::WholeObject) continue;
    if (anyExemptions && options.exemptions->exempts(rule->id(), subject)) continue;
    Collector collector(*rule, policy, *severity, findings);
    rule->check(ctx, collector);
  }
  if (!findings.empty()) {
    const ObjectLocator objects(object, sites);
    for (Finding& f : findings) {
      applySuppression(object, f);
      f.object = objects.at(f.path);
    }
  }
  return findings;
}

void forgetSuppressions(std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    f.suppressed = false;
    f.suppressionReason.clear();
  }
}

bool hasErrors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return !f.suppressed && f.severity == Severity::Error; });
}

}  // namespace gpuguard
