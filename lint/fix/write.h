// Writing a fixed file back (--fix) without losing a byte of it.
//
// The fixed text goes to a temporary file in the file's own directory,
// which is flushed to disk (fsync) and then renamed over the original, so
// a full disk, a crash or a kill leaves either the old file or the new one,
// never a truncated mix. The new file keeps the original's mode and owner.
// Just before the rename the file is read again: when it no longer holds
// the text that was fixed (an editor, a formatter or a second run wrote it
// meanwhile), it is left as it is. A symbolic link keeps being a link (its
// target is what is rewritten), and a file whose real path leads outside
// the tree being linted is not written unless asked.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuguard::lint {

struct WriteBackOptions {
  std::string tree;             // the directory being linted: real paths must stay inside it
  bool followSymlinks = false;  // --fix-follow-symlinks: write outside the tree too
  // A seam for tests: runs after the temporary file is complete, before the
  // check that the original is unchanged (a concurrent edit goes here).
  std::function<void()> beforeReplace;
};

struct WriteBackResult {
  enum class Status {
    Written,
    Refused,  // deliberately left alone (outside the tree, changed meanwhile): a note
    Failed,   // could not be written (disk full, permissions): an input error
  } status = Status::Failed;
  std::string message;  // why not written; "" when written
};

// Replaces the file at `path`, which held `original` when it was read, by
// `fixed`.
WriteBackResult writeBack(const std::string& path, std::string_view original, std::string_view fixed,
                          const WriteBackOptions& options);

// The tree a file of the run belongs to: the directory named on the command
// line that holds it, else the directory of the file itself.
std::string lintedTreeOf(const std::string& file, const std::vector<std::string>& commandLinePaths);

}  // namespace gpuguard::lint
