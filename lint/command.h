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
// 64 KiB; stops it after `timeoutSeconds`.
CommandResult runCommand(const std::vector<std::string>& argv, std::size_t outputLimit, int timeoutSeconds = 300,
                         const std::string& directory = "");

// The program's path when PATH holds an executable of that name.
std::optional<std::string> findOnPath(const std::string& program);

}  // namespace gpuguard::lint
