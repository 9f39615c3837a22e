// One gpuguard-lint run, as main() makes it and as tests drive it: the
// command line in, the reports on `out` (or in the files the options name),
// what the run has to say on `err`, the exit status back (lint/exit_codes.h).
//
//   the policy (run_config.h), --enable/--disable, the cluster facts
//   (--facts, --cluster), or --nodes (pending.h); then the inputs it selects,
//   planned into units (units.h: files, kustomizations, charts), each judged
//   (and fixed, with --fix) on its own thread; then the notes, the exit
//   status and the reports (report/).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "lint/options.h"

namespace gpuguard::lint {

struct RunStreams {
  std::ostream& out;           // stdout: the report without --output, --fix --dry-run's diff, --help...
  std::ostream& err;           // stderr: notes, --fix's notes, errors
  bool outIsTerminal = false;  // --color=auto colours a terminal only
};

// The run for parsed options (not --help, --version, --list-rules,
// --explain, --rules-markdown, --rules-table: see lintCommand).
int runLint(const Options& options, const RunStreams& streams);

// The whole command: parses `args` (argv[1..]), answers the informational
// flags, else runLint(). Never throws.
int lintCommand(const std::vector<std::string>& args, const RunStreams& streams);

}  // namespace gpuguard::lint
