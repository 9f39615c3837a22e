// Rule documentation rendered from the registry: --list-rules, --explain and
// docs/rules.md all come from here, so they cannot drift apart.
#pragma once

#include <ostream>
#include <string_view>

#include "rules/rule.h"

namespace gpuguard::lint {

void writeRuleList(std::ostream& out);
// --list-rules --format json: every id a finding can carry (rules, the
// linter's built-in checks, the input error) with its documentation link.
void writeRuleListJson(std::ostream& out);
void writeRuleExplanation(std::ostream& out, const Rule& rule);
void writeRulesMarkdown(std::ostream& out);
// The rules table alone (id, default severity, what it catches), with links
// to `linkTarget` + "#<rule-id>" ("" inside docs/rules.md; the README uses
// "docs/rules.md"). `gpuguard-lint --rules-table` prints the README's.
void writeRulesTable(std::ostream& out, std::string_view linkTarget);

}  // namespace gpuguard::lint
