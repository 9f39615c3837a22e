// --fix never loses a byte of the user's file (issue 23): it writes a
// temporary file beside the original, flushes it and renames it over the
// original (a full disk leaves the original whole), keeps the mode, leaves
// alone a file changed since it was read and a link that leads outside the
// tree; and no report (-o, --format F=FILE) is written over an input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "lint/fix/write.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A pod --fix changes: requests-only becomes limits (one rename).
const std::string kFixablePod =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  tolerations:\n"
    "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  nodeSelector:\n"
    "    nvidia.com/cuda.driver-version.major: \"550\"\n  containers:\n  - name: cuda\n"
    "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n";

// Files in `dir` whose name says they are --fix's temporary files.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".gpuguard-") != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

TEST(LintFixWriteBack, ReplacesTheFileByARenameAndKeepsItsMode) {
  TempDir dir;
  const fs::path pod = dir.write("pod.yaml", kFixablePod);
  ASSERT_EQ(::chmod(pod.c_str(), 0640), 0);
  struct stat before {};
  ASSERT_EQ(::stat(pod.c_str(), &before), 0);
  const RunResult r = runLint({"--fix", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(readFile(pod), HasSubstr("      limits:\n        nvidia.com/gpu: 1\n"));
  struct stat after {};
  ASSERT_EQ(::stat(pod.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_NE(after.st_ino, before.st_ino);  // a new file renamed over the old, not the old truncated
  EXPECT_THAT(temporaries(dir.path()), ::testing::IsEmpty());
}

TEST(LintFixWriteBack, AWriteThatFailsHalfwayLeavesTheOriginalWhole) {
  // A full disk, simulated by a file size limit of 4096 bytes (prlimit
  // --fsize): the fixed text (over 4 KiB) cannot be written in full.
  // Before: the file was truncated and kept 4,096 of its bytes.
  if (runCommand({"sh", "-c", "command -v prlimit"}).exitCode != 0) GTEST_SKIP() << "prlimit not installed";
  TempDir dir;
  std::string big = "# " + std::string(4000, 'x') + "\n" + kFixablePod;
  const fs::path pod = dir.write("pod.yaml", big);
  ASSERT_GT(big.size(), 4096u);
  const RunResult r = runCommand({"prlimit", "--fsize=4096", lintBinary(), "--fix", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("cannot write the fixed file: cannot write the fixed text: File too large; the file "
                               "was left as it was"));
  EXPECT_EQ(readFile(pod), big);
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr(": fixed:")));  // nothing claims to be fixed
  EXPECT_THAT(r.err, HasSubstr(": not fixed: not written ("));
  // The file was read: what the fix would have changed remains, and is reported.
  EXPECT_THAT(r.out, HasSubstr("[gpu-requests-without-limits]"));
  EXPECT_THAT(r.out, HasSubstr("1 object"));
  EXPECT_THAT(temporaries(dir.path()), ::testing::IsEmpty());
}

// A 64 KiB tmpfs, mounted for the test (root only), unmounted whatever happens.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const fs::path& at) : at_(at) {
    fs::create_directories(at);
    mounted_ = ::geteuid() == 0 && runCommand({"mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", at.string()}).exitCode == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) runCommand({"umount", at_.string()});
  }
  bool mounted() const { return mounted_; }

 private:
  fs::path at_;
  bool mounted_ = false;
};

TEST(LintFixWriteBack, AFullDiskLeavesTheOriginalWhole) {
  TempDir dir;
  const SmallTmpfs disk(dir.path() / "disk");
  if (!disk.mounted()) GTEST_SKIP() << "needs root to mount a 64 KiB tmpfs";
  // A pod the fix makes longer (a toleration block), then the disk filled.
  const std::string pod =
      "# " + std::string(3900, 'x') +
      "\napiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  nodeSelector:\n"
      "    nvidia.com/cuda.driver-version.major: \"550\"\n  containers:\n  - name: c\n"
      "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
  const fs::path file = dir.write("disk/pod.yaml", pod);
  runCommand({"dd", "if=/dev/zero", "of=" + (dir.path() / "disk/fill").string(), "bs=1k", "count=128"});
  const RunResult r = runLint({"--fix", "pod.yaml"}, "", (dir.path() / "disk").string());
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("No space left on device; the file was left as it was"));
  EXPECT_EQ(readFile(file), pod);
  EXPECT_THAT(temporaries(dir.path() / "disk"), ::testing::IsEmpty());
}

TEST(LintFixWriteBack, ALinkThatLeadsOutOfTheTreeIsNotWrittenUnlessAsked) {
  TempDir dir;
  const fs::path outside = dir.write("outside/pod.yaml", kFixablePod);
  fs::create_directories(dir.path() / "tree");
  fs::create_symlink("../outside/pod.yaml", dir.path() / "tree/link.yaml");
  const RunResult r = runLint({"--fix", "tree"}, "", dir.str());
  EXPECT_EQ(readFile(outside), kFixablePod) << r.err;
  EXPECT_THAT(r.err, HasSubstr("outside the linted tree tree (a symbolic link); not written, --fix-follow-symlinks "
                               "writes it"));
  EXPECT_THAT(r.err, HasSubstr("fixed 0 findings in 0 files"));
  EXPECT_EQ(r.exitCode, 1);  // the finding stays

  const RunResult followed = runLint({"--fix", "--fix-follow-symlinks", "tree"}, "", dir.str());
  EXPECT_EQ(followed.exitCode, 0) << followed.err;
  EXPECT_THAT(readFile(outside), HasSubstr("      limits:\n"));
  EXPECT_TRUE(fs::is_symlink(dir.path() / "tree/link.yaml"));  // still a link: its target was rewritten
}

TEST(LintFixWriteBack, ALinkInsideTheTreeStaysALinkAndItsTargetIsFixed) {
  TempDir dir;
  const fs::path real = dir.write("tree/real/pod.yaml", kFixablePod);
  fs::create_symlink("real/pod.yaml", dir.path() / "tree/link.yaml");
  const RunResult r = runLint({"--fix", "tree/link.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_symlink(dir.path() / "tree/link.yaml"));
  EXPECT_THAT(readFile(real), HasSubstr("      limits:\n"));
}

TEST(LintFixWriteBack, AFileChangedSinceItWasReadIsLeftAsItIsNow) {
  // The seam runs between the temporary file and the rename, where an
  // editor's save would land. Before: --fix lost the edit (10 of 10 runs).
  TempDir dir;
  const fs::path pod = dir.write("pod.yaml", kFixablePod);
  const std::string edited = kFixablePod + "# saved by an editor meanwhile\n";
  lint::WriteBackOptions options;
  options.tree = dir.str();
  options.beforeReplace = [&] { std::ofstream(pod, std::ios::binary | std::ios::trunc) << edited; };
  const lint::WriteBackResult result = lint::writeBack(pod.string(), kFixablePod, "fixed text\n", options);
  EXPECT_EQ(result.status, lint::WriteBackResult::Status::Refused);
  EXPECT_EQ(result.message, "the file changed since it was read; left as it is now (run --fix again)");
  EXPECT_EQ(readFile(pod), edited);
  EXPECT_THAT(temporaries(dir.path()), ::testing::IsEmpty());
}

TEST(LintFixWriteBack, AFileReplacedSinceItWasReadIsLeftAsItIsNow) {
  TempDir dir;
  const fs::path pod = dir.write("pod.yaml", kFixablePod);
  lint::WriteBackOptions options;
  options.tree = dir.str();
  options.beforeReplace = [&] {  // same bytes, another file (a tool that saves by rename)
    dir.write("new.yaml", kFixablePod);
    fs::rename(dir.path() / "new.yaml", pod);
  };
  EXPECT_EQ(lint::writeBack(pod.string(), kFixablePod, "fixed\n", options).status,
            lint::WriteBackResult::Status::Refused);
  EXPECT_EQ(readFile(pod), kFixablePod);
}

TEST(LintReportTarget, OutputOverAnInputIsRefusedWhateverItsName) {
  TempDir dir;
  const fs::path pod = dir.write("pod.yaml", kFractionalPod);
  fs::create_hard_link(pod, dir.path() / "report.txt");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-o", "pod.yaml", "pod.yaml"}, {"--format", "json=./pod.yaml", "pod.yaml"},
        {"--format", "sarif=report.txt", "."}, {"-o", "report.txt", "pod.yaml"}}) {
    const RunResult r = runLint(args, "", dir.str());
    EXPECT_EQ(r.exitCode, 2) << args[1] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("refusing to write the report to")) << args[1];
    EXPECT_EQ(readFile(pod), kFractionalPod) << args[1];
  }
  const RunResult fine = runLint({"-o", "out.txt", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(fine.exitCode, 1) << fine.err;
  EXPECT_THAT(readFile(dir.path() / "out.txt"), HasSubstr("gpu-fractional"));
}

}  // namespace
}  // namespace gpuguard::lint_test
