#include "lint/lint_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "rules/engine.h"
#include "rules/field_path.h"
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

bool isIdentifier(std::string_view key) {
  if (key.empty() || !std::isalpha(static_cast<unsigned char>(key.front()))) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// "/spec/containers/0/env" -> spec.containers[0].env, walking the document
// to tell list indexes from map keys; keys that are not identifiers are
// bracketed (labels[app.kubernetes.io/name]), as in the engine's findings.
std::string apiPathOf(std::string_view pointer, const nlohmann::json& document) {
  FieldPath path;
  const nlohmann::json* node = &document;
  while (!pointer.empty()) {
    pointer.remove_prefix(1);  // '/'
    const std::size_t slash = pointer.find('/');
    std::string token(pointer.substr(0, slash));
    pointer = slash == std::string_view::npos ? std::string_view() : pointer.substr(slash);
    for (std::size_t at = 0; (at = token.find('~', at)) != std::string::npos; ++at)
      token.replace(at, 2, token.compare(at, 2, "~1") == 0 ? "/" : "~");
    if (node && node->is_array()) {
      std::size_t index = 0;
      std::from_chars(token.data(), token.data() + token.size(), index);
      path = path.index(index);
      node = index < node->size() ? &(*node)[index] : nullptr;
      continue;
    }
    path = isIdentifier(token) ? path.field(token) : path.key(token);
    const auto it = node && node->is_object() ? node->find(token) : nlohmann::json::const_iterator();
    node = node && node->is_object() && it != node->end() ? &*it : nullptr;
  }
  return path.apiPath();
}

}  // namespace

Finding sourceFinding(const yaml::ParseWarning& warning, const nlohmann::json& document) {
  const SourceCheck& check =
      warning.kind == yaml::ParseWarning::Kind::DuplicateKey ? kDuplicateKeyCheck : kIgnoredContentCheck;
  Finding f;
  f.rule = std::string(check.id);
  f.severity = Severity::Warning;
  f.field = warning.pointer.empty() ? "" : apiPathOf(warning.pointer, document);
  f.pointer = warning.pointer;
  // The API server's words for a repeated field ("Duplicate value: ...").
  f.message = (warning.kind == yaml::ParseWarning::Kind::DuplicateKey ? "Duplicate value: " : "") + warning.message +
              ". " + std::string(check.remediation);
  f.message.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(f.message.front())));
  return f;
}

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
    for (const yaml::ParseWarning& w : doc.warnings) {
      report.findings.push_back({sourceFinding(w, doc.value), w.position.line, w.position.column, doc.index});
    }
  }
  // Every document that could not be parsed, each with its position: the
  // others were judged all the same.
  for (const yaml::ParseError& e : parsed.errors) {
    report.errors.push_back({file, e.position.line, e.position.column, e.message});
  }
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const Located& a, const Located& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return report;
}

std::string displayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

namespace {

std::string tooLarge(std::size_t limit) {
  return "input is larger than the limit of " + std::to_string(limit) + " bytes";
}

// Reads `fd` to its end, but never more than `limit` + 1 bytes: an input
// that is too large (a 10 GB log named by mistake, /dev/zero) is an error
// at once, not a hang. read(2) rather than iostreams so that a closed or
// broken descriptor is an error, not an empty input.
InputText readDescriptor(int fd, std::size_t limit, const char* what) {
  InputText in;
  std::string buffer(64 * 1024, '\0');
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      in.error = std::string("cannot read ") + what + ": " + std::strerror(errno);
      in.text.clear();
      return in;
    }
    if (n == 0) return in;
    in.text.append(buffer.data(), static_cast<std::size_t>(n));
    if (in.text.size() > limit) {
      in.error = tooLarge(limit);
      in.text.clear();
      return in;
    }
  }
}

}  // namespace

InputText readInput(const std::string& path, std::size_t limit) {
  if (path == "-") return readDescriptor(STDIN_FILENO, limit, "standard input");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return InputText{"", "cannot read file: is a directory"};
  const auto size = std::filesystem::file_size(path, ec);  // regular files only; devices and pipes are read
  if (!ec && size > limit) return InputText{"", tooLarge(limit)};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InputText{"", std::string("cannot read file: ") + std::strerror(errno)};
  InputText in = readDescriptor(fd, limit, "file");
  ::close(fd);
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
