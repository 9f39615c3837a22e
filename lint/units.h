// What a run lints, unit by unit: plain files; kustomizations (a directory
// with kustomization.yaml), rendered when a renderer is at hand; Helm charts
// (a directory with Chart.yaml), rendered when helm is. The files a rendered
// unit is made of are judged through its output, not on their own.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lint/render/kustomize.h"

namespace gpuguard::lint {

struct Renderers {
  std::optional<RenderCommand> kustomize;  // none: kustomizations are not rendered
  std::optional<std::string> helm;         // none: charts are not rendered
  RenderSettings settings;                 // how long they may run, whether kustomize may fetch
};

struct Plan {
  std::vector<std::string> files;            // linted as written, in input order
  std::set<std::string> fragments;           // of those, kustomize patches (lexically normal paths): the
                                             // files a kustomization of the run, or one in a directory above
                                             // the file, lists as patches; nothing else
  std::vector<Kustomization> tree;           // every kustomization found
  std::vector<std::size_t> roots;            // indexes in `tree` to render (only with a renderer)
  std::vector<std::string> unrendered;       // kustomization roots not rendered (no renderer)
  std::vector<std::string> charts;           // charts to render (only with helm)
  std::vector<std::string> skippedCharts;    // charts whose templates/ were skipped (no helm)

  // A kustomization of the run that a kustomization of the repository
  // outside the run includes (a base named alone: pre-commit passes the
  // changed file) is judged through the repository's roots that include it,
  // never on its own (lint/render/kustomize_includers.h). Only with a renderer.
  struct JudgedThrough {
    std::string dir;                 // as the run names it
    std::vector<std::string> roots;  // the including roots' directories
  };
  std::vector<JudgedThrough> judgedThrough;
  // Those roots (indexes in `tree`) that are not the run's own: what each
  // reports, the directoryKey()s of the run's kustomizations it was rendered
  // for (lintKustomization's reportOnly).
  std::map<std::size_t, std::vector<std::string>> reportOnly;
  std::vector<std::string> notes;  // said on stderr: a repository that was not searched
};

// `files` as expandInputs gave them. A kustomization or chart is found from
// its kustomization.yaml / Chart.yaml in the list, or, for a file named on
// its own (pre-commit passes changed files), from the file's directory and
// its parents.
Plan planUnits(const std::vector<std::string>& files, const Renderers& renderers);

}  // namespace gpuguard::lint
