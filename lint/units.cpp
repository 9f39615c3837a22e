#include "lint/units.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "lint/render/kustomize_includers.h"

namespace gpuguard::lint {
namespace {

namespace fs = std::filesystem;

std::string normal(const std::string& p) { return fs::path(p).lexically_normal().generic_string(); }

class ChartFinder {
 public:
  // The outermost chart whose templates (or a subchart's) hold `file`, or "".
  // Worked out once per directory: a run names thousands of files in a few
  // hundred directories, and planning them is the serial part of a run.
  const std::string& templateChart(const std::string& file) {
    const fs::path dir = fs::path(file).parent_path();
    auto [known, added] = chartOfDirectory_.try_emplace(dir.native());
    if (added) known->second = templateChartOf(dir);
    return known->second;
  }

  // A subchart (PARENT/charts/NAME) is rendered with its parent.
  std::string outermost(std::string chart) {
    while (true) {
      const fs::path p(chart);
      const fs::path charts = p.parent_path();
      if (charts.filename() != "charts" || !isChart(charts.parent_path())) return normal(chart);
      chart = charts.parent_path().generic_string();
    }
  }

  bool isChart(const fs::path& dir) {
    const std::string key = dir.generic_string();
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::error_code ec;
    const bool chart = fs::is_regular_file((dir.empty() ? fs::path(".") : dir) / "Chart.yaml", ec);
    return cache_.emplace(key, chart).first->second;
  }

  // Chart.yaml or a values*.yaml beside it: what a chart is rendered from,
  // not a manifest.
  bool isChartInput(const fs::path& file) {
    const std::string name = file.filename().string();
    return name == "Chart.yaml" || (name.starts_with("values") && isChart(file.parent_path()));
  }

 private:
  // .../CHART/templates/**: the nearest "templates" with a Chart.yaml beside
  // it, above `dir`; then its outermost chart.
  std::string templateChartOf(const fs::path& dir) {
    std::string chart;
    for (fs::path d = dir; !d.empty() && d.has_filename(); d = d.parent_path()) {
      if (d.filename() == "templates" && isChart(d.parent_path())) {
        chart = d.parent_path().generic_string();
        break;
      }
    }
    return chart.empty() ? chart : outermost(chart);
  }

  std::map<std::string, bool> cache_;
  std::map<std::string, std::string> chartOfDirectory_;
};

// The patch lists of the kustomizations above a file's directory: a file
// named on its own (pre-commit passes changed files) may be a patch that a
// kustomization in a parent directory lists (overlays/prod/kustomization.yaml
// naming patches/gpu.yaml). Read, not rendered: they only say which files
// are patches. Each directory is read once.
class ParentPatches {
 public:
  bool lists(const std::string& file) {
    const std::string n = normal(file);
    const fs::path start = fs::path(n).parent_path();  // its own directory is one of the run's (planUnits)
    // Most trees have no kustomization above a directory at all: known once
    // per directory, so the walk up is not repeated for each of its files.
    auto [known, added] = patchesAbove_.try_emplace(start.native());
    if (added) known->second = walkUp(start, [this](const std::string& dir) { return !patchesIn(dir).empty(); });
    return known->second && walkUp(start, [&](const std::string& dir) { return patchesIn(dir).count(n) > 0; });
  }

 private:
  static constexpr int kMaxDepth = 16;  // deep enough for any GitOps tree, bounded for a path like /a/b/c/...

  // Whether `found` holds for a directory above `start`, lexically up:
  // "a/b" -> "a" -> "" (the working directory); never past ".." or "/".
  template <typename Found>
  static bool walkUp(fs::path dir, const Found& found) {
    for (int depth = 0; depth < kMaxDepth && !dir.empty() && dir.has_relative_path() && dir.filename() != "..";
         ++depth) {
      dir = dir.parent_path();
      if (found(dir.empty() ? "." : dir.generic_string())) return true;
    }
    return false;
  }

  const std::set<std::string>& patchesIn(const std::string& dir) {
    auto it = cache_.find(dir);
    if (it != cache_.end()) return it->second;
    std::set<std::string> patches;
    if (kustomizationFileIn(dir)) {
      const Kustomization k = readKustomization(dir);
      patches.insert(k.patchFiles.begin(), k.patchFiles.end());
    }
    return cache_.emplace(dir, std::move(patches)).first->second;
  }

  std::map<std::string, bool> patchesAbove_;  // by the directory the walk starts from
  std::map<std::string, std::set<std::string>> cache_;
};

// Marks `start` and every kustomization of `tree` it lists, directly or not.
void markReached(const std::vector<Kustomization>& tree, const std::map<std::string, std::size_t>& byDir,
                 std::size_t start, std::vector<bool>& reached) {
  std::vector<std::size_t> todo{start};
  while (!todo.empty()) {
    const std::size_t i = todo.back();
    todo.pop_back();
    if (reached[i]) continue;
    reached[i] = true;
    for (const std::string& dir : tree[i].referencedDirs) {
      if (auto it = byDir.find(dir); it != byDir.end()) todo.push_back(it->second);
    }
  }
}

// Kustomizations that list each other in a cycle (a lists b, b lists a) are
// all referenced, so none is a root and no root reaches them: the first of
// each such cycle (in tree order) is rendered as a root too, so that
// kustomize's cycle error is the run's input error and their files are not
// silently left out as "listed by a kustomization".
// Those judged through the repository's roots (`through`) are reached.
void addRootsOfCycles(const std::vector<Kustomization>& tree, const std::vector<bool>& through,
                      std::vector<std::size_t>& roots) {
  std::map<std::string, std::size_t> byDir;
  for (std::size_t i = 0; i < tree.size(); ++i) byDir.emplace(normal(tree[i].dir), i);
  std::vector<bool> reached(tree.size(), false);
  for (std::size_t root : roots) markReached(tree, byDir, root, reached);
  for (std::size_t i = 0; i < tree.size(); ++i) {
    if (through[i]) markReached(tree, byDir, i, reached);
  }
  for (std::size_t i = 0; i < tree.size(); ++i) {
    if (reached[i] || tree[i].component) continue;
    roots.push_back(i);
    markReached(tree, byDir, i, reached);
  }
  std::sort(roots.begin(), roots.end());
}

// What the repository's kustomizations outside the run add to the plan.
struct RepositoryRoots {
  std::vector<bool> through;  // by index in Plan::tree: judged through the roots that include it
  // The including roots that are not the run's, by directory: the
  // directoryKey()s of what each was found for (Plan::reportOnly).
  std::map<std::string, std::set<std::string>> reportOnly;
};

// A kustomization of the run that a root of the repository includes is
// judged through that root, never on its own. A run with the whole tree
// finds only its own roots: nothing changes, nothing is said.
RepositoryRoots findIncludingRoots(Plan& plan, const std::set<std::string>& referenced,
                                   KustomizationIncluders& includers) {
  RepositoryRoots found;
  found.through.assign(plan.tree.size(), false);
  std::set<std::string> runKeys, unsearched;
  for (const Kustomization& k : plan.tree) runKeys.insert(directoryKey(k.dir));
  for (std::size_t i = 0; i < plan.tree.size(); ++i) {
    const Inclusion inclusion = includers.includingRoots(plan.tree[i].dir);
    if (!inclusion.unsearched.empty()) unsearched.insert(inclusion.unsearched);
    if (inclusion.roots.empty()) continue;
    found.through[i] = true;
    std::vector<std::string> outside;
    for (const std::string& root : inclusion.roots) {
      if (!runKeys.count(directoryKey(root))) outside.push_back(root);
    }
    if (outside.empty() && referenced.count(normal(plan.tree[i].dir))) continue;  // as the run renders it anyway
    plan.judgedThrough.push_back({plan.tree[i].dir, inclusion.roots});
    if (outside.empty()) continue;
    std::set<std::string> keys;
    for (const Kustomization& k : includers.treeOf(plan.tree[i].dir)) keys.insert(directoryKey(k.dir));
    for (const std::string& root : outside) found.reportOnly[root].insert(keys.begin(), keys.end());
  }
  for (const std::string& why : unsearched) {
    plan.notes.push_back("the kustomizations that include those of the run were not searched for: " + why +
                         "; each is judged as a root");
  }
  return found;
}

// Each including root outside the run, rendered once, with what it includes
// (as the search read them: their patches place its findings).
void addRepositoryRoots(Plan& plan, const RepositoryRoots& found, const KustomizationIncluders& includers) {
  for (const auto& [root, keys] : found.reportOnly) {
    const std::size_t at = plan.tree.size();
    const std::vector<Kustomization> tree = includers.treeOf(root);
    plan.tree.insert(plan.tree.end(), tree.begin(), tree.end());
    plan.roots.push_back(at);
    plan.reportOnly[at].assign(keys.begin(), keys.end());
  }
}

}  // namespace

Plan planUnits(const std::vector<std::string>& files, const Renderers& renderers) {
  Plan plan;
  ChartFinder charts;
  std::set<std::string> chartDirs, kustomizationDirs, checkedDirs;
  for (const std::string& f : files) {
    if (f == "-") continue;
    const fs::path p(f);
    const std::string dir = p.parent_path().empty() ? "." : p.parent_path().generic_string();
    // Chart.yaml or a values file named alone (pre-commit passes the changed
    // file): the chart it belongs to is what changed.
    if (charts.isChartInput(p)) chartDirs.insert(charts.outermost(dir));
    if (const std::string chart = charts.templateChart(f); !chart.empty()) chartDirs.insert(chart);
    if (isKustomizationFileName(p.filename().string())) kustomizationDirs.insert(normal(dir));
    else if (checkedDirs.insert(dir).second && kustomizationFileIn(dir)) kustomizationDirs.insert(normal(dir));
  }

  for (const std::string& dir : kustomizationDirs) plan.tree.push_back(readKustomization(dir));
  std::set<std::string> referenced, owned, patches;
  for (const Kustomization& k : plan.tree) referenced.insert(k.referencedDirs.begin(), k.referencedDirs.end());
  // Without a renderer nothing is rendered, the repository's roots neither.
  KustomizationIncluders includers;
  RepositoryRoots repositoryRoots;
  repositoryRoots.through.assign(plan.tree.size(), false);
  if (renderers.kustomize) repositoryRoots = findIncludingRoots(plan, referenced, includers);
  const std::vector<bool>& through = repositoryRoots.through;
  for (std::size_t i = 0; i < plan.tree.size(); ++i) {
    const Kustomization& k = plan.tree[i];
    owned.insert(normal(k.file));
    patches.insert(k.patchFiles.begin(), k.patchFiles.end());
    // kustomize refuses to build a Component on its own; one that no kustomization
    // lists keeps its files: resources as written, patches as fragments.
    if (k.component && !referenced.count(normal(k.dir)) && !through[i]) continue;
    owned.insert(k.resourceFiles.begin(), k.resourceFiles.end());
    owned.insert(k.patchFiles.begin(), k.patchFiles.end());
  }
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < plan.tree.size(); ++i) {
    if (referenced.count(normal(plan.tree[i].dir))) continue;  // a base or component: linted through its overlay
    if (plan.tree[i].component) continue;                      // not a build of its own (above)
    if (through[i]) continue;                                  // a base of the repository's (above)
    roots.push_back(i);
  }
  addRootsOfCycles(plan.tree, through, roots);
  for (std::size_t i : roots) {
    if (renderers.kustomize) plan.roots.push_back(i);
    else plan.unrendered.push_back(plan.tree[i].dir);
  }
  addRepositoryRoots(plan, repositoryRoots, includers);
  if (renderers.helm) plan.charts.assign(chartDirs.begin(), chartDirs.end());
  else plan.skippedCharts.assign(chartDirs.begin(), chartDirs.end());

  ParentPatches above;
  for (const std::string& f : files) {
    const std::string n = f == "-" ? f : normal(f);
    if (f != "-" && !charts.templateChart(f).empty()) continue;  // rendered with its chart, or skipped
    if (renderers.kustomize && owned.count(n)) continue;         // judged through the rendered output
    if (renderers.helm && f != "-" && charts.isChartInput(f)) continue;  // rendered with its chart
    plan.files.push_back(f);
    // A patch only when a kustomization lists it: one of the run's, or one
    // above the file's directory.
    if (f != "-" && (patches.count(n) || above.lists(f))) plan.fragments.insert(n);
  }
  return plan;
}

}  // namespace gpuguard::lint
