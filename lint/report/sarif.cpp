// --format sarif: SARIF 2.1.0 (OASIS), as GitHub code scanning and other
// SARIF viewers read it. One run; tool.driver.rules holds every rule and
// built-in check of the catalog (lint/catalog.h) with its documentation and
// a helpUri to its section of docs/rules.md; each result names its object
// (logicalLocations) and carries a partialFingerprint of rule, file, object
// and field, so an alert survives lines moving; suppressed findings are
// results with an inSource suppression (so viewers count them); a finding
// --fix can fix carries that change as its `fixes` (lint/fix/text_fix.h);
// inputs that could not be read, parsed or rendered are tool execution
// notifications.
#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "lint/catalog.h"
#include "lint/report/report.h"

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

std::string helpUri(std::string_view id) { return std::string(kRulesDocUri) + "#" + std::string(id); }

// FNV-1a, 64 bits: stable across runs, platforms and versions.
std::string fingerprint(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  static const char* const hex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = hex[h & 15];
  return out;
}

// What a user can do about an entry's findings besides fixing them.
std::string silencing(const CatalogEntry& e) {
  if (e.configurable()) {
    return "Silence it on one object with the annotation ignore.gpuguard.io/" + std::string(e.id()) + ": \"<reason>\".";
  }
  return "A built-in check: a policy cannot configure it and an annotation cannot silence it.";
}

std::string markdownSilencing(const CatalogEntry& e) {
  if (e.configurable()) {
    return "Silence it on one object with the annotation `ignore.gpuguard.io/" + std::string(e.id()) +
           ": \"<reason>\"`.";
  }
  return silencing(e);
}

// A reportingDescriptor (a rule's, or a notification's for the input error),
// all from the entry's documentation.
Json descriptor(const CatalogEntry& e) {
  const RuleDoc& d = *e.doc;
  const std::string help =
      std::string(d.description) + "\n\nWhat to do: " + std::string(d.remediation) + "\n\n" + silencing(e);
  const std::string markdown = std::string(d.description) + "\n\n**What to do:** " + std::string(d.remediation) +
                               "\n\nWrong:\n\n```yaml\n" + std::string(d.wrongExample) + "```\n\nRight:\n\n```yaml\n" +
                               std::string(d.rightExample) + "```\n\n" + markdownSilencing(e);
  // Rules judge GPU workloads; the built-in checks judge how the YAML is written.
  const char* topic = e.source == Source::Rule ? "gpu" : "yaml";
  return Json{
      {"id", d.id},
      {"name", pascalCase(d.id)},
      {"shortDescription", {{"text", d.summary}}},
      {"fullDescription", {{"text", d.description}}},
      {"help", {{"text", help}, {"markdown", markdown}}},
      {"helpUri", helpUri(d.id)},
      {"defaultConfiguration", {{"level", sarifLevel(d.defaultSeverity)}}},
      {"properties", {{"tags", Json::array({"kubernetes", topic})}}},
  };
}

Json logicalLocation(const ObjectRef& o) {
  Json loc = {{"name", o.name.empty() ? "<unnamed>" : o.name}, {"fullyQualifiedName", o.display()}, {"kind", "object"}};
  loc["properties"] = {{"apiVersion", o.apiVersion}, {"kind", o.kind}, {"namespace", o.ns}};
  return loc;
}

Json physicalLocation(const std::string& file, int line, int column) {
  Json loc = {{"artifactLocation", {{"uri", sarifUri(file)}}}};
  if (line > 0) {
    Json region = {{"startLine", line}};
    if (column > 0) region["startColumn"] = column;
    loc["region"] = std::move(region);
  } else {
    // Not traced to a line (a rendered object): the file's first line, as
    // code scanning needs a region.
    loc["region"] = {{"startLine", 1}};
  }
  return loc;
}

// A result's fix (sarif-v2.1.0 section 3.55): one artifactChange, in the
// file of the result, whose replacements (3.57) delete a region (3.30) and
// insert text there.
Json fixOf(const TextFix& fix, const std::string& file) {
  Json replacements = Json::array();
  for (const TextReplacement& r : fix.replacements) {
    replacements.push_back(Json{
        {"deletedRegion",
         {{"startLine", r.startLine}, {"startColumn", r.startColumn}, {"endLine", r.endLine}, {"endColumn", r.endColumn}}},
        {"insertedContent", {{"text", r.insertedText}}},
    });
  }
  return Json{
      {"description", {{"text", fix.description}}},
      {"artifactChanges",
       Json::array({Json{{"artifactLocation", {{"uri", sarifUri(file)}}}, {"replacements", std::move(replacements)}}})},
  };
}

// Stands for the results in the log until they are written (no message
// can print it: a string's quotes are escaped inside another string).
constexpr const char* kResultsMark = "gpuguard: the results go here";

Json resultOf(const FileReport& r, const Located& l, long ruleIndex) {
  const Finding& f = l.finding;
  Json result = {{"ruleId", f.rule}};
  if (ruleIndex >= 0) result["ruleIndex"] = ruleIndex;
  result["level"] = sarifLevel(f.severity);
  result["message"] = {{"text", f.fieldError()}};
  const std::string& file = fileOf(r, l);
  result["locations"] = Json::array({Json{{"physicalLocation", physicalLocation(file, l.line, l.column)},
                                          {"logicalLocations", Json::array({logicalLocation(l.object)})}}});
  result["partialFingerprints"] = {
      {"gpuguardObjectField/v1", fingerprint(f.rule + "|" + sarifUri(file) + "|" + l.object.apiVersion + "/" +
                                              l.object.display() + "|" + f.field())}};
  if (f.suppressed) {
    result["suppressions"] = Json::array({Json{{"kind", "inSource"}, {"justification", f.suppressionReason}}});
  }
  if (l.fix && l.file.empty()) result["fixes"] = Json::array({fixOf(*l.fix, file)});
  result["properties"] = {{"field", f.field()},     {"pointer", f.pointer()},
                          {"value", f.value},       {"document", l.document},
                          {"podTemplate", l.object.podTemplate}};
  if (!l.file.empty()) result["properties"]["renderedFrom"] = r.file;
  return result;
}

}  // namespace

void writeSarif(std::ostream& out, const std::vector<FileReport>& reports, const ReportOptions& options) {
  // The catalog's findings are rules to SARIF; its input error is a
  // notification (tool.driver.notifications), as it judges nothing.
  Json ruleDescriptors = Json::array();
  Json notificationDescriptors = Json::array();
  for (const CatalogEntry& e : catalog()) {
    (e.source == Source::InputError ? notificationDescriptors : ruleDescriptors).push_back(descriptor(e));
  }
  std::vector<std::string> ruleIds;  // the descriptors move into the log before the results are written
  for (const Json& descriptor : ruleDescriptors) ruleIds.push_back(descriptor["id"].get<std::string>());
  auto ruleIndex = [&](std::string_view id) -> long {
    const auto at = std::find(ruleIds.begin(), ruleIds.end(), id);
    return at == ruleIds.end() ? -1 : static_cast<long>(at - ruleIds.begin());
  };

  Json notifications = Json::array();
  for (const FileReport& r : reports) {
    for (const InputError& e : r.errors) {
      notifications.push_back(Json{
          {"level", "error"},
          {"message", {{"text", e.message}}},
          {"descriptor", {{"id", kInputErrorCheck.id}, {"index", 0}}},
          {"locations", Json::array({Json{{"physicalLocation", physicalLocation(e.file, e.line, e.column)}}})},
      });
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
      {"notifications", std::move(notificationDescriptors)},
  };
  Json log = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs", Json::array({Json{
                   {"tool", {{"driver", std::move(driver)}}},
                   {"invocations", Json::array({std::move(invocation)})},
                   {"columnKind", "unicodeCodePoints"},
                   {"results", kResultsMark},
               }})},
  };
  // The results, the bulk of a large run's log, are written one by one
  // where dump(2) would print them, rather than held whole as JSON.
  const std::string text = log.dump(2, ' ', false, Json::error_handler_t::replace);
  const std::string mark = std::string("\"results\": \"") + kResultsMark + "\"";
  const std::size_t at = text.find(mark);
  const std::size_t indent = at - text.rfind('\n', at) - 1;
  out << std::string_view(text).substr(0, at) << "\"results\": [";
  bool first = true;
  for (const FileReport& r : reports) {
    for (const Located& l : r.findings) {
      out << (first ? "\n" : ",\n") << std::string(indent + 2, ' ')
          << dumpIndented(resultOf(r, l, ruleIndex(l.finding.rule)), indent + 2);
      first = false;
    }
  }
  out << (first ? "]" : "\n" + std::string(indent, ' ') + "]") << std::string_view(text).substr(at + mark.size()) << "\n";
}

}  // namespace gpuguard::lint
