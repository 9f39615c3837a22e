#include "lint/rule_docs.h"

#include <iomanip>

#include <nlohmann/json.hpp>

#include "lint/lint_file.h"
#include "lint/report.h"

#include "rules/pod_specs.h"
#include "rules/policy.h"
#include "rules/registry.h"

namespace gpuguard::lint {
namespace {

void indented(std::ostream& out, std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out << "    " << text.substr(start, nl - start) << "\n";
    start = nl + 1;
  }
}

}  // namespace

void writeRuleList(std::ostream& out) {
  for (const Rule* r : allRules()) {
    out << std::left << std::setw(34) << r->id() << std::setw(9) << severityName(r->doc().defaultSeverity)
        << r->doc().summary << "\n";
  }
}

void writeRuleListJson(std::ostream& out) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Rule* r : allRules()) {
    const RuleDoc& d = r->doc();
    list.push_back({{"id", d.id},
                    {"kind", "rule"},
                    {"defaultSeverity", severityName(d.defaultSeverity)},
                    {"judges", judgesOf(*r) == Judges::WholeObject ? "wholeObject" : "whatIsWritten"},
                    {"summary", d.summary},
                    {"helpUri", std::string(kRulesDocUri) + "#" + std::string(d.id)}});
  }
  auto builtIn = [&](const SourceCheck& c, const char* severity) {
    list.push_back({{"id", c.id},
                    {"kind", "built-in"},
                    {"defaultSeverity", severity},
                    {"summary", c.summary},
                    {"helpUri", std::string(kRulesDocUri) + "#" + std::string(c.id)}});
  };
  for (const SourceCheck& c : kSourceChecks) builtIn(c, "warning");
  builtIn(kInputErrorCheck, "error");
  out << list.dump(2) << "\n";
}

void writeRuleExplanation(std::ostream& out, const Rule& rule) {
  const RuleDoc& d = rule.doc();
  out << d.id << " (default severity: " << severityName(d.defaultSeverity) << ")\n\n"
      << d.summary << "\n\n"
      << d.description << "\n\n"
      << "What to do: " << d.remediation << "\n\n"
      << "Wrong:\n";
  indented(out, d.wrongExample);
  out << "\nRight:\n";
  indented(out, d.rightExample);
  out << "\nSilence it in a policy file (rules: {" << d.id << ": off}) or on one object with the annotation\n"
      << "ignore.gpuguard.io/" << d.id << ": \"<reason>\".\n";
}

void writeRulesTable(std::ostream& out, std::string_view linkTarget) {
  auto cell = [](std::string_view text) {
    std::string s;
    for (char c : text) s += c == '|' ? "\\|" : c == '\n' ? " " : std::string(1, c);
    return s;
  };
  out << "| id | default | what it catches |\n|---|---|---|\n";
  for (const Rule* r : allRules()) {
    out << "| [`" << r->id() << "`](" << linkTarget << "#" << r->id() << ") | "
        << severityName(r->doc().defaultSeverity) << " | " << cell(r->doc().summary) << " |\n";
  }
}

namespace {

// Where the pods are: the kinds the rules look into (rules/pod_specs.cpp).
void writeWorkloadKinds(std::ostream& out) {
  auto cell = [](std::string_view text) {
    std::string s;
    for (char c : text) s += c == '|' ? "\\|" : std::string(1, c);
    return s;
  };
  out << "\n# Where the pods are\n\n"
      << "The rules judge every pod spec in an object: any map with a `containers` list, and any map whose "
         "`resources` holds limits or requests (a container outside a pod spec), in built-in and custom kinds "
         "alike. The kinds below are the ones checked by name, with where their controllers take the pods and "
         "the GPU count from.\n\n"
      << "| kind | apiVersion | pods | GPUs |\n|---|---|---|---|\n";
  for (const WorkloadKind& k : workloadKinds()) {
    out << "| " << cell(k.kinds) << " | " << cell(k.apiGroup) << " | " << cell(k.pods) << " | " << cell(k.gpus)
        << " |\n";
  }
}

// The platform presets (rules/policy.cpp): what `platform: NAME` sets.
void writePlatformPresets(std::ostream& out) {
  out << "\n# Platform presets\n\n"
      << "`platform: NAME` in the policy (or `gpuguard-lint --platform NAME`) sets the cluster facts of a "
         "managed platform (kubernetes-gpu-semantics.md §14.17); keys written in the policy beside it win, "
         "and an unknown name is an error (exit 2).\n\n"
      << "| platform | what it sets |\n|---|---|\n";
  for (const PlatformPreset& p : platformPresets()) out << "| `" << p.name << "` | " << p.facts << " |\n";
}

}  // namespace

void writeRulesMarkdown(std::ostream& out) {
  out << "# gpuguard rules\n\n"
      << "<!-- Generated from the rule registry by `gpuguard-lint --rules-markdown` (run test/lint/update_docs.sh); a test fails when this file is stale. -->\n\n";
  writeRulesTable(out, "");
  for (const Rule* r : allRules()) {
    const RuleDoc& d = r->doc();
    out << "\n## " << d.id << "\n\n"
        << "Default severity: **" << severityName(d.defaultSeverity) << "**\n\n"
        << d.description << "\n\n"
        << "**What to do:** " << d.remediation << "\n\n"
        << "Wrong:\n\n```yaml\n" << d.wrongExample << "```\n\n"
        << "Right:\n\n```yaml\n" << d.rightExample << "```\n";
  }
  writeWorkloadKinds(out);
  writePlatformPresets(out);
  out << "\n# Built-in checks\n\n"
      << "gpuguard-lint's own checks of how a manifest is written and read. They are warnings (the input error "
         "is an error, exit status 2); `--list-rules --format json` lists them with the rules.\n";
  auto builtIn = [&](const SourceCheck& c, const char* severity) {
    out << "\n## " << c.id << "\n\n"
        << "Severity: **" << severity << "**\n\n"
        << c.summary << ". " << c.description << "\n\n"
        << "**What to do:** " << c.remediation << "\n";
  };
  for (const SourceCheck& c : kSourceChecks) builtIn(c, "warning");
  builtIn(kInputErrorCheck, "error");
}

}  // namespace gpuguard::lint
