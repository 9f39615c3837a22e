// --format json: one JSON object on stdout, always, for scripts and CI.
#include <nlohmann/json.hpp>

#include "lint/report.h"

namespace gpuguard::lint {
namespace {

nlohmann::json objectJson(const ObjectRef& o) {
  return {{"apiVersion", o.apiVersion}, {"kind", o.kind}, {"namespace", o.ns}, {"name", o.name}};
}

}  // namespace

void writeJson(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  using nlohmann::json;
  json findings = json::array();
  json errors = json::array();
  for (const FileReport& r : reports) {
    for (const InputError& e : r.errors) {
      errors.push_back({{"file", e.file}, {"line", e.line}, {"column", e.column}, {"message", e.message}});
    }
    for (const Located& l : r.findings) {
      const Finding& f = l.finding;
      if (f.suppressed && !options.showSuppressed) continue;
      json j = {{"rule", f.rule},           {"severity", severityName(f.severity)},
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
      findings.push_back(std::move(j));
    }
  }
  const RunSummary s = summarize(reports);
  json summary = {{"files", s.files},       {"objects", s.documents},   {"errors", s.errors},
                  {"warnings", s.warnings}, {"suppressed", s.suppressed}, {"unreadable", s.inputErrors}};
  out << json{{"findings", std::move(findings)}, {"errors", std::move(errors)}, {"summary", std::move(summary)}}.dump(
             2, ' ', false, json::error_handler_t::replace)
      << "\n";
}

}  // namespace gpuguard::lint
