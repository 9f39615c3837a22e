#include "lint/render/kustomize.h"

#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "lint/command.h"
#include "lint/render/kustomize_includers.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/json_pointer.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kOriginAnnotation = "config.kubernetes.io/origin";
constexpr const char* kTransformationsAnnotation = "alpha.config.kubernetes.io/transformations";

std::string normal(const fs::path& p) { return p.lexically_normal().generic_string(); }


std::vector<std::string> stringsAt(const json& doc, const char* key) {
  std::vector<std::string> out;
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<std::string> pathsOfObjects(const json& doc, const char* key) {
  std::vector<std::string> out;
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    const auto path = v.is_object() ? v.find("path") : v.end();
    if (v.is_object() && path != v.end() && path->is_string()) out.push_back(path->get<std::string>());
  }
  return out;
}

// A list index as RFC 6901 writes one: digits only, no sign, fits size_t.
std::optional<std::size_t> arrayIndex(std::string_view token) {
  std::size_t i = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), i);
  if (token.empty() || ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return i;
}

const json* childAt(const json& node, const std::string& token) {
  if (node.is_object()) {
    const auto it = node.find(token);
    return it == node.end() ? nullptr : &*it;
  }
  const std::optional<std::size_t> i = node.is_array() ? arrayIndex(token) : std::nullopt;
  return i && *i < node.size() ? &node[*i] : nullptr;
}

const json* nodeAt(const json& root, std::string_view pointer) {
  const json* node = &root;
  for (JsonPointerTokens tokens(pointer); !tokens.done() && node;) node = childAt(*node, tokens.next());
  return node;
}

struct Translated {
  std::string pointer;  // the longest part of the path that `candidate` has
  bool complete = false;
};

// The same node in another document of the same object (a base, a patch):
// list items are matched by their name, as a strategic merge does, so
// containers/1 of the output may be containers/0 of a patch.
Translated translate(const json& rendered, std::string_view pointer, const json& candidate) {
  Translated t;
  const json* r = &rendered;
  const json* c = &candidate;
  for (JsonPointerTokens tokens(pointer); !tokens.done();) {
    const std::string token = tokens.next();
    if (r->is_object() && c->is_object()) {
      const auto ri = r->find(token);
      const auto ci = c->find(token);
      if (ri == r->end() || ci == c->end()) return t;
      r = &*ri;
      c = &*ci;
      t.pointer += '/';
      appendJsonPointerToken(t.pointer, token);
    } else if (r->is_array() && c->is_array()) {
      const json* item = childAt(*r, token);
      if (!item) return t;
      std::optional<std::size_t> j;
      const auto name = item->is_object() ? item->find("name") : item->end();
      if (item->is_object() && name != item->end() && name->is_string()) {
        for (std::size_t k = 0; k < c->size(); ++k) {
          const json& other = (*c)[k];
          if (other.is_object() && other.value("name", json()) == *name) j = k;
        }
      } else if (const std::optional<std::size_t> i = arrayIndex(token); i && *i < c->size()) {
        j = i;
      }
      if (!j) return t;
      r = item;
      c = &(*c)[*j];
      t.pointer += "/" + std::to_string(*j);
    } else {
      return t;
    }
  }
  t.complete = true;
  return t;
}

std::string metadataName(const json& doc) {
  const auto metadata = doc.find("metadata");
  if (metadata == doc.end() || !metadata->is_object()) return "";
  return metadata->value("name", std::string());
}

// A document of a base or patch that is the rendered object: same kind and
// the name before namePrefix/nameSuffix; an exact name first.
const yaml::Document* sameObject(const std::vector<yaml::Document>& docs, const ObjectRef& object, bool patch) {
  const yaml::Document* contained = nullptr;
  for (const yaml::Document& d : docs) {
    if (!d.value.is_object()) continue;
    const std::string kind = d.value.value("kind", std::string());
    if (kind != object.kind && !(patch && kind.empty())) continue;
    const std::string name = metadataName(d.value);
    if (name == object.name) return &d;
    if (!contained && ((!name.empty() && object.name.find(name) != std::string::npos) || (patch && name.empty())))
      contained = &d;
  }
  return contained;
}

class KustomizeRemapper final : public Remapper {
 public:
  KustomizeRemapper(const Kustomization& root, std::vector<std::string> patchFiles, fs::path renderDir,
                    const std::vector<std::string>& reportOnly)
      : root_(root), patchFiles_(std::move(patchFiles)), renderDir_(std::move(renderDir)), reportOnly_(reportOnly) {}

  // Whether the findings of document `index` are reported (lintKustomization's reportOnly).
  bool reported(std::size_t index) const { return !unreported_.count(index); }

  void prepare(yaml::Document& doc) override {
    origin_.reset();
    auto metadata = doc.value.find("metadata");
    if (metadata == doc.value.end() || !metadata->is_object()) return;
    auto annotations = metadata->find("annotations");
    if (annotations == metadata->end() || !annotations->is_object()) return;
    const auto origin = annotations->find(kOriginAnnotation);
    if (origin != annotations->end() && origin->is_string()) {
      const yaml::ParseResult parsed = yaml::parseStream(origin->get_ref<const std::string&>());
      if (!parsed.documents.empty() && parsed.documents[0].value.is_object()) {
        const json& o = parsed.documents[0].value;
        if (o.contains("path") && o["path"].is_string() && !o.contains("repo"))
          origin_ = displayPath(fs::absolute(renderDir_ / o["path"].get<std::string>()));
      }
    }
    // An object without an origin (a generator's) is reported: it cannot be
    // told apart, and a finding is not dropped on a guess.
    if (origin_ && !reportOnly_.empty() && !fromReported(*origin_)) unreported_.insert(doc.index);
    // The annotations the wrapper asked for are not the user's: judge the
    // object as kubectl apply -k would send it.
    annotations->erase(kOriginAnnotation);
    annotations->erase(kTransformationsAnnotation);
    if (annotations->empty()) metadata->erase("annotations");
  }

  void place(const yaml::Document& doc, Located& l) override {
    const json* value = nodeAt(doc.value, l.finding.pointer());
    // A value a patch set: the last patch applied that says it.
    for (const std::string& file : patchFiles_) {
      const std::vector<yaml::Document>& docs = parsed(file);
      const yaml::Document* d = sameObject(docs, l.object, true);
      if (!d || !value) continue;
      const Translated t = translate(doc.value, l.finding.pointer(), d->value);
      const json* there = t.complete ? nodeAt(d->value, t.pointer) : nullptr;
      if (there && *there == *value) return at(l, file, d->sources.locate(t.pointer));
    }
    if (origin_) {
      const std::vector<yaml::Document>& docs = parsed(*origin_);
      if (const yaml::Document* d = sameObject(docs, l.object, false)) {
        return at(l, *origin_, d->sources.locate(translate(doc.value, l.finding.pointer(), d->value).pointer));
      }
    }
    at(l, root_.file, {});  // the kustomization as a whole
  }

 private:
  static void at(Located& l, const std::string& file, yaml::Position pos) {
    l.file = file;
    l.line = pos.line;
    l.column = pos.column;
  }

  // An object traced to a file under one of reportOnly_'s directories.
  bool fromReported(const std::string& originFile) const {
    const std::string file = directoryKey(originFile);
    return std::ranges::any_of(reportOnly_, [&](const std::string& dir) {
      return file.starts_with(dir) && (file.size() == dir.size() || file[dir.size()] == '/' || dir == "/");
    });
  }

  const std::vector<yaml::Document>& parsed(const std::string& file) {
    auto it = files_.find(file);
    if (it != files_.end()) return it->second;
    std::vector<yaml::Document> docs;
    const InputText in = readInput(file);
    if (in.error.empty()) docs = yaml::parseStream(in.text).documents;
    return files_.emplace(file, std::move(docs)).first->second;
  }

  const Kustomization& root_;
  std::vector<std::string> patchFiles_;  // latest applied first
  fs::path renderDir_;
  const std::vector<std::string>& reportOnly_;  // directoryKey()s; empty: every object's findings
  std::optional<std::string> origin_;
  std::set<std::size_t> unreported_;  // documents traced to a file outside reportOnly_
  std::map<std::string, std::vector<yaml::Document>> files_;
};

// The patches that may have set a value of the root's output, the last
// applied first: the root's own, then those of what it includes.
std::vector<std::string> patchesOf(const Kustomization& root, const std::vector<Kustomization>& tree) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::vector<const Kustomization*> pending{&root};
  while (!pending.empty()) {
    const Kustomization* k = pending.front();
    pending.erase(pending.begin());
    if (!seen.insert(normal(k->dir)).second) continue;
    for (auto it = k->patchFiles.rbegin(); it != k->patchFiles.rend(); ++it) out.push_back(*it);
    for (const std::string& dir : k->referencedDirs) {
      for (const Kustomization& other : tree) {
        if (normal(other.dir) == dir) pending.push_back(&other);
      }
    }
  }
  return out;
}

// A wrapper kustomization in a fresh temporary directory that includes the
// root and asks for origin annotations; removed when done.
class Wrapper {
 public:
  explicit Wrapper(const std::string& rootDir) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuguard-kustomize-XXXXXX";
    if (!::mkdtemp(pattern.data())) return;
    dir_ = pattern;
    std::error_code ec;
    const fs::path target = fs::absolute(rootDir, ec).lexically_normal();
    const std::string relative = target.lexically_relative(dir_).generic_string();
    FILE* f = std::fopen((dir_ / "kustomization.yaml").c_str(), "w");
    if (!f) return;
    const std::string text = "resources:\n- " + json(relative).dump() + "\nbuildMetadata: [originAnnotations]\n";
    ok_ = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok_ = std::fclose(f) == 0 && ok_;
  }
  ~Wrapper() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  bool ok() const { return ok_; }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  bool ok_ = false;
};

// kustomize's error on one line: its first lines, and its last line, where
// kustomize puts the reason after quoting a whole config ("...: must
// specify --enable-helm").
std::string errorSummary(std::string text, std::size_t maxLines) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::size_t at = 0;
  for (std::size_t n = 0; n < maxLines && at != std::string::npos; ++n) {
    at = text.find('\n', at == 0 ? 0 : at + 1);
  }
  if (at != std::string::npos) {
    const std::size_t lastLine = text.rfind('\n') + 1;
    text = text.substr(0, at) + (lastLine > at + 1 ? " ... " + text.substr(lastLine) : text.substr(at));
  }
  for (char& c : text) c = c == '\n' ? ' ' : c;
  return text;
}

// helmCharts (kustomize's HelmChartInflationGenerator): a chart not vendored
// under helmGlobals.chartHome (default "charts") is pulled from its repo, a
// remote reference like a remote base.
void readHelmCharts(const json& doc, const std::string& dir, Kustomization& k) {
  const auto charts = doc.find("helmCharts");
  if (charts == doc.end() || !charts->is_array() || charts->empty()) return;
  k.helmCharts = true;
  const auto globals = doc.find("helmGlobals");
  std::string home = globals != doc.end() && globals->is_object() ? stringOr(*globals, "chartHome") : "";
  if (home.empty()) home = "charts";
  for (const json& chart : *charts) {
    if (!chart.is_object()) continue;
    const std::string repo = stringOr(chart, "repo"), name = stringOr(chart, "name");
    std::error_code ec;
    if (!repo.empty() && !fs::is_directory(fs::path(dir) / home / name, ec)) k.remoteRefs.push_back(repo);
  }
}

}  // namespace

bool isKustomizationFileName(const std::string& name) {
  return name == "kustomization.yaml" || name == "kustomization.yml" || name == "Kustomization";
}

std::optional<std::string> kustomizationFileIn(const std::string& dir) {
  for (const char* name : {"kustomization.yaml", "kustomization.yml", "Kustomization"}) {
    std::error_code ec;
    const fs::path candidate = fs::path(dir) / name;
    if (fs::is_regular_file(candidate, ec)) return candidate.generic_string();
  }
  return std::nullopt;
}

Kustomization readKustomization(const std::string& dir) {
  Kustomization k;
  k.dir = dir;
  k.file = kustomizationFileIn(dir).value_or(normal(fs::path(dir) / "kustomization.yaml"));
  const InputText in = readInput(k.file);
  if (!in.error.empty()) {
    k.error = in.error;
    return k;
  }
  yaml::ParseResult parsed = yaml::parseStream(in.text);
  if (parsed.error || parsed.documents.empty() || !parsed.documents[0].value.is_object()) {
    k.error = parsed.error ? parsed.error->message : "not a kustomization (no map)";
    return k;
  }
  const json& doc = parsed.documents[0].value;
  k.component = stringOr(doc, "kind") == "Component";
  auto classify = [&](const std::string& entry, bool directoriesOnly) {
    if (isRemoteReference(entry)) {
      k.remoteRefs.push_back(entry);
      return;
    }
    const fs::path p = fs::path(dir) / entry;
    std::error_code ec;
    if (fs::is_directory(p, ec)) k.referencedDirs.push_back(normal(p));
    else if (!directoriesOnly) k.resourceFiles.push_back(normal(p));
  };
  for (const std::string& r : stringsAt(doc, "resources")) classify(r, false);
  for (const std::string& r : stringsAt(doc, "bases")) classify(r, true);
  for (const std::string& r : stringsAt(doc, "components")) classify(r, true);
  readHelmCharts(doc, dir, k);
  for (const std::string& p : pathsOfObjects(doc, "patches")) k.patchFiles.push_back(normal(fs::path(dir) / p));
  for (const std::string& p : pathsOfObjects(doc, "patchesJson6902")) k.patchFiles.push_back(normal(fs::path(dir) / p));
  for (const std::string& p : stringsAt(doc, "patchesStrategicMerge")) {
    // An entry is a file name, or a patch written inline.
    if (p.find('\n') == std::string::npos && p.find(": ") == std::string::npos)
      k.patchFiles.push_back(normal(fs::path(dir) / p));
  }
  return k;
}

std::string displayPath(const std::string& absolute) {
  const fs::path path = fs::path(absolute).lexically_normal();
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (!ec) {
    const fs::path rel = path.lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  }
  return path.generic_string();
}

bool isRemoteReference(const std::string& entry) {
  for (const char* prefix : {"git::", "github.com/", "gitlab.com/", "bitbucket.org/", "git@"}) {
    if (entry.starts_with(prefix)) return true;
  }
  return entry.find("://") != std::string::npos;
}

namespace {

// `root`'s tree: itself, then what it includes, each read once, in the
// order a depth-first walk meets them.
std::vector<Kustomization> includedKustomizations(const Kustomization& root) {
  std::vector<Kustomization> tree, pending{root};
  std::set<std::string> seen{normal(root.dir)};
  while (!pending.empty()) {
    tree.push_back(std::move(pending.back()));
    pending.pop_back();
    for (const std::string& dir : tree.back().referencedDirs) {
      if (seen.insert(normal(dir)).second && kustomizationFileIn(dir)) pending.push_back(readKustomization(dir));
    }
  }
  return tree;
}

std::optional<std::pair<std::string, std::string>> firstRemoteReference(const std::vector<Kustomization>& tree) {
  for (const Kustomization& k : tree) {
    if (!k.remoteRefs.empty()) return std::pair(k.file, k.remoteRefs.front());
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> firstRemoteReference(const Kustomization& root) {
  return firstRemoteReference(includedKustomizations(root));
}

namespace {

// Drops the findings of the objects the remapper traced outside reportOnly.
void keepReported(FileReport& report, const KustomizeRemapper& remapper) {
  FindingStore kept;
  for (const Located& l : report.findings) {
    if (remapper.reported(l.document)) kept.push_back(l);
  }
  report.findings = std::move(kept);
}

}  // namespace

FileReport lintKustomization(const Kustomization& root, const std::vector<Kustomization>& tree,
                             const RenderCommand& command, const LintPolicy& policy, const RenderSettings& settings,
                             const std::vector<std::string>& reportOnly) {
  const std::size_t limit = yaml::Limits{}.maxDocumentBytes;
  FileReport failed;
  failed.file = root.dir;
  // Its tree, read once: whether kustomize would fetch, and whether it inflates Helm charts.
  const std::vector<Kustomization> included = includedKustomizations(root);
  if (const auto remote = settings.allowRemote ? std::nullopt : firstRemoteReference(included)) {
    failed.errors.push_back({root.file, 0, 0,
                             "not rendered: " + remote->first + " names the remote base " + remote->second +
                                 ", which kustomize would fetch from the network; vendor it into the tree, or "
                                 "pass --allow-remote"});
    return failed;
  }
  RenderCommand build = command;
  if (std::ranges::any_of(included, &Kustomization::helmCharts)) build.push_back("--enable-helm");
  const auto render = [&](const std::string& dir) {
    std::vector<std::string> argv = build;
    argv.push_back(dir);
    return runCommand(argv, limit, settings.timeoutMs);
  };
  Wrapper wrapper(root.dir);
  std::optional<CommandResult> rendered;
  if (wrapper.ok()) rendered = render(wrapper.dir().string());
  bool withOrigins = rendered && rendered->ran && rendered->exitStatus == 0;
  // The root itself: its own error message (or, with a kustomize too old
  // for buildMetadata, its output without origins).
  if (!withOrigins) rendered = render(root.dir);
  if (!rendered->ran || rendered->exitStatus != 0) {
    const std::string why = !rendered->ran ? rendered->error : errorSummary(rendered->err, 3);
    failed.errors.push_back({root.file, 0, 0, "cannot render the kustomization (" + command[0] + " " + command[1] +
                                                  " " + root.dir + "): " + why});
    return failed;
  }
  KustomizeRemapper remapper(root, patchesOf(root, tree), withOrigins ? wrapper.dir() : fs::path(root.dir),
                             reportOnly);
  LintOptions options;
  options.remap = &remapper;
  FileReport report = lintText(root.dir, rendered->out, policy, options);
  if (!reportOnly.empty()) keepReported(report, remapper);
  for (InputError& e : report.errors) {
    e.file = root.file;
    e.message = "the output of " + command[0] + " " + command[1] + " " + root.dir + " does not parse: " + e.message;
    e.line = e.column = 0;
  }
  return report;
}

}  // namespace gpuguard::lint
