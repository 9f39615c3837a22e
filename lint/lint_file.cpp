#include "lint/lint_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "rules/engine.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

// Tells the engine how each plain YAML scalar was written (010 vs 8).
class YamlHints final : public SourceHints {
 public:
  explicit YamlHints(const yaml::SourceMap& sources) : sources_(sources) {}
  const std::string* writtenText(std::string_view pointer) const override {
    const yaml::NodeOrigin* origin = sources_.find(pointer);
    return origin && origin->plainScalar ? &origin->writtenText : nullptr;
  }

 private:
  const yaml::SourceMap& sources_;
};

bool isKubernetesObject(const nlohmann::json& v) {
  if (!v.is_object()) return false;
  auto kind = v.find("kind");
  auto apiVersion = v.find("apiVersion");
  return kind != v.end() && kind->is_string() && apiVersion != v.end() && apiVersion->is_string();
}

}  // namespace

FileReport lintText(const std::string& file, std::string_view text, const Policy& policy) {
  FileReport report;
  report.file = file;
  yaml::ParseResult parsed = yaml::parseStream(text);
  for (const yaml::Document& doc : parsed.documents) {
    if (!isKubernetesObject(doc.value)) continue;  // empty documents, Helm values, kustomization...
    ++report.documents;
    const YamlHints hints(doc.sources);
    for (Finding& f : judge(doc.value, policy, JudgeOptions{&hints})) {
      const yaml::Position pos = doc.sources.locate(f.pointer);
      report.findings.push_back({std::move(f), pos.line, pos.column, doc.index});
    }
  }
  if (parsed.error) {
    report.errors.push_back({file, parsed.error->position.line, parsed.error->position.column, parsed.error->message});
  }
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const Located& a, const Located& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return report;
}

FileReport lintPath(const std::string& path, const Policy& policy) {
  if (path == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return lintText("<stdin>", text, policy);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    FileReport r;
    r.file = path;
    r.errors.push_back({path, 0, 0, std::string("cannot read file: ") + std::strerror(errno)});
    return r;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    FileReport r;
    r.file = path;
    r.errors.push_back({path, 0, 0, std::string("cannot read file: ") + std::strerror(errno)});
    return r;
  }
  return lintText(path, buf.str(), policy);
}

}  // namespace gpuguard::lint
