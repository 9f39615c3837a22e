#include "rules/engine.h"

#include <algorithm>

#include "rules/k8s/json_pointer.h"
#include "rules/registry.h"

namespace gpuguard {
namespace {

using nlohmann::json;

class Collector : public Reporter {
 public:
  Collector(const Rule& rule, const Policy& policy, Severity severity, std::vector<Finding>& out)
      : rule_(rule), policy_(policy), severity_(severity), out_(out) {}

  void report(const FieldPath& path, std::string value, std::string message) override {
    add(path, std::move(value), std::move(message), severity_);
  }

  // The finding's own default, unless the policy sets the rule's severity.
  void reportWithDefault(const FieldPath& path, std::string value, std::string message,
                         Severity defaultSeverity) override {
    add(path, std::move(value), std::move(message), policy_.severityOf(rule_.id(), defaultSeverity).value_or(severity_));
  }

 private:
  void add(const FieldPath& path, std::string value, std::string message, Severity severity) {
    Finding f;
    f.rule = std::string(rule_.id());
    f.severity = severity;
    f.field = path.apiPath();
    f.pointer = path.jsonPointer();
    f.value = std::move(value);
    f.message = std::move(message);
    out_.push_back(std::move(f));
  }

  const Rule& rule_;
  const Policy& policy_;
  Severity severity_;
  std::vector<Finding>& out_;
};

// The suppression reason for `rule` in the annotations of `node`, if any.
const std::string* suppressionIn(const json& node, const std::string& annotationKey) {
  auto metadata = node.find("metadata");
  if (metadata == node.end() || !metadata->is_object()) return nullptr;
  auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return nullptr;
  auto it = annotations->find(annotationKey);
  return it != annotations->end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// Walks from the object root along the finding's pointer; every object on the
// way (the object itself, a List item, a pod template) may carry the
// annotation. A suppression needs a non-empty reason.
void applySuppression(const json& object, Finding& f) {
  const std::string annotationKey = std::string(kSuppressionPrefix) + f.rule;
  const json* node = &object;
  std::string_view rest = f.pointer;
  while (true) {
    if (node->is_object()) {
      if (const std::string* reason = suppressionIn(*node, annotationKey); reason && !reason->empty()) {
        f.suppressed = true;
        f.suppressionReason = *reason;
        return;
      }
    }
    if (rest.empty()) return;
    rest.remove_prefix(1);  // the '/'
    const std::size_t slash = rest.find('/');
    const std::string token = unescapeJsonPointerToken(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (node->is_object()) {
      auto it = node->find(token);
      if (it == node->end()) return;
      node = &*it;
    } else if (node->is_array()) {
      std::size_t i = 0;
      for (char c : token) {
        if (c < '0' || c > '9') return;
        i = i * 10 + static_cast<std::size_t>(c - '0');
        if (i > node->size()) return;
      }
      if (token.empty() || i >= node->size()) return;
      node = &(*node)[i];
    } else {
      return;
    }
  }
}

}  // namespace

std::vector<Finding> judge(const json& object, const Policy& policy, const JudgeOptions& options) {
  std::vector<Finding> findings;
  if (!object.is_object()) return findings;
  const std::vector<PodSite> sites = findPodSites(object);
  InputFacts own;
  if (!options.facts) own.add(object);
  const CheckContext ctx{object, sites, policy, options.hints, options.facts ? *options.facts : own};
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
  for (Finding& f : findings) applySuppression(object, f);
  return findings;
}

void forgetSuppressions(std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    f.suppressed = false;
    f.suppressionReason.clear();
  }
}

bool looksLikeFragment(const json& object) {
  if (!object.is_object()) return false;
  for (const PodSite& site : findPodSites(object)) {
    for (const ContainerRef& c : site.containers) {
      if (c.kind != ContainerKind::Lone && c.image().empty()) return true;
    }
  }
  return false;
}

bool hasErrors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return !f.suppressed && f.severity == Severity::Error; });
}

}  // namespace gpuguard
