#include "lint/pending.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "lint/exit_codes.h"
#include "lint/facts_file.h"
#include "lint/run_config.h"
#include "lint/lint_file.h"
#include "lint/report/output.h"
#include "schedule/diagnose.h"
#include "schedule/node_snapshot.h"
#include "schedule/report.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

using nlohmann::json;

int runPending(const Options& o, const RunConfig& config) {
  const Policy& policy = config.policy.engine;
  if (o.format != Format::Text && o.format != Format::Json) {
    std::cerr << "gpuguard-lint: --nodes prints text or json (--format)\n";
    return kExitTrouble;
  }
  json nodesDoc, podsDoc;
  std::string error;
  if (!readKubectlDocument(*o.nodes, nodesDoc, error)) {
    std::cerr << "gpuguard-lint: " << *o.nodes << ": " << error << "\n";
    return kExitTrouble;
  }
  if (o.pods && !readKubectlDocument(*o.pods, podsDoc, error)) {
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
  // The same inputs, globs and size limit as the lint run (run_config.h).
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
