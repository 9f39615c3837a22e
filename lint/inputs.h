// Turning command-line paths into the list of inputs to lint.
#pragma once

#include <string>
#include <vector>

namespace gpuguard::lint {

struct ExpandedInputs {
  std::vector<std::string> files;     // in a stable order; "-" for stdin
  std::vector<std::string> problems;  // paths that do not exist
};

// Directories are searched recursively for *.yaml, *.yml and *.json (hidden
// directories such as .git are skipped); files named on the command line are
// taken whatever their extension (pre-commit passes file lists). Both keep
// only paths that match an include glob (all when there are none) and no
// exclude glob. A glob is matched against the path as walked
// ("deploy/charts/x.yaml") and, when `base` is given (the directory of the
// policy file), against the path relative to it, so globs in .gpuguard.yaml
// mean the same from any working directory.
ExpandedInputs expandInputs(const std::vector<std::string>& paths, const std::vector<std::string>& include,
                            const std::vector<std::string>& exclude, const std::string& base = "");

// Glob match on '/'-separated paths: '*' and '?' stay within a segment, '**'
// crosses segments. A pattern without '/' matches the file name anywhere.
bool globMatch(std::string_view pattern, std::string_view path);

}  // namespace gpuguard::lint
