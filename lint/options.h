// gpuguard-lint's command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuguard::lint {

enum class Format { Text, Json, Sarif, Junit, Github };

// One report of a run: --format FORMAT (stdout, or --output) or
// --format FORMAT=FILE.
struct FormatTarget {
  Format format = Format::Text;
  std::optional<std::string> path;  // nullopt: stdout (or --output)
};

// Which findings make the exit status 1 (--fail-on).
enum class FailOn { Error, Warning, None };

// How kustomizations are rendered (--render).
enum class Render {
  Auto,       // kustomize if it is on PATH, else kubectl; neither: lint the files as written
  None,       // never (kustomizations nor Helm charts): lint the files as written
  Kustomize,  // kustomize build (an error if it is not on PATH)
  Kubectl,    // kubectl kustomize (an error if it is not on PATH)
};

struct Options {
  std::vector<std::string> paths;
  Format format = Format::Text;        // the report on stdout (or --output): the bare --format
  bool bareFormat = false;             // a bare --format was given
  std::vector<FormatTarget> fileFormats;  // --format FORMAT=FILE, in command-line order
  std::optional<std::string> output;   // --output FILE
  FailOn failOn = FailOn::Error;
  bool failOnEmpty = false;            // --fail-on-empty: no Kubernetes object linted at all is exit 2
  std::vector<std::string> enable;     // --enable RULE: run it at its default severity
  std::vector<std::string> disable;    // --disable RULE
  Render render = Render::Auto;
  std::vector<std::string> helmValues; // --helm-values FILE (helm template -f FILE)
  std::optional<std::string> config;   // --config FILE
  std::optional<std::string> platform; // --platform NAME: the policy's platform preset, whatever the file says
  bool showSuppressed = false;
  enum class Color { Auto, Always, Never } color = Color::Auto;
  unsigned jobs = 0;                   // 0: all cores
  bool listRules = false;
  std::optional<std::string> explain;  // --explain ID (a rule or built-in check)
  bool rulesMarkdown = false;
  bool rulesTable = false;             // --rules-table: the README's rules table
  bool fix = false;                    // --fix: rewrite what can be fixed safely, in place
  bool dryRun = false;                 // --dry-run (with --fix): print a unified diff instead
  bool fixFollowSymlinks = false;      // --fix-follow-symlinks: write a link's target outside the tree too
  int renderTimeoutMs = 300'000;       // --render-timeout: helm/kustomize are killed (their process group) after it
  bool allowRemote = false;            // --allow-remote: let kustomize fetch remote bases (URLs, git)
  std::string kubeVersion;             // --kube-version: for helm template (empty: RenderSettings' default)
  bool version = false;
  bool help = false;
  // --nodes / --pods: "Why is my GPU pod Pending?" (lint/pending.h)
  std::optional<std::string> nodes;    // --nodes FILE: kubectl get nodes -o json
  std::optional<std::string> pods;     // --pods FILE: kubectl get pods -A -o json
  // --facts FILE: judge against a cluster snapshot's facts (lint/facts_file.h)
  std::optional<std::string> facts;
  // --cluster: judge against a live cluster's facts, one list of each resource (lint/cluster_list.h)
  bool cluster = false;
  std::optional<std::string> kubeconfig;  // --kubeconfig FILE (with --cluster)
  std::optional<std::string> kubeContext; // --context NAME (with --cluster)
  // --cluster --pending: the GPU pods Pending now, explained (lint/cluster_pending.h)
  bool pending = false;
  std::optional<std::string> namespaceName;  // -n, --namespace NS: charts' render namespace; --pending's (default: the context's)
  bool allNamespaces = false;                // -A, --all-namespaces
};

struct ParsedOptions {
  Options options;
  std::string error;  // non-empty: bad usage
};

ParsedOptions parseOptions(const std::vector<std::string>& args);

extern const char* const kUsage;

}  // namespace gpuguard::lint
