// Turning command-line paths into the list of inputs to lint.
#pragma once

#include <string>
#include <vector>

namespace gpuguard::lint {

struct ExpandedInputs {
  std::vector<std::string> files;     // in a stable order; "-" for stdin
  std::vector<std::string> problems;  // paths that do not exist
};

// Files are taken as given; directories are searched recursively for
// *.yaml, *.yml and *.json (hidden directories such as .git are skipped),
// keeping paths whose name matches the include globs (all when empty) and
// none of the exclude globs.
ExpandedInputs expandInputs(const std::vector<std::string>& paths, const std::vector<std::string>& include,
                            const std::vector<std::string>& exclude);

// Glob match on '/'-separated paths: '*' and '?' stay within a segment, '**'
// crosses segments. A pattern without '/' matches the file name anywhere.
bool globMatch(std::string_view pattern, std::string_view path);

}  // namespace gpuguard::lint
