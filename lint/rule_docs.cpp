#include "lint/rule_docs.h"

#include <iomanip>

#include <nlohmann/json.hpp>

#include "lint/catalog.h"
#include "lint/report/report.h"

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

// The kind of id, as --list-rules --format json names it.
const char* kindName(Source source) { return source == Source::Rule ? "rule" : "built-in"; }

// How --explain heads an entry: its severity and, for a built-in, what it is.
std::string explanationHeading(const CatalogEntry& e) {
  const std::string severity(severityName(e.doc->defaultSeverity));
  switch (e.source) {
    case Source::Rule: return "default severity: " + severity;
    case Source::BuiltInCheck: return "built-in check, severity: " + severity;
    case Source::InputError: return "input error, severity: " + severity + ", exit status 2";
  }
  return severity;
}

// The policy keys a rule reads (RuleDoc::policyKeys), with `quote` around
// each: "`gpuResources`, `gpuTaints`"; "" when it reads none.
std::string policyKeyList(const RuleDoc& d, std::string_view quote) {
  std::string out;
  for (std::string_view key : d.policyKeys) {
    out += (out.empty() ? "" : ", ") + std::string(quote) + std::string(key) + std::string(quote);
  }
  return out;
}

// What configures a rule besides its severity: the policy keys it reads.
std::string policyKeysSentence(const RuleDoc& d, std::string_view quote) {
  const std::string keys = policyKeyList(d, quote);
  return "Policy keys it reads besides " + std::string(quote) + "rules" + std::string(quote) + ": " +
         (keys.empty() ? std::string("none") : keys) + ".";
}

// What a user can do about an entry's findings besides fixing them.
void writeSilencing(std::ostream& out, const CatalogEntry& e) {
  switch (e.source) {
    case Source::Rule:
      out << "Silence it in a policy file (rules: {" << e.id() << ": off}) or on one object with the annotation\n"
          << "ignore.gpuguard.io/" << e.id() << ": \"<reason>\".\n";
      return;
    case Source::BuiltInCheck:
      out << "A built-in check is always on: a policy cannot configure it and an annotation cannot silence it.\n"
          << "Its warnings fail the run only with --fail-on warning.\n";
      return;
    case Source::InputError:
      out << "An input error is not a finding: nothing configures or silences it, and the exit status is 2.\n";
      return;
  }
}

}  // namespace

void writeRuleList(std::ostream& out) {
  for (const CatalogEntry& e : catalog()) {
    out << std::left << std::setw(34) << e.id() << std::setw(9) << severityName(e.doc->defaultSeverity)
        << (e.configurable() ? "" : "(built-in) ") << e.doc->summary << "\n";
  }
}

void writeRuleListJson(std::ostream& out) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CatalogEntry& e : catalog()) {
    nlohmann::ordered_json entry = {{"id", e.id()},
                                    {"kind", kindName(e.source)},
                                    {"defaultSeverity", severityName(e.doc->defaultSeverity)}};
    if (e.rule) entry["judges"] = judgesOf(*e.rule) == Judges::WholeObject ? "wholeObject" : "whatIsWritten";
    entry["summary"] = e.doc->summary;
    entry["helpUri"] = std::string(kRulesDocUri) + "#" + std::string(e.id());
    list.push_back(std::move(entry));
  }
  out << list.dump(2) << "\n";
}

void writeRuleExplanation(std::ostream& out, const CatalogEntry& entry) {
  const RuleDoc& d = *entry.doc;
  out << d.id << " (" << explanationHeading(entry) << ")\n\n"
      << d.summary << "\n\n"
      << d.description << "\n\n"
      << "What to do: " << d.remediation << "\n\n"
      << "Wrong:\n";
  indented(out, d.wrongExample);
  out << "\nRight:\n";
  indented(out, d.rightExample);
  out << "\n";
  if (entry.source == Source::Rule) out << policyKeysSentence(d, "") << "\n";
  writeSilencing(out, entry);
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

namespace {

// One section of docs/rules.md: the anchor is the id, as helpUri links it.
void writeSection(std::ostream& out, const CatalogEntry& e) {
  const RuleDoc& d = *e.doc;
  out << "\n## " << d.id << "\n\n"
      << (e.configurable() ? "Default severity: **" : "Severity: **") << severityName(d.defaultSeverity) << "**\n\n"
      << (e.configurable() ? "" : std::string(d.summary) + " ") << d.description << "\n\n"
      << "**What to do:** " << d.remediation << "\n\n";
  if (e.configurable()) out << policyKeysSentence(d, "`") << "\n\n";
  out << "Wrong:\n\n```yaml\n" << d.wrongExample << "```\n\n"
      << "Right:\n\n```yaml\n" << d.rightExample << "```\n";
}

}  // namespace

void writeRulesMarkdown(std::ostream& out) {
  out << "# gpuguard rules\n\n"
      << "<!-- Generated from the rule registry by `gpuguard-lint --rules-markdown` (run test/lint/update_docs.sh); a test fails when this file is stale. -->\n\n";
  writeRulesTable(out, "");
  for (const CatalogEntry& e : catalog()) {
    if (e.configurable()) writeSection(out, e);
  }
  writeWorkloadKinds(out);
  writePlatformPresets(out);
  out << "\n# Built-in checks\n\n"
      << "gpuguard-lint's own checks of how a manifest is written and read. They are warnings (the input error "
         "is an error, exit status 2), always on: a policy cannot configure them and an annotation cannot silence "
         "them. `--list-rules` lists them with the rules and `--explain ID` documents each.\n";
  for (const CatalogEntry& e : catalog()) {
    if (!e.configurable()) writeSection(out, e);
  }
}

}  // namespace gpuguard::lint
