#include "lint/rule_docs.h"

#include <iomanip>

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
}

}  // namespace gpuguard::lint
