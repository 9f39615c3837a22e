#include "lint/report_output.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

namespace gpuguard::lint {
namespace {

// A closed pipe may surface as an error on stdout before a write says EPIPE.
bool readerHasGone() {
  pollfd out{STDOUT_FILENO, 0, 0};
  return poll(&out, 1, 0) == 1 && (out.revents & POLLERR);
}

}  // namespace

bool ReportOutput::open(const std::optional<std::string>& path) {
  if (!path) return true;
  file_.open(*path, std::ios::binary | std::ios::trunc);
  if (!file_) {
    std::cerr << "gpuguard-lint: cannot write " << *path << "\n";
    return false;
  }
  toFile_ = true;
  return true;
}

std::ostream& ReportOutput::stream() { return toFile_ ? static_cast<std::ostream&>(file_) : std::cout; }

int ReportOutput::finish(int status, int troubleStatus) {
  std::ostream& out = stream();
  out.flush();
  if (out) return status;
  if (!toFile_ && (errno == EPIPE || readerHasGone())) return status;
  std::cerr << "gpuguard-lint: failed to write the report\n";
  return troubleStatus;
}

}  // namespace gpuguard::lint
