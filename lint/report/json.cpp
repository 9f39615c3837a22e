// --format json: one JSON object on stdout, always, for scripts and CI.
#include <nlohmann/json.hpp>

#include "lint/report/report.h"

namespace gpuguard::lint {
namespace {

nlohmann::json objectJson(const ObjectRef& o) {
  return {{"apiVersion", o.apiVersion}, {"kind", o.kind}, {"namespace", o.ns}, {"name", o.name}};
}

nlohmann::json findingJson(const FileReport& r, const Located& l) {
  const Finding& f = l.finding;
  nlohmann::json j = {{"rule", f.rule},           {"severity", severityName(f.severity)},
                      {"file", fileOf(r, l)},     {"line", l.line},
                      {"column", l.column},       {"document", l.document},
                      {"object", objectJson(l.object)}, {"podTemplate", l.object.podTemplate},
                      {"field", f.field()},       {"pointer", f.pointer()},
                      {"value", f.value},         {"message", f.message()}};
  if (!l.file.empty()) j["renderedFrom"] = r.file;  // a kustomization or chart
  if (f.suppressed) {
    j["suppressed"] = true;
    j["suppressionReason"] = f.suppressionReason;
  }
  return j;
}

}  // namespace

// The report is printed as dump(2) of {errors, findings, summary} would
// print it (keys in order), but finding by finding: a report of 100,000
// findings is never held whole as JSON too.
void writeJson(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  using nlohmann::json;
  json errors = json::array();
  for (const FileReport& r : reports) {
    for (const InputError& e : r.errors) {
      errors.push_back({{"file", e.file}, {"line", e.line}, {"column", e.column}, {"message", e.message}});
    }
  }
  out << "{\n  \"errors\": " << dumpIndented(errors, 2) << ",\n  \"findings\": [";
  bool first = true;
  for (const FileReport& r : reports) {
    for (const Located& l : r.findings) {
      if (l.finding.suppressed && !options.showSuppressed) continue;
      out << (first ? "\n    " : ",\n    ") << dumpIndented(findingJson(r, l), 4);
      first = false;
    }
  }
  out << (first ? "]" : "\n  ]");
  const RunSummary s = summarize(reports);
  const json summary = {{"files", s.files},       {"objects", s.documents},   {"errors", s.errors},
                        {"warnings", s.warnings}, {"suppressed", s.suppressed}, {"unreadable", s.inputErrors}};
  out << ",\n  \"summary\": " << dumpIndented(summary, 2) << "\n}\n";
}

}  // namespace gpuguard::lint
