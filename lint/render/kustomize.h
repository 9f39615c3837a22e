// Kustomizations: a directory holding kustomization.yaml is one unit. With
// a renderer (kustomize build, kubectl kustomize) gpuguard-lint judges each
// root's output (an overlay's, not its parts) and places each finding in
// the file it came from: kustomize's origin annotations (buildMetadata:
// [originAnnotations], asked for through a wrapper kustomization so the
// user's files stay as they are) name the resource file; the value itself
// is looked up in the patches and then in that file. Without a renderer,
// the files a kustomization lists as patches are judged as fragments.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/lint_file.h"

namespace gpuguard::lint {

struct Kustomization {
  std::string dir;                          // as walked ("gitops/overlays/prod")
  std::string file;                         // its kustomization.yaml
  std::vector<std::string> resourceFiles;   // resources that are files (lexically normal paths)
  std::vector<std::string> referencedDirs;  // resources, bases and components that are directories
  std::vector<std::string> patchFiles;      // patches, patchesStrategicMerge, patchesJson6902 paths
  std::vector<std::string> remoteRefs;      // resources, bases and components that are URLs or git repositories
  bool component = false;                   // kind: Component: rendered only by a kustomization that lists it
  bool helmCharts = false;                  // helmCharts: kustomize inflates them only with --enable-helm
  std::string error;                        // could not be read or parsed
};

// The kustomization file of `dir` (kustomization.yaml, .yml or Kustomization), if any.
std::optional<std::string> kustomizationFileIn(const std::string& dir);
bool isKustomizationFileName(const std::string& fileName);

Kustomization readKustomization(const std::string& dir);

// What the run shows for an absolute path (a file kustomize names, a
// kustomization found in the repository): relative to the working directory
// when inside it, else absolute.
std::string displayPath(const std::string& absolute);

// How to run the renderer: {"kustomize", "build"} or {"kubectl", "kustomize"}.
using RenderCommand = std::vector<std::string>;

// What every renderer (kustomize, helm) of a run may do.
struct RenderSettings {
  static constexpr std::string_view kDefaultKubeVersion = "1.37.0";
  int timeoutMs = 300'000;   // --render-timeout: then it and what it started are killed
  bool allowRemote = false;  // --allow-remote: kustomize may fetch remote bases
  // --kube-version: the Kubernetes version helm template renders for (its
  // .Capabilities.KubeVersion and Chart.yaml's kubeVersion check). Without
  // it helm takes the version compiled into it, older than the clusters
  // gpuguard judges for, and refuses charts that require a newer one.
  std::string kubeVersion = std::string(kDefaultKubeVersion);
  // --namespace: the namespace helm template renders into (.Release.Namespace);
  // empty: helm's own ("default", which NVIDIA's device-plugin and DRA-driver
  // charts refuse).
  std::string helmNamespace;
};

// A resource, base or component that kustomize would fetch: a URL
// (https://, ssh://, git::...), a git repository (github.com/org/repo,
// gitlab.com/..., bitbucket.org/..., git@host:repo).
bool isRemoteReference(const std::string& entry);

// The first remote reference of `root` or of any kustomization it includes
// (read from their files, before anything is rendered): {kustomization
// file, reference}; nullopt when there is none.
std::optional<std::pair<std::string, std::string>> firstRemoteReference(const Kustomization& root);

// Renders `root` and lints its output; `tree` (every kustomization the run
// found) tells which patches may have set a value. Findings carry the file
// they came from; a render that fails is an InputError of the unit.
// A root that names a remote base is not rendered without
// settings.allowRemote: an InputError naming the kustomization and the URL.
// `reportOnly` (directoryKey()s; lint/render/kustomize_includers.h): when
// set, only the findings of objects kustomize traces to a file under one of
// these directories are reported (a root rendered to judge a base it
// includes reports the base's objects, not every other app's); objects it
// cannot trace (generated ones, a kustomize without origin annotations) are
// reported.
FileReport lintKustomization(const Kustomization& root, const std::vector<Kustomization>& tree,
                             const RenderCommand& command, const LintPolicy& policy,
                             const RenderSettings& settings = {}, const std::vector<std::string>& reportOnly = {});

}  // namespace gpuguard::lint
