// gpuguard-lint --fix, specified by file pairs: each folder under
// test/data/fix/ is one case, a test named after the folder
// (FixCases/LintFixCase.InputFixedIsExpected/<folder, '-' as '_'>).
//   input.yaml           the file as written (bytes as they are: CRLF, a byte
//                        order mark, no final newline)
//   expected.yaml        fixText(input) with the default policy, byte for byte
//   expected-notes.txt   its notes, "LINE:COLUMN fixed|not fixed RULE: MESSAGE",
//                        then "left: RULE" for each finding the fixed file still has
// Every case also holds that fixing the expected file again changes nothing.
// A new case is a new folder, no C++ (README.md there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lint/fix/fix.h"
#include "lint/lint_file.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

namespace fs = std::filesystem;

fs::path casesDir() { return fs::path(sourceDir()) / "test/data/fix"; }

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(casesDir())) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// GoogleTest names allow letters, digits and '_' only.
std::string testNameOf(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) == 0; }, '_');
  return name;
}

// The notes of a fix, then the rules the fixed text still breaks.
std::string notesAndLeftOf(const lint::FixResult& r) {
  std::string s;
  for (const lint::FixNote& n : r.notes) {
    s += std::to_string(n.line) + ":" + std::to_string(n.column) + " " + (n.fixed ? "fixed " : "not fixed ") + n.rule +
         ": " + n.message + "\n";
  }
  for (const lint::Located& l : lint::lintText("input.yaml", r.text, lint::LintPolicy{}).findings) {
    if (!l.finding.suppressed) s += "left: " + l.finding.rule + "\n";
  }
  return s;
}

void writeFile(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// GPUGUARD_UPDATE_FIX_CASES=1 writes the expected files from what --fix does
// now; review them (git diff) before committing.
bool updating() {
  const char* v = std::getenv("GPUGUARD_UPDATE_FIX_CASES");
  return v != nullptr && std::string(v) == "1";
}

class LintFixCase : public ::testing::TestWithParam<std::string> {};

TEST_P(LintFixCase, InputFixedIsExpected) {
  const fs::path dir = casesDir() / GetParam();
  ASSERT_TRUE(fs::exists(dir / "input.yaml")) << dir << " has no input.yaml";
  const lint::FixResult r = lint::fixText(readFile(dir / "input.yaml"), lint::LintPolicy{});
  const std::string notes = notesAndLeftOf(r);
  if (updating()) {
    writeFile(dir / "expected.yaml", r.text);
    writeFile(dir / "expected-notes.txt", notes);
  }
  ASSERT_TRUE(fs::exists(dir / "expected.yaml")) << dir << " has no expected.yaml";
  ASSERT_TRUE(fs::exists(dir / "expected-notes.txt")) << dir << " has no expected-notes.txt";
  EXPECT_EQ(r.text, readFile(dir / "expected.yaml")) << notes;
  EXPECT_EQ(notes, readFile(dir / "expected-notes.txt"));
  EXPECT_EQ(r.changed, r.text != readFile(dir / "input.yaml"));
  const auto fixedNotes = std::count_if(r.notes.begin(), r.notes.end(), [](const lint::FixNote& n) { return n.fixed; });
  EXPECT_EQ(r.fixed, static_cast<std::size_t>(fixedNotes));

  const lint::FixResult again = lint::fixText(r.text, lint::LintPolicy{});
  EXPECT_FALSE(again.changed) << "fixing the fixed file again changed it:\n" << again.text;
}

INSTANTIATE_TEST_SUITE_P(FixCases, LintFixCase, ::testing::ValuesIn(caseNames()), testNameOf);

}  // namespace
}  // namespace gpuguard::lint_test
