// Documentation rendered from the catalog (rules and built-in checks):
// --list-rules, --explain and docs/rules.md all come from here, so they
// cannot drift apart.
#pragma once

#include <ostream>
#include <string_view>

#include "lint/catalog.h"

namespace gpuguard::lint {

// --list-rules: every id of the catalog (lint/catalog.h) — the rules, the
// linter's built-in checks and the input error — with its severity and
// summary, one a line, the id first.
void writeRuleList(std::ostream& out);
// --list-rules --format json: the same, with each id's documentation link.
void writeRuleListJson(std::ostream& out);
// --explain ID: an entry's documentation with its wrong and right examples.
void writeRuleExplanation(std::ostream& out, const CatalogEntry& entry);
// docs/rules.md: the rules, where the pods are, the platform presets and
// the built-in checks.
void writeRulesMarkdown(std::ostream& out);
// The rules table alone (id, default severity, what it catches), with links
// to `linkTarget` + "#<rule-id>" ("" inside docs/rules.md; the README uses
// "docs/rules.md"). `gpuguard-lint --rules-table` prints the README's.
void writeRulesTable(std::ostream& out, std::string_view linkTarget);

}  // namespace gpuguard::lint
