#include "lint/render/kustomize_includers.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace gpuguard::lint {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 32;  // below the repository's top; deeper directories are not walked

// Never where a kustomization of the repository's own lives: git's data,
// other tools' caches (.terraform, .cache), installed or vendored packages.
bool skippedDirectory(const std::string& name) {
  return name.starts_with(".") || name == "node_modules" || name == "vendor";
}

// The nearest directory at or above `dir` that holds .git (a directory, or
// the file a git worktree has); else the working directory when `dir` is
// inside it; else "" (nothing to search).
std::string repositoryOf(const fs::path& dir) {
  for (fs::path d = dir;; d = d.parent_path()) {
    std::error_code ec;
    if (fs::exists(d / ".git", ec)) return d.generic_string();
    if (d == d.root_path() || d.empty()) break;
  }
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return "";
  const fs::path rel = dir.lexically_relative(cwd);
  return !rel.empty() && *rel.begin() != ".." ? cwd.generic_string() : "";
}

struct Walk {
  std::vector<std::string> directories;  // absolute, sorted: those holding a kustomization file
  std::string unsearched;                // why the walk gave up, else ""
};

// Every directory under `top` (and `top`) holding a kustomization file.
Walk kustomizationDirectoriesUnder(const fs::path& top, std::size_t maxDirectories) {
  Walk walk;
  std::set<std::string> found;
  if (kustomizationFileIn(top.generic_string())) found.insert(top.generic_string());
  std::size_t directories = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(top, fs::directory_options::skip_permission_denied, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    std::error_code typeError;
    if (entry.is_symlink(typeError)) continue;  // never followed: no cycles, nothing outside the tree
    if (entry.is_directory(typeError)) {
      if (skippedDirectory(entry.path().filename().string()) || it.depth() >= kMaxDepth) {
        it.disable_recursion_pending();
      } else if (++directories > maxDirectories) {
        walk.unsearched = "the repository " + displayPath(top) + " has more than " + std::to_string(maxDirectories) +
                          " directories";
        return walk;
      }
    } else if (isKustomizationFileName(entry.path().filename().string())) {
      found.insert(entry.path().parent_path().generic_string());
    }
  }
  if (ec) {
    walk.unsearched = "the repository " + displayPath(top) + " could not be read (" + ec.message() + ")";
    return walk;
  }
  walk.directories.assign(found.begin(), found.end());
  return walk;
}

}  // namespace

std::string directoryKey(const std::string& dir) {
  std::error_code ec;
  std::string key = fs::absolute(dir.empty() ? "." : dir, ec).lexically_normal().generic_string();
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

struct KustomizationIncluders::Graph {
  std::vector<Kustomization> nodes;
  std::map<std::string, std::size_t> byKey;           // directoryKey of each node
  std::vector<std::vector<std::size_t>> includes;     // the nodes each lists (resources, bases, components)
  std::vector<std::vector<std::size_t>> includedBy;   // the reverse
  std::string unsearched;

  std::vector<std::size_t> reachable(std::size_t from, const std::vector<std::vector<std::size_t>>& edges) const {
    std::vector<std::size_t> out, todo{from};
    std::set<std::size_t> seen{from};
    while (!todo.empty()) {
      const std::size_t i = todo.back();
      todo.pop_back();
      out.push_back(i);
      for (std::size_t next : edges[i]) {
        if (seen.insert(next).second) todo.push_back(next);
      }
    }
    return out;
  }
};

KustomizationIncluders::KustomizationIncluders(std::size_t maxDirectories) : maxDirectories_(maxDirectories) {}
KustomizationIncluders::~KustomizationIncluders() = default;

const KustomizationIncluders::Graph& KustomizationIncluders::graphOf(const std::string& repository) {
  auto [known, added] = graphs_.try_emplace(repository);
  if (!added) return *known->second;
  known->second = std::make_unique<Graph>();
  Graph& g = *known->second;
  Walk walk = kustomizationDirectoriesUnder(repository, maxDirectories_);
  g.unsearched = std::move(walk.unsearched);
  for (const std::string& dir : walk.directories) {
    g.byKey.emplace(directoryKey(dir), g.nodes.size());
    g.nodes.push_back(readKustomization(displayPath(dir)));
  }
  g.includes.resize(g.nodes.size());
  g.includedBy.resize(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& referenced : g.nodes[i].referencedDirs) {
      const auto it = g.byKey.find(directoryKey(referenced));
      if (it == g.byKey.end() || it->second == i) continue;
      g.includes[i].push_back(it->second);
      g.includedBy[it->second].push_back(i);
    }
  }
  return g;
}

Inclusion KustomizationIncluders::includingRoots(const std::string& dir) {
  Inclusion inclusion;
  const std::string key = directoryKey(dir);
  const std::string repository = repositoryOf(key);
  if (repository.empty()) return inclusion;
  const Graph& g = graphOf(repository);
  inclusion.unsearched = g.unsearched;
  const auto it = g.byKey.find(key);
  if (it == g.byKey.end()) return inclusion;
  // A kustomization nothing includes is a root; one in a cycle with no root
  // above it has none (kustomize's cycle error then comes from rendering it).
  for (std::size_t i : g.reachable(it->second, g.includedBy)) {
    if (i != it->second && g.includedBy[i].empty() && !g.nodes[i].component) inclusion.roots.push_back(g.nodes[i].dir);
  }
  std::sort(inclusion.roots.begin(), inclusion.roots.end());
  return inclusion;
}

std::vector<Kustomization> KustomizationIncluders::treeOf(const std::string& rootDir) const {
  std::vector<Kustomization> tree;
  const std::string key = directoryKey(rootDir);
  for (const auto& [repository, graph] : graphs_) {
    const auto it = graph->byKey.find(key);
    if (it == graph->byKey.end()) continue;
    for (std::size_t i : graph->reachable(it->second, graph->includes)) tree.push_back(graph->nodes[i]);
    break;
  }
  return tree;
}

}  // namespace gpuguard::lint
