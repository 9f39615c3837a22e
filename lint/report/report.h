// Writing a lint run's results in one of the output formats. Every format
// counts suppressed findings; the human formats list them only with
// --show-suppressed, SARIF always carries them (as suppressed results).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "lint/lint_file.h"
#include "rules/policy.h"

namespace gpuguard::lint {

struct RunSummary {
  std::size_t files = 0;
  std::size_t documents = 0;
  std::size_t errors = 0;      // unsuppressed error findings
  std::size_t warnings = 0;    // unsuppressed warning findings
  std::size_t suppressed = 0;
  std::size_t inputErrors = 0;
};

RunSummary summarize(const std::vector<FileReport>& reports);

// "2 errors, 1 warning, 0 suppressed in 3 objects (2 files)"
std::string summaryLine(const RunSummary& s);

// Where users read more about gpuguard (SARIF tool.driver.informationUri).
inline constexpr const char* kInformationUri = "https://gpuguard.io";
// docs/rules.md as published; "#<id>" is the section of a rule or built-in
// check (SARIF helpUri, --list-rules --format json). test/lint checks that
// every id has its section.
inline constexpr const char* kRulesDocUri = "https://gpuguard.io/docs/rules.md";

struct ReportOptions {
  bool color = false;           // text only: ANSI colours
  bool showSuppressed = false;  // list suppressed findings too
  std::string toolVersion = "0.0.0";
  const Policy* policy = nullptr;  // junit: which rules ran (null: the defaults)
};

void writeText(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);
void writeJson(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);
// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
void writeSarif(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);
// JUnit XML: one <testsuite> per file, one <testcase> per file x rule that ran.
void writeJunit(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);
// GitHub Actions workflow commands (::error file=...,line=...::message).
void writeGithub(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options);

// A path as a relative URI reference for SARIF: forward slashes, "./"
// dropped, percent-encoded; "<stdin>" becomes "stdin"; absolute paths are
// made relative to the working directory when inside it, else file:// URIs.
std::string sarifUri(const std::string& path);

// Text made safe for XML 1.0 content and attributes: &<>"' escaped, invalid
// UTF-8 replaced by U+FFFD, characters XML 1.0 forbids dropped; in
// attributes tabs and line breaks become character references.
std::string xmlEscape(std::string_view text, bool attribute);

// GitHub workflow command escaping: data (the message) escapes % CR LF;
// properties (file, title...) also escape ':' and ','.
// `text` with what a terminal or a CI log would act on made visible: C0
// controls (\n, \r, \t, ESC as \x1b...), DEL and the C1 controls (U+0080 to
// U+009F, as \u0085...) escaped, and bytes that are not UTF-8 as \xHH. For
// every path, name and message a human-readable format prints (text,
// github, stderr): a file name cannot start a line of its own (a GitHub
// Actions ::error:: command), move the cursor or colour the log.
// keepLineBreaks: CR and LF stay (for github's data, which encodes them).
std::string printable(std::string_view text, bool keepLineBreaks = false);

// `value` (a json or ordered_json) as dump(2) prints it `indent` spaces
// deep inside a larger document (every line after the first indented),
// invalid UTF-8 replaced: how the JSON formats write their findings one by
// one.
template <typename Json>
std::string dumpIndented(const Json& value, std::size_t indent) {
  const std::string text = value.dump(2, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(indent, ' ');  // strings hold no raw line breaks: JSON escapes them
  }
  return out;
}

std::string githubEscapeData(std::string_view text);
std::string githubEscapeProperty(std::string_view text);

}  // namespace gpuguard::lint
