// --format github: GitHub Actions workflow commands. Each finding becomes an
// annotation on the file and line in the pull request:
//   ::error file=deploy/pod.yaml,line=17,col=27,title=gpu-fractional Pod/team-a/half::spec.containers[0]...
// Properties escape % CR LF : , and the message escapes % CR LF, as the
// Actions runner expects; other control characters (ESC...) are made
// visible first (printable), in the title CR and LF too. Suppressed findings are counted in the closing
// line, and shown as notices with --show-suppressed.
#include "lint/report/report.h"

namespace gpuguard::lint {
namespace {

std::string location(const std::string& file, int line, int column) {
  if (file == "<stdin>") return "";  // no file to attach it to
  // A line break in a file name is escaped as the runner reads it (%0A), so
  // the annotation still names the real file.
  std::string s = "file=" + githubEscapeProperty(printable(file.starts_with("./") ? file.substr(2) : file, true));
  if (line > 0) s += ",line=" + std::to_string(line);
  if (line > 0 && column > 0) s += ",col=" + std::to_string(column);
  return s;
}

void command(std::ostream& out, const char* name, const std::string& loc, std::string_view title,
             const std::string& message) {
  out << "::" << name << " " << loc << (loc.empty() ? "" : ",") << "title=" << githubEscapeProperty(printable(title))
      << "::" << githubEscapeData(printable(message, true)) << "\n";
}

}  // namespace

void writeGithub(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  for (const FileReport& r : reports) {
    for (const InputError& e : r.errors) {
      const std::string prefix = r.file == "<stdin>" && e.line > 0
                                     ? "stdin:" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": "
                                     : "";
      command(out, "error", location(e.file, e.line, e.column), "gpuguard-lint: cannot lint", prefix + e.message);
    }
    for (const Located& l : r.findings) {
      const Finding& f = l.finding;
      if (f.suppressed && !options.showSuppressed) continue;
      const std::string& file = fileOf(r, l);
      const std::string prefix =
          file == "<stdin>" ? "stdin:" + std::to_string(l.line) + ":" + std::to_string(l.column) + ": " : "";
      // The title names the rule and the object: the annotation's headline.
      const std::string title = f.rule + " " + l.object.display();
      if (f.suppressed) {
        command(out, "notice", location(file, l.line, l.column), title + " (suppressed)",
                prefix + f.fieldError() + " (suppressed: " + f.suppressionReason + ")");
      } else {
        command(out, f.severity == Severity::Error ? "error" : "warning", location(file, l.line, l.column), title,
                prefix + f.fieldError());
      }
    }
  }
  out << "gpuguard-lint: " << summaryLine(summarize(reports)) << "\n";
}

}  // namespace gpuguard::lint
