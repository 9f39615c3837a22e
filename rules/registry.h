// Every rule gpuguard knows, in one place (like clang-tidy's module lists).
#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.h"

namespace gpuguard {

// All rules, in documentation order.
const std::vector<const Rule*>& allRules();
const Rule* findRule(std::string_view id);

// RuleDoc::withoutFacts of the rule `id`: what it judges against when the
// cluster facts that could overturn its errors are missing; "" for a rule
// the facts cannot overturn, or an id that is no rule.
std::string_view judgedWithoutFactsAgainst(std::string_view id);

// What a rule needs to judge an object, declared where it is registered.
enum class Judges {
  WhatIsWritten,  // values that are present: what it finds in a fragment (a kustomize
                  // patch) holds for the whole object too
  WholeObject,    // also what is missing, or totals over the pod: tolerations, driver
                  // pins, counts against nodes
};
Judges judgesOf(const Rule& rule);

}  // namespace gpuguard
