#include "lint/pending.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "lint/exit_codes.h"
#include "lint/driver.h"
#include "lint/lint_file.h"
#include "lint/report_output.h"
#include "schedule/diagnose.h"
#include "schedule/node_snapshot.h"
#include "schedule/report.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

using nlohmann::json;

// kubectl -o json output; -o yaml works too.
bool readDocument(const std::string& path, json& doc, std::string& error) {
  InputText in = readInput(path);
  if (!in.error.empty()) {
    error = in.error;
    return false;
  }
  const std::string& text = in.text;
  doc = json::parse(text, nullptr, false);
  if (!doc.is_discarded()) return true;
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error) {
    error = std::to_string(parsed.error->position.line) + ":" + std::to_string(parsed.error->position.column) + ": " +
            parsed.error->message;
    return false;
  }
  for (yaml::Document& d : parsed.documents) {
    if (!d.value.is_null()) {
      doc = std::move(d.value);
      return true;
    }
  }
  error = "empty document";
  return false;
}

}  // namespace

int runPending(const Options& o, const RunConfig& config) {
  const Policy& policy = config.policy.engine;
  if (o.format != Format::Text && o.format != Format::Json) {
    std::cerr << "gpuguard-lint: --nodes prints text or json (--format)\n";
    return kExitTrouble;
  }
  json nodesDoc, podsDoc;
  std::string error;
  if (!readDocument(*o.nodes, nodesDoc, error)) {
    std::cerr << "gpuguard-lint: " << *o.nodes << ": " << error << "\n";
    return kExitTrouble;
  }
  if (o.pods && !readDocument(*o.pods, podsDoc, error)) {
    std::cerr << "gpuguard-lint: " << *o.pods << ": " << error << "\n";
    return kExitTrouble;
  }
  const schedule::Snapshot snapshot = schedule::makeSnapshot(nodesDoc, o.pods ? &podsDoc : nullptr);
  if (!snapshot.error.empty()) {
    std::cerr << "gpuguard-lint: " << *o.nodes << ": " << snapshot.error << "\n";
    return kExitTrouble;
  }

  int status = kExitClean;
  std::vector<schedule::PodDiagnosis> pods;
  // The same inputs, globs and size limit as the lint run (driver.h).
  const ExpandedInputs inputs = selectInputs(o, config, std::cerr);
  if (!inputs.problems.empty()) status = kExitTrouble;
  for (const std::string& path : inputs.files) {
    const std::string name = displayName(path);
    const InputText in = readInput(path);
    if (!in.error.empty()) {
      std::cerr << "gpuguard-lint: " << name << ": " << in.error << "\n";
      status = kExitTrouble;
      continue;
    }
    yaml::ParseResult parsed = yaml::parseStream(in.text);
    for (const yaml::Document& doc : parsed.documents) {
      for (schedule::PodDiagnosis& d : schedule::diagnoseObject(doc.value, snapshot, policy)) {
        d.source = name;
        pods.push_back(std::move(d));
      }
    }
    if (parsed.error) {
      std::cerr << "gpuguard-lint: " << name << ":" << parsed.error->position.line << ":"
                << parsed.error->position.column << ": " << parsed.error->message << "\n";
      status = kExitTrouble;
    }
  }

  ReportOutput output;
  if (!output.open(o.output)) return kExitTrouble;
  std::ostream& out = output.stream();
  if (o.format == Format::Json) out << schedule::toJson(pods, snapshot).dump(2) << "\n";
  else schedule::writeText(out, pods, snapshot);
  status = output.finish(status, kExitTrouble);
  if (status != kExitClean) return status;
  for (const schedule::PodDiagnosis& d : pods) {
    if (!d.schedulable()) return kExitFindings;
  }
  return kExitClean;
}

}  // namespace gpuguard::lint
