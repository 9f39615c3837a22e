#include "lint/report/output.h"

#include "lint/report/report.h"

#include <poll.h>
#include <sys/stat.h>
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

std::optional<std::string> inputAt(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return std::nullopt;
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input != "-" && ::stat(input.c_str(), &in) == 0 && in.st_dev == target.st_dev && in.st_ino == target.st_ino) {
      return input;
    }
  }
  return std::nullopt;
}

bool ReportOutput::open(const std::optional<std::string>& path) {
  if (!path) return true;
  file_.open(*path, std::ios::binary | std::ios::trunc);
  if (!file_) {
    err_ << "gpuguard-lint: cannot write " << printable(*path) << "\n";
    return false;
  }
  toFile_ = true;
  return true;
}

std::ostream& ReportOutput::stream() { return toFile_ ? static_cast<std::ostream&>(file_) : standardOut_; }

int ReportOutput::finish(int status, int troubleStatus) {
  std::ostream& out = stream();
  out.flush();
  if (out) return status;
  if (!toFile_ && (errno == EPIPE || readerHasGone())) return status;
  err_ << "gpuguard-lint: failed to write the report\n";
  return troubleStatus;
}

}  // namespace gpuguard::lint
