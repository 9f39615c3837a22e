#include "rules/registry.h"

#include <memory>

#include "rules/checks/checks.h"

namespace gpuguard {
namespace {

struct Registered {
  std::unique_ptr<Rule> rule;
  Judges judges;
};

void add(std::vector<Registered>& rules, std::unique_ptr<Rule> rule, Judges judges) {
  rules.push_back({std::move(rule), judges});
}

std::vector<Registered> makeAll() {
  std::vector<Registered> rules;
  // One line per rule in rules/checks/registered.inc, which says what each judges.
#define GPUGUARD_RULE(name, judges) add(rules, checks::make##name(), Judges::judges);
#include "rules/checks/registered.inc"
#undef GPUGUARD_RULE
  return rules;
}

const std::vector<Registered>& registered() {
  static const auto owned = makeAll();
  return owned;
}

}  // namespace

const std::vector<const Rule*>& allRules() {
  static const std::vector<Registered>& owned = registered();
  static const auto view = [] {
    std::vector<const Rule*> v;
    for (const auto& r : owned) v.push_back(r.rule.get());
    return v;
  }();
  return view;
}

Judges judgesOf(const Rule& rule) {
  static const std::vector<Registered>& owned = registered();
  for (const Registered& r : owned) {
    if (r.rule.get() == &rule) return r.judges;
  }
  return Judges::WholeObject;  // not registered: assume the most it could need
}

const Rule* findRule(std::string_view id) {
  for (const Rule* r : allRules()) {
    if (r->id() == id) return r;
  }
  return nullptr;
}

std::string_view judgedWithoutFactsAgainst(std::string_view id) {
  const Rule* rule = findRule(id);
  return rule ? rule->doc().withoutFacts : std::string_view();
}

}  // namespace gpuguard
