#include "lint/catalog.h"

#include "lint/builtin_checks.h"
#include "rules/registry.h"

namespace gpuguard::lint {
namespace {

std::vector<CatalogEntry> makeCatalog() {
  std::vector<CatalogEntry> entries;
  for (const Rule* rule : allRules()) entries.push_back({&rule->doc(), Source::Rule, rule});
  // The linter's own checks, in the order docs/rules.md lists them.
  for (const RuleDoc* doc : {&kDuplicateKeyCheck, &kIgnoredContentCheck, &kIneffectiveSuppressionCheck}) {
    entries.push_back({doc, Source::BuiltInCheck, nullptr});
  }
  entries.push_back({&kInputErrorCheck, Source::InputError, nullptr});
  return entries;
}

}  // namespace

const std::vector<CatalogEntry>& catalog() {
  static const std::vector<CatalogEntry> entries = makeCatalog();
  return entries;
}

const CatalogEntry* findEntry(std::string_view id) {
  for (const CatalogEntry& e : catalog()) {
    if (e.id() == id) return &e;
  }
  return nullptr;
}

}  // namespace gpuguard::lint
