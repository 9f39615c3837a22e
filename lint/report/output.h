// Where gpuguard-lint writes a report: the --output file (created or
// truncated) or stdout. Shared by the lint run and --nodes (pending.h), so
// both treat a failed write, and a reader that has gone, the same way.
#pragma once

#include <fstream>
#include <iostream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gpuguard::lint {

// The input a report written to `path` would overwrite: one of `inputs`
// that is the same file as `path` (same device and inode, whatever the
// names: ./x.yaml, a hard link, a symbolic link); nullopt when there is none
// (or `path` does not exist yet).
std::optional<std::string> inputAt(const std::string& path, const std::vector<std::string>& inputs);

class ReportOutput {
 public:
  // Without a path the report goes to `standardOut`; messages go to `err`.
  explicit ReportOutput(std::ostream& standardOut = std::cout, std::ostream& err = std::cerr)
      : standardOut_(standardOut), err_(err) {}

  // Opens `path` when given; false, with a message on `err`, when it cannot.
  bool open(const std::optional<std::string>& path);
  std::ostream& stream();
  bool toFile() const { return toFile_; }

  // Flushes, then returns `status` when the report was written, or when
  // stdout's reader closed the pipe (gpuguard-lint deploy/ | head -1: it had
  // what it wanted, so stop quietly like a filter); otherwise says so on
  // `err` and returns `troubleStatus`.
  int finish(int status, int troubleStatus);

 private:
  std::ostream& standardOut_;
  std::ostream& err_;
  std::ofstream file_;
  bool toFile_ = false;
};

}  // namespace gpuguard::lint
