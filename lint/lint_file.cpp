#include "lint/lint_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
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

}  // namespace

bool isKubernetesObject(const nlohmann::json& v) {
  if (!v.is_object()) return false;
  auto kind = v.find("kind");
  auto apiVersion = v.find("apiVersion");
  return kind != v.end() && kind->is_string() && apiVersion != v.end() && apiVersion->is_string();
}

std::vector<Finding> judgeDocument(const yaml::Document& doc, const Policy& policy) {
  const YamlHints hints(doc.sources);
  return judge(doc.value, policy, JudgeOptions{&hints});
}

FileReport lintText(const std::string& file, std::string_view text, const Policy& policy) {
  FileReport report;
  report.file = file;
  yaml::ParseResult parsed = yaml::parseStream(text);
  for (const yaml::Document& doc : parsed.documents) {
    if (!isKubernetesObject(doc.value)) continue;  // empty documents, Helm values, kustomization...
    ++report.documents;
    for (Finding& f : judgeDocument(doc, policy)) {
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

std::string displayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

InputText readInput(const std::string& path) {
  InputText in;
  if (path == "-") {
    in.text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) in.error = "cannot read standard input";
    return in;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    in.error = "cannot read file: is a directory";
    return in;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    in.error = std::string("cannot read file: ") + std::strerror(errno);
    return in;
  }
  std::ostringstream buf;
  buf << file.rdbuf();
  if (file.bad()) {
    in.error = std::string("cannot read file: ") + std::strerror(errno);
    return in;
  }
  in.text = std::move(buf).str();
  return in;
}

FileReport lintPath(const std::string& path, const Policy& policy) {
  InputText in = readInput(path);
  if (!in.error.empty()) {
    FileReport r;
    r.file = displayName(path);
    r.errors.push_back({r.file, 0, 0, in.error});
    return r;
  }
  return lintText(displayName(path), in.text, policy);
}

}  // namespace gpuguard::lint
