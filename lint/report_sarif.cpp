// --format sarif: SARIF 2.1.0 (OASIS), as GitHub code scanning and other
// SARIF viewers read it. One run; tool.driver.rules holds every rule of the
// registry with its documentation; suppressed findings are results with an
// inSource suppression (so viewers count them); inputs that could not be
// read or parsed are tool execution notifications.
#include <nlohmann/json.hpp>

#include "lint/report.h"
#include "rules/registry.h"

namespace gpuguard::lint {
namespace {

using Json = nlohmann::ordered_json;

const char* sarifLevel(Severity s) { return s == Severity::Error ? "error" : "warning"; }

// "gpu-missing-toleration" -> "GpuMissingToleration" (reportingDescriptor.name)
std::string pascalCase(std::string_view id) {
  std::string out;
  bool upper = true;
  for (char c : id) {
    if (c == '-' || c == '_' || c == '.') {
      upper = true;
      continue;
    }
    out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

Json ruleDescriptor(const RuleDoc& d) {
  const std::string help = std::string(d.description) + "\n\nWhat to do: " + std::string(d.remediation) +
                           "\n\nSilence it on one object with the annotation ignore.gpuguard.io/" + std::string(d.id) +
                           ": \"<reason>\".";
  const std::string markdown =
      std::string(d.description) + "\n\n**What to do:** " + std::string(d.remediation) + "\n\nWrong:\n\n```yaml\n" +
      std::string(d.wrongExample) + "```\n\nRight:\n\n```yaml\n" + std::string(d.rightExample) +
      "```\n\nSilence it on one object with the annotation `ignore.gpuguard.io/" + std::string(d.id) +
      ": \"<reason>\"`.";
  return Json{
      {"id", d.id},
      {"name", pascalCase(d.id)},
      {"shortDescription", {{"text", d.summary}}},
      {"fullDescription", {{"text", d.description}}},
      {"help", {{"text", help}, {"markdown", markdown}}},
      {"defaultConfiguration", {{"level", sarifLevel(d.defaultSeverity)}}},
      {"properties", {{"tags", Json::array({"kubernetes", "gpu"})}}},
  };
}

// The linter's own checks of how a manifest is written (lint_file.h).
Json sourceCheckDescriptor(const SourceCheck& c) {
  const std::string help = std::string(c.description) + "\n\nWhat to do: " + std::string(c.remediation);
  const std::string markdown = std::string(c.description) + "\n\n**What to do:** " + std::string(c.remediation);
  return Json{
      {"id", c.id},
      {"name", pascalCase(c.id)},
      {"shortDescription", {{"text", c.summary}}},
      {"fullDescription", {{"text", c.description}}},
      {"help", {{"text", help}, {"markdown", markdown}}},
      {"defaultConfiguration", {{"level", "warning"}}},
      {"properties", {{"tags", Json::array({"kubernetes", "yaml"})}}},
  };
}

Json physicalLocation(const std::string& file, int line, int column) {
  Json loc = {{"artifactLocation", {{"uri", sarifUri(file)}}}};
  if (line > 0) {
    Json region = {{"startLine", line}};
    if (column > 0) region["startColumn"] = column;
    loc["region"] = std::move(region);
  }
  return loc;
}

}  // namespace

void writeSarif(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  const std::vector<const Rule*>& rules = allRules();
  Json ruleDescriptors = Json::array();
  for (const Rule* r : rules) ruleDescriptors.push_back(ruleDescriptor(r->doc()));
  for (const SourceCheck& c : kSourceChecks) ruleDescriptors.push_back(sourceCheckDescriptor(c));
  auto ruleIndex = [&](std::string_view id) -> long {
    for (std::size_t i = 0; i < ruleDescriptors.size(); ++i) {
      if (ruleDescriptors[i]["id"].get_ref<const std::string&>() == id) return static_cast<long>(i);
    }
    return -1;
  };

  Json results = Json::array();
  Json notifications = Json::array();
  for (const FileReport& r : reports) {
    for (const InputError& e : r.errors) {
      notifications.push_back(Json{
          {"level", "error"},
          {"message", {{"text", e.message}}},
          {"descriptor", {{"id", "input-error"}, {"index", 0}}},
          {"locations", Json::array({Json{{"physicalLocation", physicalLocation(e.file, e.line, e.column)}}})},
      });
    }
    for (const Located& l : r.findings) {
      const Finding& f = l.finding;
      Json result = {{"ruleId", f.rule}};
      if (const long i = ruleIndex(f.rule); i >= 0) result["ruleIndex"] = i;
      result["level"] = sarifLevel(f.severity);
      result["message"] = {{"text", f.fieldError()}};
      result["locations"] = Json::array({Json{{"physicalLocation", physicalLocation(r.file, l.line, l.column)}}});
      if (f.suppressed) {
        result["suppressions"] = Json::array({Json{{"kind", "inSource"}, {"justification", f.suppressionReason}}});
      }
      result["properties"] = {{"field", f.field}, {"pointer", f.pointer}, {"value", f.value}, {"document", l.document}};
      results.push_back(std::move(result));
    }
  }

  const RunSummary s = summarize(reports);
  Json invocation = {{"executionSuccessful", s.inputErrors == 0}};
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
  invocation["properties"] = {{"files", s.files},       {"objects", s.documents},      {"errors", s.errors},
                              {"warnings", s.warnings}, {"suppressed", s.suppressed}, {"unreadable", s.inputErrors}};

  Json driver = {
      {"name", "gpuguard-lint"},
      {"version", options.toolVersion},
      {"semanticVersion", options.toolVersion},
      {"informationUri", kInformationUri},
      {"rules", std::move(ruleDescriptors)},
      {"notifications",
       Json::array({Json{{"id", "input-error"},
                         {"shortDescription", {{"text", "An input that could not be read or parsed."}}},
                         {"defaultConfiguration", {{"level", "error"}}}}})},
  };
  Json log = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs", Json::array({Json{
                   {"tool", {{"driver", std::move(driver)}}},
                   {"invocations", Json::array({std::move(invocation)})},
                   {"columnKind", "unicodeCodePoints"},
                   {"results", std::move(results)},
               }})},
  };
  out << log.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace gpuguard::lint
