// What the linter prints cannot be steered by what it reads (issue 23): a
// file name holding a line break and "::error::" cannot start a GitHub
// Actions workflow command, an ESC sequence cannot colour or move the log;
// and a file with CR-only line breaks is read as kubectl reads it, not as
// one long comment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "lint/fix/fix.h"
#include "lint/lint_file.h"
#include "lint/report/report.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHostileName = "pod\n::error::x\x1b[31m.yaml";
const std::string kShownName = "pod\\n::error::x\\x1b[31m.yaml";

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(LintHostileNames, PrintableEscapesC0DelC1AndInvalidBytes) {
  EXPECT_EQ(lint::printable("a\nb\rc\td\x1b[0m\x7f"), "a\\nb\\rc\\td\\x1b[0m\\x7f");
  EXPECT_EQ(lint::printable("nel\xc2\x85 csi\xc2\x9b"), "nel\\u0085 csi\\u009b");
  EXPECT_EQ(lint::printable("caf\xc3\xa9 \xe2\x9c\x93 \xff"), "caf\xc3\xa9 \xe2\x9c\x93 \\xff");  // UTF-8 stays
  EXPECT_EQ(lint::printable("a\nb", true), "a\nb");
  EXPECT_EQ(lint::printable("deploy/pod.yaml"), "deploy/pod.yaml");
}

TEST(LintHostileNames, TextOutputShowsTheNameEscapedOnOneLine) {
  TempDir dir;
  dir.write(kHostileName, kFractionalPod);
  const RunResult r = runLint({"--color", "never", "."}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("./" + kShownName + ":17:25: error: Pod/fractional:"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  for (const std::string& line : linesOf(r.out)) EXPECT_FALSE(line.starts_with("::")) << line;
}

TEST(LintHostileNames, GithubOutputCannotStartAWorkflowCommand) {
  TempDir dir;
  dir.write(kHostileName, kFractionalPod);
  const RunResult r = runLint({"--format", "github", "."}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const std::vector<std::string> lines = linesOf(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;  // one annotation, the summary
  // The line break as the runner unescapes it (%0A): the annotation names the real file.
  EXPECT_TRUE(lines[0].starts_with("::error file=pod%0A%3A%3Aerror%3A%3Ax\\x1b[31m.yaml,line=17,col=25,title="))
      << lines[0];
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(LintHostileNames, StderrNotesEscapeNamesToo) {
  TempDir dir;
  dir.write(kHostileName, "values: {}\n");
  const RunResult r = runLint({kHostileName}, "", dir.str());
  EXPECT_THAT(r.err, HasSubstr("no Kubernetes objects found in " + kShownName));
  for (const std::string& line : linesOf(r.err)) EXPECT_FALSE(line.starts_with("::")) << line;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

// --- CR-only line breaks -------------------------------------------------------------

std::string withCrOnly(std::string text) {
  for (char& c : text) c = c == '\n' ? '\r' : c;
  return text;
}

TEST(LintCrOnlyLineBreaks, AreLineBreaksAsInKubectlNotOneLongComment) {
  // Before: a file starting with a comment was one comment line, "no objects".
  const std::string file = withCrOnly("# the training pod\n" + std::string(kFractionalPod));
  const lint::FileReport report = lint::lintText("pod.yaml", file, lint::LintPolicy{});
  EXPECT_TRUE(report.errors.empty());
  EXPECT_EQ(report.documents, 1u);
  ASSERT_FALSE(report.findings.empty());
  EXPECT_EQ(report.findings[0].finding.rule, "gpu-fractional");
  EXPECT_EQ(report.findings[0].line, 18);  // counted in CRs, as go-yaml and editors count them
  EXPECT_EQ(report.findings[0].column, 25);
}

TEST(LintCrOnlyLineBreaks, KubectlReadsOnlyTheFirstDocumentAndSoDoesTheLinter) {
  // kubectl's reader ends lines at LF only: the "---" after a CR cuts no
  // document, and its YAML parser reads one document of what it is given.
  // The fractional GPU of the second pod is never sent, so never judged.
  const std::string file = withCrOnly(std::string(kGoodPod) + "---\n" + kFractionalPod);
  const lint::FileReport report = lint::lintText("pods.yaml", file, lint::LintPolicy{});
  EXPECT_TRUE(report.errors.empty());
  EXPECT_EQ(report.documents, 1u);
  ASSERT_EQ(report.findings.size(), 1u);
  const lint::Located& warning = report.findings[0];
  EXPECT_EQ(warning.finding.rule, "ignored-content");
  EXPECT_EQ(warning.finding.severity, Severity::Warning);
  EXPECT_EQ(warning.line, 18);  // the "---" line, counted in CRs
  EXPECT_EQ(warning.object.name, "good");  // on the document kubectl applies
  EXPECT_THAT(warning.finding.message(),
              HasSubstr("CR-only line breaks: kubectl reads only the first document of this file"));
  EXPECT_THAT(warning.finding.message(), HasSubstr("the 1 document from line 18 on is never applied"));
  EXPECT_THAT(warning.finding.message(), HasSubstr("convert CR-only line breaks to LF"));
}

TEST(LintCrOnlyLineBreaks, AFileStartingWithASeparatorIsOneInvalidSeparatorLineToKubectl) {
  // The whole file is one line to kubectl, and it starts with "---":
  // "invalid Yaml document separator: apiVersion: v1...", nothing applied.
  const std::string file = withCrOnly("---\n" + std::string(kFractionalPod));
  const lint::FileReport report = lint::lintText("pod.yaml", file, lint::LintPolicy{});
  EXPECT_EQ(report.documents, 0u);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0].line, 1);
  EXPECT_THAT(report.errors[0].message, HasSubstr("invalid Yaml document separator: apiVersion: v1..."));
}

TEST(LintCrOnlyLineBreaks, LfLinesStillSeparateDocumentsInAMixedFile) {
  // Two CR-only parts joined by an LF "---" line: kubectl reads the first
  // document of each part.
  const std::string part = withCrOnly(std::string(kGoodPod) + "---\n" + kGoodPod);
  const lint::FileReport report =
      lint::lintText("pods.yaml", part + "\n---\n" + withCrOnly(kFractionalPod), lint::LintPolicy{});
  EXPECT_TRUE(report.errors.empty());
  EXPECT_EQ(report.documents, 2u);
  std::vector<std::string> rules;
  for (const lint::Located& l : report.findings) rules.push_back(l.finding.rule);
  EXPECT_THAT(rules, ::testing::UnorderedElementsAre("ignored-content", "gpu-fractional"));
  for (const lint::Located& l : report.findings) {
    if (l.finding.rule == "ignored-content") {
      EXPECT_THAT(l.finding.message(), HasSubstr("only the first document of the lines up to the next LF line break"));
    }
  }
}

TEST(LintCrOnlyLineBreaks, FixLeavesSuchAFileAloneWithAReason) {
  const std::string file = withCrOnly(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  containers:\n  - name: c\n"
      "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n");
  const lint::FixResult fixed = lint::fixText(file, lint::LintPolicy{});
  EXPECT_FALSE(fixed.changed);
  ASSERT_EQ(fixed.notes.size(), 1u);
  EXPECT_THAT(fixed.notes[0].message, HasSubstr("line breaks are CR only"));
}

TEST(LintCrOnlyLineBreaks, CrlfFilesAreUntouched) {
  std::string crlf;
  for (char c : std::string(kFractionalPod)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const lint::FileReport report = lint::lintText("pod.yaml", crlf, lint::LintPolicy{});
  ASSERT_FALSE(report.findings.empty());
  EXPECT_EQ(report.findings[0].line, 17);
}

}  // namespace
}  // namespace gpuguard::lint_test
