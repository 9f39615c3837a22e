// --format junit: JUnit XML as GitLab, Jenkins (junit plugin) and the GitHub
// test-report actions read it.
//
//   <testsuites name="gpuguard-lint" tests= failures= errors= skipped=>
//     <testsuite name="FILE" ...>           one per input file
//       <properties> objects, errors, warnings, suppressed </properties>
//       <testcase name="RULE" classname="FILE-without-extension" file="FILE">
//                                          one per rule that ran on the file
//         <failure message= type="error">  when the rule found an error
//         <skipped message=>               when all it found was suppressed
//         <system-out>                     warnings and suppressed findings
//       <testcase name="input" ...><error> a file that could not be read or parsed
//
// Warnings do not fail a testcase (they do not fail the run either).
// classname drops the file extension because Jenkins reads the last dot of a
// classname as a package separator.
#include <algorithm>
#include <sstream>

#include "lint/report.h"
#include "rules/registry.h"

namespace gpuguard::lint {
namespace {

std::string attr(std::string_view s) { return xmlEscape(s, true); }
std::string text(std::string_view s) { return xmlEscape(s, false); }

std::string className(const std::string& file) {
  std::string name = file == "<stdin>" ? "stdin" : file;
  const std::size_t slash = name.rfind('/');
  const std::size_t dot = name.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) name.erase(dot);
  return name;
}

std::string where(const std::string& file, int line, int column) {
  return line > 0 ? file + ":" + std::to_string(line) + ":" + std::to_string(column) : file;
}

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
};

std::string counts(const Counts& c) {
  return "tests=\"" + std::to_string(c.tests) + "\" failures=\"" + std::to_string(c.failures) + "\" errors=\"" +
         std::to_string(c.errors) + "\" skipped=\"" + std::to_string(c.skipped) + "\" time=\"0\"";
}

}  // namespace

void writeJunit(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  const Policy defaults;
  const Policy& policy = options.policy ? *options.policy : defaults;
  std::vector<const Rule*> active;
  for (const Rule* r : allRules()) {
    if (policy.severityOf(r->id(), r->doc().defaultSeverity)) active.push_back(r);
  }

  Counts total;
  std::ostringstream suites;
  for (const FileReport& r : reports) {
    Counts suite;
    std::size_t errors = 0, warnings = 0, suppressed = 0;
    std::ostringstream cases;
    const std::string cls = attr(className(r.file));
    const std::string file = attr(r.file);
    for (const InputError& e : r.errors) {
      ++suite.tests;
      ++suite.errors;
      cases << "    <testcase name=\"input\" classname=\"" << cls << "\" file=\"" << file << "\" time=\"0\">\n"
            << "      <error message=\"" << attr(e.message) << "\" type=\"input-error\">"
            << text(where(e.file, e.line, e.column) + ": " + e.message) << "</error>\n"
            << "    </testcase>\n";
    }
    // The rules that ran, then the linter's own checks of how the file is
    // written when they found something (lint_file.h).
    std::vector<std::string_view> checks;
    if (r.documents > 0) {
      for (const Rule* rule : active) checks.push_back(rule->id());
      for (const SourceCheck& c : kSourceChecks) {
        if (std::any_of(r.findings.begin(), r.findings.end(), [&](const Located& l) { return l.finding.rule == c.id; }))
          checks.push_back(c.id);
      }
    }
    for (const std::string_view id : checks) {
      std::vector<const Located*> failing, other;
      std::size_t ruleSuppressed = 0;
      for (const Located& l : r.findings) {
        if (l.finding.rule != id) continue;
        if (l.finding.suppressed) ++ruleSuppressed, ++suppressed;
        else if (l.finding.severity == Severity::Error) ++errors;
        else ++warnings;
        (!l.finding.suppressed && l.finding.severity == Severity::Error ? failing : other).push_back(&l);
      }
      ++suite.tests;
      cases << "    <testcase name=\"" << attr(id) << "\" classname=\"" << cls << "\" file=\"" << file
            << "\" time=\"0\"";
      if (failing.empty() && other.empty()) {
        cases << "/>\n";
        continue;
      }
      cases << ">\n";
      if (!failing.empty()) {
        ++suite.failures;
        std::string body;
        for (const Located* l : failing) {
          body += where(r.file, l->line, l->column) + ": error: " + l->finding.fieldError() + "\n";
        }
        const std::string message = std::to_string(failing.size()) + (failing.size() == 1 ? " error" : " errors") +
                                    " at line " + std::to_string(failing.front()->line) + ": " +
                                    failing.front()->finding.message;
        cases << "      <failure message=\"" << attr(message) << "\" type=\"error\">" << text(body)
              << "</failure>\n";
      } else if (ruleSuppressed == other.size()) {
        ++suite.skipped;
        std::string reasons;
        for (const Located* l : other) reasons += (reasons.empty() ? "" : "; ") + l->finding.suppressionReason;
        cases << "      <skipped message=\"" << attr("suppressed: " + reasons) << "\"/>\n";
      }
      if (!other.empty()) {
        std::string body;
        for (const Located* l : other) {
          const Finding& f = l->finding;
          body += where(r.file, l->line, l->column) + (f.suppressed ? ": suppressed: " : ": warning: ") +
                  f.fieldError() + (f.suppressed ? " (" + f.suppressionReason + ")" : "") + "\n";
        }
        cases << "      <system-out>" << text(body) << "</system-out>\n";
      }
      cases << "    </testcase>\n";
    }
    total.tests += suite.tests;
    total.failures += suite.failures;
    total.errors += suite.errors;
    total.skipped += suite.skipped;
    suites << "  <testsuite name=\"" << file << "\" " << counts(suite) << ">\n"
           << "    <properties>\n"
           << "      <property name=\"gpuguard.objects\" value=\"" << r.documents << "\"/>\n"
           << "      <property name=\"gpuguard.errors\" value=\"" << errors << "\"/>\n"
           << "      <property name=\"gpuguard.warnings\" value=\"" << warnings << "\"/>\n"
           << "      <property name=\"gpuguard.suppressed\" value=\"" << suppressed << "\"/>\n"
           << "    </properties>\n"
           << cases.str() << "  </testsuite>\n";
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gpuguard-lint\" " << counts(total) << ">\n"
      << suites.str() << "</testsuites>\n";
}

}  // namespace gpuguard::lint
