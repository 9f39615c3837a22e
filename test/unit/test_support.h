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

// Parses one YAML document the way gpuguard-lint does (YAML 1.1 scalars,
// with written-text hints) and judges it.
inline std::vector<Finding> judgeYaml(const std::string& text, const Policy& policy = {}) {
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error) throw std::runtime_error("test YAML does not parse: " + parsed.error->message);
  if (parsed.documents.size() != 1) throw std::runtime_error("test YAML must hold one document");
  struct Hints final : SourceHints {
    const yaml::SourceMap& map;
    explicit Hints(const yaml::SourceMap& m) : map(m) {}
    const std::string* writtenText(std::string_view pointer) const override {
      const yaml::NodeOrigin* o = map.find(pointer);
      return o && o->plainScalar ? &o->writtenText : nullptr;
    }
  } hints(parsed.documents.front().sources);
  return judge(parsed.documents.front().value, policy, JudgeOptions{&hints});
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
