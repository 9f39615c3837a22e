// Which kustomizations of the repository include a kustomization: a base,
// or a component, named alone (pre-commit passes only the changed files)
// is judged through the roots that include it, never on its own, as when
// the whole tree is linted (docs/linter.md, Kustomize).
//
// The repository is the nearest directory above holding .git (a work tree
// or a git worktree's .git file), else the working directory when the
// kustomization is inside it; nothing is searched outside those. Each
// repository is walked once per run (hidden directories such as .git,
// node_modules and vendor skipped, symbolic links not followed, at most
// maxDirectories directories), each kustomization in it read once, and
// the include graph kept for every later question.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lint/render/kustomize.h"

namespace gpuguard::lint {

struct Inclusion {
  // The roots (kustomizations nothing in the repository includes) that
  // include the kustomization, directly or through others, as the run shows
  // their directories, sorted; empty when none does.
  std::vector<std::string> roots;
  std::string unsearched;  // why the repository was not searched, else ""
};

class KustomizationIncluders {
 public:
  static constexpr std::size_t kDefaultMaxDirectories = 50'000;

  explicit KustomizationIncluders(std::size_t maxDirectories = kDefaultMaxDirectories);
  ~KustomizationIncluders();
  KustomizationIncluders(const KustomizationIncluders&) = delete;
  KustomizationIncluders& operator=(const KustomizationIncluders&) = delete;

  // `dir`: a kustomization's directory as the run names it.
  Inclusion includingRoots(const std::string& dir);

  // `rootDir` (one includingRoots gave) and every kustomization it
  // includes, as the search read them; what lintKustomization needs of the
  // tree (its patches).
  std::vector<Kustomization> treeOf(const std::string& rootDir) const;

 private:
  struct Graph;
  const Graph& graphOf(const std::string& repository);

  std::size_t maxDirectories_;
  std::map<std::string, std::unique_ptr<Graph>> graphs_;  // by the repository's absolute path
};

// The same directory however the run spells it: absolute, lexically
// normal, no trailing slash.
std::string directoryKey(const std::string& dir);

}  // namespace gpuguard::lint
