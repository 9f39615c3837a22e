#include "lint/facts_file.h"

#include "lint/lint_file.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

using nlohmann::json;

bool readKubectlDocument(const std::string& path, json& doc, std::string& error) {
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

std::shared_ptr<const ClusterFacts> factsOfSnapshot(const json& doc, const std::string& source,
                                                    std::vector<std::string>& warnings) {
  ClusterFactsBuilder builder;
  builder.setSource(source);
  builder.markListed(FactKind::Node);
  if (builder.add(doc) == 0) return nullptr;
  warnings = builder.warnings();
  return builder.build();
}

std::shared_ptr<const ClusterFacts> loadFactsFile(const std::string& path, std::ostream& err) {
  json doc;
  std::string error;
  if (!readKubectlDocument(path, doc, error)) {
    err << "gpuguard-lint: " << path << ": " << error << "\n";
    return nullptr;
  }
  std::vector<std::string> warnings;
  auto facts = factsOfSnapshot(doc, "snapshot " + displayName(path), warnings);
  for (const std::string& w : warnings) err << "gpuguard-lint: " << path << ": " << w << "\n";
  if (!facts) {
    err << "gpuguard-lint: " << path
        << ": expected the output of kubectl get nodes,nodepools,deviceclasses,namespaces -o json "
           "(no Node, NodePool, Namespace or DRA object in it)\n";
  }
  return facts;
}

}  // namespace gpuguard::lint
