// gpuguard-lint's exit statuses (--help and docs/linter.md "Exit status"),
// shared by the lint run and --nodes so a pipeline gate reads both alike.
#pragma once

namespace gpuguard::lint {

inline constexpr int kExitClean = 0;     // no error finding; with --nodes: every GPU pod fits somewhere
inline constexpr int kExitFindings = 1;  // an error finding; with --nodes: a GPU pod would stay Pending
inline constexpr int kExitTrouble = 2;   // bad usage, unreadable input, or the report could not be written

}  // namespace gpuguard::lint
