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
#include <sstream>

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

bool belongsTo(const Located& l, const FileReport::Object& o) {
  return l.document == o.document && l.object.pointer == o.ref.pointer;
}

// One object's testcase.
void writeCase(std::ostream& cases, const FileReport& r, const FileReport::Object& object, Counts& suite,
               std::size_t& errors, std::size_t& warnings, std::size_t& suppressed) {
  std::vector<const Located*> failing, other;
  for (const Located& l : r.findings) {
    if (!belongsTo(l, object)) continue;
    if (l.finding.suppressed) ++suppressed;
    else if (l.finding.severity == Severity::Error) ++errors;
    else ++warnings;
    (!l.finding.suppressed && l.finding.severity == Severity::Error ? failing : other).push_back(&l);
  }
  ++suite.tests;
  // The file of its first finding: for a rendered unit, where the object's source is.
  const std::vector<const Located*>& any = failing.empty() ? other : failing;
  const std::string file = any.empty() ? r.file : fileOf(r, *any.front());
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
    ++suite.failures;
    std::string body;
    for (const Located* l : failing) body += line(*l, "error");
    const Located& first = *failing.front();
    const std::string message = std::to_string(failing.size()) + (failing.size() == 1 ? " error" : " errors") + ": " +
                                first.finding.rule + ": " + first.finding.fieldError();
    cases << "      <failure message=\"" << attr(message) << "\" type=\"" << attr(first.finding.rule) << "\">"
          << text(body) << "</failure>\n";
  } else if (std::all_of(other.begin(), other.end(), [](const Located* l) { return l->finding.suppressed; })) {
    ++suite.skipped;
    std::string reasons;
    for (const Located* l : other) reasons += (reasons.empty() ? "" : "; ") + l->finding.rule + ": " + l->finding.suppressionReason;
    cases << "      <skipped message=\"" << attr("suppressed: " + reasons) << "\"/>\n";
  }
  if (!other.empty()) {
    std::string body;
    for (const Located* l : other) body += line(*l, l->finding.suppressed ? "suppressed" : "warning");
    cases << "      <system-out>" << text(body) << "</system-out>\n";
  }
  cases << "    </testcase>\n";
}

}  // namespace

void writeJunit(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  const Policy defaults;
  const Policy& policy = options.policy ? *options.policy : defaults;
  std::string activeRules;
  for (const Rule* r : allRules()) {
    if (policy.severityOf(r->id(), r->doc().defaultSeverity)) activeRules += (activeRules.empty() ? "" : ",") + std::string(r->id());
  }

  Counts total;
  std::ostringstream suites;
  for (const FileReport& r : reports) {
    Counts suite;
    std::size_t errors = 0, warnings = 0, suppressed = 0;
    std::ostringstream cases;
    const std::string cls = attr(className(r.file));
    for (const InputError& e : r.errors) {
      ++suite.tests;
      ++suite.errors;
      cases << "    <testcase name=\"input\" classname=\"" << cls << "\" file=\"" << attr(e.file) << "\" time=\"0\">\n"
            << "      <error message=\"" << attr(e.message) << "\" type=\"" << attr(kInputErrorCheck.id) << "\">"
            << text(where(e.file, e.line, e.column) + ": " + e.message) << "</error>\n"
            << "    </testcase>\n";
    }
    for (const FileReport::Object& object : r.objects) writeCase(cases, r, object, suite, errors, warnings, suppressed);
    total.tests += suite.tests;
    total.failures += suite.failures;
    total.errors += suite.errors;
    total.skipped += suite.skipped;
    suites << "  <testsuite name=\"" << attr(r.file) << "\" " << counts(suite) << ">\n"
           << "    <properties>\n"
           << "      <property name=\"gpuguard.objects\" value=\"" << r.documents << "\"/>\n"
           << "      <property name=\"gpuguard.errors\" value=\"" << errors << "\"/>\n"
           << "      <property name=\"gpuguard.warnings\" value=\"" << warnings << "\"/>\n"
           << "      <property name=\"gpuguard.suppressed\" value=\"" << suppressed << "\"/>\n"
           << "      <property name=\"gpuguard.rules\" value=\"" << attr(activeRules) << "\"/>\n"
           << "    </properties>\n"
           << cases.str() << "  </testsuite>\n";
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gpuguard-lint\" " << counts(total) << ">\n"
      << suites.str() << "</testsuites>\n";
}

}  // namespace gpuguard::lint
