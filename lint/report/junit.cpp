// --format junit: JUnit XML as GitLab, Jenkins (junit plugin) and the GitHub
// test-report actions read it. Each Kubernetes object is a test case:
//
//   <testsuites name="gpuguard-lint" tests= failures= errors= skipped=>
//     <testsuite name="FILE" ...>           one per input (file, kustomization, chart)
//       <properties> objects, errors, warnings, suppressed, rules </properties>
//       <testcase name="Kind/namespace/name" classname="FILE-without-extension" file="FILE">
//                                          one per object judged (a List's items one by one)
//         <failure message= type="RULE">   when a rule found an error in it
//         <skipped message=>               when all it found was suppressed
//         <system-out>                     warnings and suppressed findings
//       <testcase name="input" ...><error> an input that could not be read, parsed or rendered
//
// Warnings do not fail a testcase (they do not fail the run either, unless
// --fail-on warning). classname drops the file extension because Jenkins
// reads the last dot of a classname as a package separator.
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lint/report/report.h"
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

// The findings of each object of `r`, by its place in r.objects: findings
// are found by (document, pointer), in one pass, and read one object's at a
// time.
std::vector<std::vector<std::uint32_t>> findingsByObject(const FileReport& r) {
  auto keyOf = [](std::size_t document, const std::string& pointer) {
    return std::to_string(document) + '\0' + pointer;
  };
  std::unordered_map<std::string, std::vector<std::uint32_t>> objectsAt;
  for (std::size_t o = 0; o < r.objects.size(); ++o) {
    objectsAt[keyOf(r.objects[o].document, r.objects[o].ref.pointer)].push_back(static_cast<std::uint32_t>(o));
  }
  std::vector<std::vector<std::uint32_t>> found(r.objects.size());
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    const Located l = r.findings[i];
    const auto at = objectsAt.find(keyOf(l.document, l.object.pointer));
    if (at == objectsAt.end()) continue;
    for (std::uint32_t o : at->second) found[o].push_back(static_cast<std::uint32_t>(i));
  }
  return found;
}

// One object's findings: the errors that fail its testcase, the rest.
struct CaseFindings {
  std::vector<Located> failing, other;
};

CaseFindings caseFindings(const FileReport& r, const std::vector<std::uint32_t>& mine) {
  CaseFindings found;
  for (std::uint32_t i : mine) {
    Located l = r.findings[i];
    const bool fails = !l.finding.suppressed && l.finding.severity == Severity::Error;
    (fails ? found.failing : found.other).push_back(std::move(l));
  }
  return found;
}

bool allSuppressed(const std::vector<Located>& findings) {
  return std::all_of(findings.begin(), findings.end(), [](const Located& l) { return l.finding.suppressed; });
}

// What one file's testsuite counts, known before its testcases are written.
struct SuiteCounts {
  Counts suite;
  std::size_t errors = 0, warnings = 0, suppressed = 0;
};

SuiteCounts countSuite(const FileReport& r, const std::vector<std::vector<std::uint32_t>>& byObject) {
  SuiteCounts c;
  c.suite.tests = r.errors.size() + r.objects.size();
  c.suite.errors = r.errors.size();
  for (const std::vector<std::uint32_t>& mine : byObject) {
    const CaseFindings found = caseFindings(r, mine);
    c.errors += found.failing.size();
    for (const Located& l : found.other) ++(l.finding.suppressed ? c.suppressed : c.warnings);
    if (!found.failing.empty()) ++c.suite.failures;
    else if (!found.other.empty() && allSuppressed(found.other)) ++c.suite.skipped;
  }
  return c;
}

// One object's testcase.
void writeCase(std::ostream& cases, const FileReport& r, const FileReport::Object& object, const CaseFindings& found) {
  const std::vector<Located>& failing = found.failing;
  const std::vector<Located>& other = found.other;
  // The file of its first finding: for a rendered unit, where the object's source is.
  const std::vector<Located>& any = failing.empty() ? other : failing;
  const std::string file = any.empty() ? r.file : fileOf(r, any.front());
  cases << "    <testcase name=\"" << attr(object.ref.display()) << "\" classname=\"" << attr(className(r.file))
        << "\" file=\"" << attr(file) << "\" time=\"0\"";
  if (failing.empty() && other.empty()) {
    cases << "/>\n";
    return;
  }
  cases << ">\n";
  auto line = [&](const Located& l, const char* label) {
    const Finding& f = l.finding;
    return where(fileOf(r, l), l.line, l.column) + ": " + label + ": " + f.fieldError() + " [" + f.rule + "]" +
           (f.suppressed ? " (" + f.suppressionReason + ")" : "") + "\n";
  };
  if (!failing.empty()) {
    std::string body;
    for (const Located& l : failing) body += line(l, "error");
    const Located& first = failing.front();
    const std::string message = std::to_string(failing.size()) + (failing.size() == 1 ? " error" : " errors") + ": " +
                                first.finding.rule + ": " + first.finding.fieldError();
    cases << "      <failure message=\"" << attr(message) << "\" type=\"" << attr(first.finding.rule) << "\">"
          << text(body) << "</failure>\n";
  } else if (allSuppressed(other)) {
    std::string reasons;
    for (const Located& l : other) reasons += (reasons.empty() ? "" : "; ") + l.finding.rule + ": " + l.finding.suppressionReason;
    cases << "      <skipped message=\"" << attr("suppressed: " + reasons) << "\"/>\n";
  }
  if (!other.empty()) {
    std::string body;
    for (const Located& l : other) body += line(l, l.finding.suppressed ? "suppressed" : "warning");
    cases << "      <system-out>" << text(body) << "</system-out>\n";
  }
  cases << "    </testcase>\n";
}

void writeSuite(std::ostream& out, const FileReport& r, const SuiteCounts& c,
                const std::vector<std::vector<std::uint32_t>>& byObject, const std::string& activeRules) {
  out << "  <testsuite name=\"" << attr(r.file) << "\" " << counts(c.suite) << ">\n"
      << "    <properties>\n"
      << "      <property name=\"gpuguard.objects\" value=\"" << r.documents << "\"/>\n"
      << "      <property name=\"gpuguard.errors\" value=\"" << c.errors << "\"/>\n"
      << "      <property name=\"gpuguard.warnings\" value=\"" << c.warnings << "\"/>\n"
      << "      <property name=\"gpuguard.suppressed\" value=\"" << c.suppressed << "\"/>\n"
      << "      <property name=\"gpuguard.rules\" value=\"" << attr(activeRules) << "\"/>\n"
      << "    </properties>\n";
  const std::string cls = attr(className(r.file));
  for (const InputError& e : r.errors) {
    out << "    <testcase name=\"input\" classname=\"" << cls << "\" file=\"" << attr(e.file) << "\" time=\"0\">\n"
        << "      <error message=\"" << attr(e.message) << "\" type=\"" << attr(kInputErrorCheck.id) << "\">"
        << text(where(e.file, e.line, e.column) + ": " + e.message) << "</error>\n"
        << "    </testcase>\n";
  }
  for (std::size_t o = 0; o < r.objects.size(); ++o) writeCase(out, r, r.objects[o], caseFindings(r, byObject[o]));
  out << "  </testsuite>\n";
}

}  // namespace

// Written as it goes, in two passes over the findings: the counts that the
// opening tags carry first, then the testcases (a run's whole XML was once
// built in memory before it was written: 217 MB for 20,000 objects).
void writeJunit(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  const Policy defaults;
  const Policy& policy = options.policy ? *options.policy : defaults;
  std::string activeRules;
  for (const Rule* r : allRules()) {
    if (policy.severityOf(r->id(), r->doc().defaultSeverity)) activeRules += (activeRules.empty() ? "" : ",") + std::string(r->id());
  }
  Counts total;
  std::vector<SuiteCounts> suites;
  for (const FileReport& r : reports) {
    suites.push_back(countSuite(r, findingsByObject(r)));
    total.tests += suites.back().suite.tests;
    total.failures += suites.back().suite.failures;
    total.errors += suites.back().suite.errors;
    total.skipped += suites.back().suite.skipped;
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gpuguard-lint\" " << counts(total) << ">\n";
  for (std::size_t i = 0; i < reports.size(); ++i) writeSuite(out, reports[i], suites[i], findingsByObject(reports[i]), activeRules);
  out << "</testsuites>\n";
}

}  // namespace gpuguard::lint
