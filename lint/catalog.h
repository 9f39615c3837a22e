// Every id a finding (or an input error) of gpuguard-lint can carry, in one
// list: the engine's rules (rules/registry.cpp) and the linter's built-in
// checks (lint/builtin_checks.h), merged here and nowhere else. --list-rules,
// --explain, docs/rules.md and SARIF's rule metadata all read this list, so
// an id no entry documents cannot reach any output.
#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.h"

namespace gpuguard::lint {

// What reports findings under an id, which decides what a user can do
// about it.
enum class Source {
  Rule,          // an engine rule: a policy configures it, an annotation silences it
  BuiltInCheck,  // the linter's check of how a manifest is written: always a warning
  InputError,    // an input that could not be read, parsed or rendered: exit status 2
};

struct CatalogEntry {
  const RuleDoc* doc = nullptr;
  Source source = Source::Rule;
  const Rule* rule = nullptr;  // Source::Rule only

  std::string_view id() const { return doc->id; }
  // Whether `rules:` and ignore.gpuguard.io/<id> reach it.
  bool configurable() const { return source == Source::Rule; }
};

// The rules in registry order, then the built-in checks, then the input error.
const std::vector<CatalogEntry>& catalog();
// The entry with this id, or null.
const CatalogEntry* findEntry(std::string_view id);

}  // namespace gpuguard::lint
