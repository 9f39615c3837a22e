#include "lint/render/helm.h"

#include <filesystem>
#include <map>

#include "lint/command.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return lines;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "  nvidia.com/gpu: 2" -> "nvidia.com/gpu:", "- name: x" -> "- name:"; "" for
// a line that is no "key: value".
std::string_view keyOf(std::string_view line) {
  line = trimmed(line);
  const std::size_t colon = line.find(": ");
  if (colon != std::string_view::npos) return line.substr(0, colon + 1);
  return line.ends_with(":") ? line : std::string_view();
}

// The one template line with the rendered line's key, where a template
// expression wrote the value ("nvidia.com/gpu: {{ .Values.gpus }}"); 0 if
// none or several.
std::size_t uniqueLineWithKey(const std::vector<std::string>& lines, std::string_view want) {
  const std::string_view key = keyOf(want);
  if (key.empty()) return 0;
  std::size_t found = 0, matches = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (keyOf(lines[i]) == key) {
      ++matches;
      found = i + 1;
    }
  }
  return matches == 1 ? found : 0;
}

class HelmRemapper final : public Remapper {
 public:
  HelmRemapper(std::string chartDir, std::string_view rendered)
      : chartDir_(std::move(chartDir)), rendered_(splitLines(rendered)) {}

  void prepare(yaml::Document& doc) override {
    source_.clear();
    sourceLine_ = 0;
    // helm prints "---\n# Source: CHART/templates/x.yaml\n" before each document.
    const int first = doc.start.line > 0 ? doc.start.line : 1;
    for (int line = std::min<int>(first, static_cast<int>(rendered_.size())); line >= 1; --line) {
      const std::string_view text = rendered_[static_cast<std::size_t>(line - 1)];
      if (text.starts_with("# Source: ")) {
        const std::string_view named = trimmed(text.substr(10));
        const std::size_t slash = named.find('/');  // the chart's name, then the path inside it
        if (slash != std::string_view::npos) {
          source_ = (fs::path(chartDir_) / std::string(named.substr(slash + 1))).lexically_normal().generic_string();
          sourceLine_ = line;
        }
        break;
      }
      if (text == "---" && line < first) break;
    }
  }

  void place(const yaml::Document&, Located& l) override {
    if (source_.empty()) {
      l.file = (fs::path(chartDir_) / "Chart.yaml").lexically_normal().generic_string();
      l.line = l.column = 0;
      return;
    }
    l.file = source_;
    const std::vector<std::string>& lines = templateLines(source_);
    const int renderedLine = l.line;
    const int column = l.column;
    l.line = l.column = 0;
    if (renderedLine <= 0 || static_cast<std::size_t>(renderedLine) > rendered_.size()) return;
    const std::string_view want = rendered_[static_cast<std::size_t>(renderedLine - 1)];
    // The same line at the same offset from the top of the template, else
    // the one template line that reads the same; else the file alone.
    const std::size_t offset = static_cast<std::size_t>(renderedLine - sourceLine_);
    std::size_t found = 0;
    if (offset >= 1 && offset <= lines.size() && trimmed(lines[offset - 1]) == trimmed(want)) {
      found = offset;
    } else {
      std::size_t matches = 0;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (trimmed(lines[i]) == trimmed(want) && !trimmed(want).empty()) {
          ++matches;
          found = i + 1;
        }
      }
      if (matches != 1) found = uniqueLineWithKey(lines, want);
    }
    if (found == 0) return;
    l.line = static_cast<int>(found);
    const int shift = static_cast<int>(lines[found - 1].find_first_not_of(" \t")) -
                      static_cast<int>(want.find_first_not_of(" \t"));
    l.column = std::max(1, (column > 0 ? column : 1) + shift);
  }

 private:
  const std::vector<std::string>& templateLines(const std::string& file) {
    auto it = templates_.find(file);
    if (it != templates_.end()) return it->second;
    std::vector<std::string> lines;
    const InputText in = readInput(file);
    if (in.error.empty()) {
      for (std::string_view line : splitLines(in.text)) lines.emplace_back(line);
    }
    return templates_.emplace(file, std::move(lines)).first->second;
  }

  std::string chartDir_;
  std::vector<std::string_view> rendered_;
  std::string source_;
  int sourceLine_ = 0;
  std::map<std::string, std::vector<std::string>> templates_;
};

// Why helm template failed, on one line: from helm's "Error:" line on (what
// comes before it is warnings), without helm's closing advice to run it
// with --debug; at most kMaxHelmReason characters, kept from the front,
// where a chart's own message says what to set. No "Error:" line: the tail.
constexpr std::size_t kMaxHelmReason = 2000;
std::string helmReason(const std::string& err) {
  std::string text = err;
  const std::size_t error = text.rfind("Error:", 0) == 0 ? 0 : text.find("\nError:");
  if (error != std::string::npos) text.erase(0, error == 0 ? 0 : error + 1);
  if (const std::size_t debug = text.find("\nUse --debug flag"); debug != std::string::npos) text.erase(debug);
  std::string out;
  for (char c : text) {  // line breaks and runs of blanks as one space
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() <= kMaxHelmReason) return out;
  return error != std::string::npos ? out.substr(0, kMaxHelmReason) + "..." : "..." + out.substr(out.size() - kMaxHelmReason);
}

// A chart that refuses the namespace it was rendered into (NVIDIA's
// device-plugin and DRA-driver charts refuse "default"): say how to choose.
std::string namespaceHint(const std::string& reason, const RenderSettings& settings) {
  if (reason.find("namespace") == std::string::npos) return "";
  return settings.helmNamespace.empty()
             ? " (rendered into helm's default namespace \"default\"; --namespace NS renders into another)"
             : " (rendered into namespace \"" + settings.helmNamespace + "\", from --namespace)";
}

// helm template's refusal of a chart whose Chart.yaml dependencies are not in charts/ (helm 3 and 4:
// "found in Chart.yaml, but missing in charts/ directory").
bool unfetchedDependencies(const std::string& helmError) {
  return helmError.find("missing in charts/ directory") != std::string::npos;
}

// helm template's refusal of a library chart (Chart.yaml type: library),
// which by definition renders nothing of its own (helm 3 and 4).
bool libraryChart(const std::string& helmError) {
  return helmError.find("library charts are not installable") != std::string::npos;
}

// A chart not rendered for a reason that is not the chart's fault: a note.
FileReport skippedChart(const std::string& dir, std::string note) {
  FileReport skipped;
  skipped.file = dir;
  skipped.notes.push_back(std::move(note));
  return skipped;
}

}  // namespace

FileReport lintChart(const std::string& dir, const std::string& helm, const std::vector<std::string>& valuesFiles,
                     const LintPolicy& policy, const RenderSettings& settings) {
  std::vector<std::string> argv{helm, "template", dir, "--kube-version", settings.kubeVersion};
  if (!settings.helmNamespace.empty()) argv.insert(argv.end(), {"--namespace", settings.helmNamespace});
  for (const std::string& v : valuesFiles) {
    argv.push_back("--values");
    argv.push_back(v);
  }
  const CommandResult rendered = runCommand(argv, yaml::Limits{}.maxDocumentBytes, settings.timeoutMs);
  const std::string chartFile = (fs::path(dir) / "Chart.yaml").lexically_normal().generic_string();
  if (rendered.ran && rendered.exitStatus != 0 && unfetchedDependencies(rendered.err)) {
    // Not the chart's fault but the checkout's: a note, not an input error (exit 2) that would
    // stop every pre-commit run in a repository with a chart of remote dependencies.
    return skippedChart(dir, "Helm chart " + dir +
                                 " not rendered: its dependencies are not fetched (helm dependency build " + dir + ")");
  }
  if (rendered.ran && rendered.exitStatus != 0 && libraryChart(rendered.err)) {
    return skippedChart(dir, "Helm chart " + dir +
                                 " is a library chart (type: library): it renders no objects of its own, and is "
                                 "judged through the charts that use it");
  }
  if (!rendered.ran || rendered.exitStatus != 0) {
    FileReport failed;
    failed.file = dir;
    const std::string reason = rendered.ran ? helmReason(rendered.err) : rendered.error;
    failed.errors.push_back({chartFile, 0, 0,
                             "cannot render the chart (helm template " + dir + "): " + reason +
                                 (rendered.ran ? namespaceHint(reason, settings) : "")});
    return failed;
  }
  HelmRemapper remapper(dir, rendered.out);
  LintOptions options;
  options.remap = &remapper;
  FileReport report = lintText(dir, rendered.out, policy, options);
  for (InputError& e : report.errors) {
    e.file = chartFile;
    e.message = "the output of helm template " + dir + " does not parse: " + e.message;
    e.line = e.column = 0;
  }
  return report;
}

}  // namespace gpuguard::lint
