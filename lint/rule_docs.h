// Rule documentation rendered from the registry: --list-rules, --explain and
// docs/rules.md all come from here, so they cannot drift apart.
#pragma once

#include <ostream>

#include "rules/rule.h"

namespace gpuguard::lint {

void writeRuleList(std::ostream& out);
void writeRuleExplanation(std::ostream& out, const Rule& rule);
void writeRulesMarkdown(std::ostream& out);

}  // namespace gpuguard::lint
