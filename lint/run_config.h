// What every gpuguard-lint run does before judging anything, in one place
// for the lint run (main.cpp) and --nodes (pending.cpp): the policy file,
// the inputs it selects, and how an input is read (the same size limit).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "lint/inputs.h"
#include "lint/options.h"
#include "lint/lint_policy.h"

namespace gpuguard::lint {

struct RunConfig {
  LintPolicy policy;
  std::string configDir;  // the policy file's directory ("" without one): base of its globs
};

// Loads --config, or .gpuguard.yaml found from the working directory up.
// nullopt, with the reason on `err`, when the policy file is invalid.
std::optional<RunConfig> loadRunConfig(const Options& options, std::ostream& err);

// The command line's paths expanded with the policy's include/exclude
// globs; each path that does not exist is said on `err`.
ExpandedInputs selectInputs(const Options& options, const RunConfig& config, std::ostream& err);

}  // namespace gpuguard::lint
