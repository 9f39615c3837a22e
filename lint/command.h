// Running a renderer (kustomize, kubectl kustomize, helm template) and
// collecting what it prints. The only place gpuguard-lint starts a process.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuguard::lint {

struct CommandResult {
  bool ran = false;      // false: could not be started, or was stopped (see error)
  int exitStatus = -1;   // when it ran
  std::string out;       // stdout
  std::string err;       // stderr
  std::string error;     // why it did not run to the end
};

// Runs argv (argv[0] looked up on PATH) in `directory` ("" : here) with
// stdin closed, collecting stdout up to `outputLimit` bytes and stderr up to
// 64 KiB. The command runs in a process group of its own: when it has not
// finished (and closed its output) after `timeoutMs`, the whole group is
// killed, so that what it started (helm plugins, git, a post-renderer)
// does not outlive the run.
CommandResult runCommand(const std::vector<std::string>& argv, std::size_t outputLimit, int timeoutMs = 300'000,
                         const std::string& directory = "");

// "300 s", "1.5 s": a timeout for messages.
std::string describeDuration(int ms);

// The program's path when PATH holds an executable of that name.
std::optional<std::string> findOnPath(const std::string& program);

}  // namespace gpuguard::lint
