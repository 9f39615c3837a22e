#include "lint/facts_file.h"

#include <vector>

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
  // Several documents (`kubectl get node a -o yaml` outputs joined with
  // ---): one List of all their objects, a List's items in its place, so
  // that no node of the file is left out.
  std::vector<json> objects;
  for (yaml::Document& d : parsed.documents) {
    if (d.value.is_null()) continue;
    if (d.value.is_object() && d.value.value("kind", "") == "List" && d.value.contains("items") &&
        d.value["items"].is_array()) {
      for (json& item : d.value["items"]) objects.push_back(std::move(item));
    } else {
      objects.push_back(std::move(d.value));
    }
  }
  if (objects.empty()) {
    error = "empty document";
    return false;
  }
  if (objects.size() == 1 && parsed.documents.size() == 1) {
    doc = std::move(objects.front());
  } else {
    doc = json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(objects)}};
  }
  return true;
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
