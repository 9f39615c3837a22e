// gpuguard-lint: the offline front end of the GPU rule engine. The run
// itself is lint/run.h; this is the process around it.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "lint/run.h"

int main(int argc, char** argv) {
  // A closed output pipe is EPIPE on write, handled by the run, not a signal
  // that kills the process mid-report.
  std::signal(SIGPIPE, SIG_IGN);
  // A file size limit (ulimit -f) makes a write fail with EFBIG, reported,
  // instead of killing the process halfway through writing a file.
  std::signal(SIGXFSZ, SIG_IGN);
  std::ios::sync_with_stdio(false);
  const gpuguard::lint::RunStreams streams{std::cout, std::cerr, isatty(STDOUT_FILENO) == 1};
  return gpuguard::lint::lintCommand(std::vector<std::string>(argv + 1, argv + argc), streams);
}
