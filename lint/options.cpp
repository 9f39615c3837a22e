#include "lint/options.h"

#include "rules/policy.h"

#include <charconv>
#include <optional>
#include <string_view>

namespace gpuguard::lint {
namespace {

// "300s", "5m", "1h", "1500ms" or a bare number of seconds, as milliseconds
// (at least 1, at most a day); nullopt when it is none of them.
std::optional<int> durationMs(std::string_view text) {
  long long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data() || n <= 0) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  long long ms = 0;
  if (unit == "ms") ms = n;
  else if (unit == "s" || unit.empty()) ms = n * 1000;
  else if (unit == "m") ms = n * 60'000;
  else if (unit == "h") ms = n * 3'600'000;
  else return std::nullopt;
  if (n > 86'400'000 || ms > 86'400'000) return std::nullopt;
  return static_cast<int>(ms);
}

}  // namespace

const char* const kUsage = R"(Usage: gpuguard-lint [options] PATH...

Checks Kubernetes manifests for GPU mistakes before they reach a cluster.
PATH is a file, a directory (searched for *.yaml, *.yml, *.json) or - for stdin.

Options:
  -f, --format FORMAT    text (default), json, sarif (SARIF 2.1.0), junit (JUnit XML)
                         or github (GitHub Actions workflow commands), on stdout
  -f, --format FORMAT=FILE
                         also write that report to FILE; repeat for several formats in
                         one run (--format sarif=out.sarif --format junit=out.xml --format
                         text); at most one --format without =FILE goes to stdout
  -o, --output FILE      write the stdout report (or the --dry-run diff) to FILE instead
      --fail-on LEVEL    error (default): exit 1 on an error finding; warning: also on a
                         warning; none: findings never fail the run (input errors still do)
      --enable RULE      run RULE at its default severity, whatever the policy file says
      --disable RULE     do not run RULE (repeatable, like --enable)
      --fail-on-empty    exit 2 when no Kubernetes object was linted at all (a wrong path,
                         nothing rendered): by default that is only a note on stderr
      --render WHAT      kustomizations (directories with kustomization.yaml): auto
                         (default: kustomize, else kubectl kustomize, when on PATH),
                         kustomize, kubectl, or none (lint the files as written, and
                         render no Helm chart; patches are judged only for what a patch
                         decides alone)
      --helm-values FILE values for helm template, for charts (directories with
                         Chart.yaml) rendered when helm is on PATH (repeatable)
      --fix              fix what can be fixed safely, in place (requests-only -> limits,
                         the missing GPU toleration), keeping comments and formatting;
                         then report what remains
      --dry-run          with --fix: print the fixes as a unified diff, change nothing
      --fix-follow-symlinks
                         with --fix: also write the target of a symbolic link that leads
                         outside the linted tree (by default such a file is left alone)
      --kube-version VERSION
                         the Kubernetes version charts are rendered for (helm template
                         --kube-version; default 1.37.0)
      --render-timeout DURATION
                         stop helm or kustomize (and every process it started) after
                         DURATION: 300s (default), 90s, 5m, 1500ms
      --allow-remote     let kustomize fetch remote bases and resources (URLs, git repos);
                         by default a kustomization naming one is an input error
  -c, --config FILE      policy file (default: .gpuguard.yaml in this or a parent directory)
      --platform NAME    the cluster's platform: generic, gke, eks, eks-auto-mode, aks or
                         openshift (its GPU taint, toleration and label facts; the policy
                         file's own keys still win; docs/linter.md#platforms)
      --show-suppressed  also list findings silenced by ignore.gpuguard.io/<rule> annotations
      --color WHEN       auto (default), always or never; NO_COLOR is honoured
  -j, --jobs N           lint N files at a time (default: all cores)
      --list-rules       list the rules and built-in checks (--format json: as JSON) and exit
      --explain ID       print the documentation of a rule or built-in check, with examples, and exit
      --rules-markdown   print docs/rules.md and exit
      --rules-table      print the README's rules table and exit
      --version          print the version and exit
  -h, --help             print this help and exit

Why is my GPU pod Pending? (docs/pending.md)
      --nodes FILE       judge every GPU pod and pod template in PATH against the nodes
                         in FILE (kubectl get nodes -o json): a table per pod, or
                         --format json; exit 1 if one fits on no node
      --pods FILE        with --nodes: the pods holding resources (kubectl get pods -A -o json)

Judge against a cluster's facts (docs/cluster-facts.md)
      --facts FILE       the rules see the nodes, NodePools, DRA objects, namespaces and RuntimeClasses of
                         FILE (kubectl get nodes,nodepools,deviceclasses,resourceslices,namespaces,runtimeclasses -o json):
                         the GPU nodes a pod can reach decide its driver pin, its GPU count,
                         whether it can schedule at all (gpu-unschedulable)

Judge against a live cluster (docs/cluster-facts.md)
      --cluster          list the cluster's nodes, namespaces, DeviceClasses, ResourceClaim(Template)s,
                         ResourceSlices, RuntimeClasses and Karpenter NodePools once (get/list, no watch) and judge
                         against them;
                         exit 2 when the API server cannot be reached
      --kubeconfig FILE  with --cluster: the kubeconfig (default $KUBECONFIG, ~/.kube/config)
      --context NAME     with --cluster: the kubeconfig context (default current-context)
      --pending          with --cluster, no PATH: explain the GPU pods that are Pending now
                         against the live nodes and the pods holding GPUs, beside
                         kube-scheduler's own PodScheduled message (docs/pending.md); exit 1
                         if one can never schedule, 0 if they only wait for GPUs others hold
  -n, --namespace NS     the namespace helm template renders charts into (helm's default:
                         "default", which some charts refuse); with --pending, the namespace
                         asked (default: the context's namespace)
  -A, --all-namespaces   with --pending: every namespace

Exit status: 0 no finding at the --fail-on level, 1 at least one, 2 unreadable input,
a kustomization or chart that does not render, nothing linted with --fail-on-empty, or
bad usage. A chart whose dependencies are not fetched (helm dependency build) is a note,
not an error.
)";

namespace {

bool takeValue(const std::vector<std::string>& args, std::size_t& i, const std::string& flag, std::string& value,
               std::string& error) {
  const std::string& a = args[i];
  if (a.size() > flag.size() && a.compare(0, flag.size(), flag) == 0 && a[flag.size()] == '=') {
    value = a.substr(flag.size() + 1);
    return true;
  }
  if (flag.size() == 2 && a.size() > 2 && a.compare(0, 2, flag) == 0) {  // -j4, -fjson
    value = a.substr(2);
    return true;
  }
  if (i + 1 >= args.size()) {
    error = flag + " needs a value";
    return true;
  }
  value = args[++i];
  return true;
}

bool is(const std::string& arg, const char* shortFlag, const char* longFlag) {
  auto matches = [&](const char* f) {
    if (!f) return false;
    const std::string flag(f);
    // --flag, --flag=VALUE, -f, -fVALUE
    return arg == flag || (flag.size() > 2 && arg.rfind(flag + "=", 0) == 0) ||
           (flag.size() == 2 && arg.size() > 2 && arg[1] != '-' && arg.rfind(flag, 0) == 0);
  };
  return matches(shortFlag) || matches(longFlag);
}

std::optional<Format> formatNamed(std::string_view name) {
  if (name == "text") return Format::Text;
  if (name == "json") return Format::Json;
  if (name == "sarif") return Format::Sarif;
  if (name == "junit") return Format::Junit;
  if (name == "github") return Format::Github;
  return std::nullopt;
}

// "sarif" (stdout) or "sarif=out.sarif".
void addFormat(Options& o, const std::string& value, std::string& error) {
  const std::size_t eq = value.find('=');
  const std::string name = value.substr(0, eq);
  const std::optional<Format> format = formatNamed(name);
  if (!format) {
    error = "unknown format \"" + name + "\" (text, json, sarif, junit, github)";
  } else if (eq == std::string::npos) {
    if (o.bareFormat) error = "only one --format may go to stdout; give the others a file (--format " + name + "=FILE)";
    o.format = *format;
    o.bareFormat = true;
  } else if (eq + 1 == value.size()) {
    error = "--format " + value + " needs a file name after '='";
  } else {
    o.fileFormats.push_back({*format, value.substr(eq + 1)});
  }
}

// The options without a value; false when `a` is none of them.
bool applySwitch(const std::string& a, Options& o) {
  if (a == "--no-color") o.color = Options::Color::Never;
  else if (a == "--show-suppressed") o.showSuppressed = true;
  else if (a == "--list-rules") o.listRules = true;
  else if (a == "--rules-markdown") o.rulesMarkdown = true;
  else if (a == "--rules-table") o.rulesTable = true;
  else if (a == "--fail-on-empty") o.failOnEmpty = true;
  else if (a == "--fix") o.fix = true;
  else if (a == "--dry-run") o.dryRun = true;
  else if (a == "--fix-follow-symlinks") o.fixFollowSymlinks = true;
  else if (a == "--allow-remote") o.allowRemote = true;
  else if (a == "--cluster") o.cluster = true;  // lint/cluster_list.h
  else if (a == "--pending") o.pending = true;  // lint/cluster_pending.h
  else if (a == "-A" || a == "--all-namespaces") o.allNamespaces = true;
  else if (a == "--version") o.version = true;
  else if (a == "-h" || a == "--help") o.help = true;
  else return false;
  return true;
}

// What the report is and where it goes: --format, --output, --color,
// --fail-on, --jobs; false when args[i] is none of them.
bool applyReportOption(const std::vector<std::string>& args, std::size_t& i, Options& o, std::string& error) {
  const std::string& a = args[i];
  std::string value;
  if (is(a, "-f", "--format")) {
    takeValue(args, i, a.rfind("--format", 0) == 0 ? "--format" : "-f", value, error);
    if (error.empty()) addFormat(o, value, error);
  } else if (is(a, "-o", "--output")) {
    takeValue(args, i, a.rfind("--output", 0) == 0 ? "--output" : "-o", value, error);
    o.output = value;
  } else if (is(a, "-j", "--jobs")) {
    takeValue(args, i, a.rfind("--jobs", 0) == 0 ? "--jobs" : "-j", value, error);
    unsigned n = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (error.empty() && (ec != std::errc() || p != value.data() + value.size() || n == 0 || n > 256)) {
      error = "--jobs needs a number from 1 to 256, got \"" + value + "\"";
    }
    o.jobs = n;
  } else if (is(a, nullptr, "--color")) {
    takeValue(args, i, "--color", value, error);
    if (value == "auto") o.color = Options::Color::Auto;
    else if (value == "always") o.color = Options::Color::Always;
    else if (value == "never") o.color = Options::Color::Never;
    else if (error.empty()) error = "--color takes auto, always or never";
  } else if (is(a, nullptr, "--fail-on")) {
    takeValue(args, i, "--fail-on", value, error);
    if (value == "error") o.failOn = FailOn::Error;
    else if (value == "warning") o.failOn = FailOn::Warning;
    else if (value == "none") o.failOn = FailOn::None;
    else if (error.empty()) error = "--fail-on takes error, warning or none";
  } else {
    return false;
  }
  return true;
}

// The policy and the rules: --config, --platform, --enable, --disable,
// --explain; false when args[i] is none of them.
bool applyPolicyOption(const std::vector<std::string>& args, std::size_t& i, Options& o, std::string& error) {
  const std::string& a = args[i];
  std::string value;
  if (is(a, "-c", "--config")) {
    takeValue(args, i, a.rfind("--config", 0) == 0 ? "--config" : "-c", value, error);
    o.config = value;
  } else if (is(a, nullptr, "--platform")) {
    takeValue(args, i, "--platform", value, error);
    if (error.empty() && !findPlatformPreset(value)) {
      std::string known;
      for (const PlatformPreset& p : platformPresets()) known += (known.empty() ? "" : ", ") + std::string(p.name);
      error = "unknown platform \"" + value + "\" (known: " + known + ")";
    }
    o.platform = value;
  } else if (is(a, nullptr, "--enable")) {
    takeValue(args, i, "--enable", value, error);
    o.enable.push_back(value);
  } else if (is(a, nullptr, "--disable")) {
    takeValue(args, i, "--disable", value, error);
    o.disable.push_back(value);
  } else if (is(a, nullptr, "--explain")) {
    takeValue(args, i, "--explain", value, error);
    o.explain = value;
  } else {
    return false;
  }
  return true;
}

// What is read besides the paths: rendering (--render, --render-timeout,
// --helm-values, --kube-version) and the cluster's facts (--nodes, --pods, --facts,
// --kubeconfig, --context); false when args[i] is none of them.
bool applyInputOption(const std::vector<std::string>& args, std::size_t& i, Options& o, std::string& error) {
  const std::string& a = args[i];
  std::string value;
  if (is(a, nullptr, "--render")) {
    takeValue(args, i, "--render", value, error);
    if (value == "auto") o.render = Render::Auto;
    else if (value == "none") o.render = Render::None;
    else if (value == "kustomize") o.render = Render::Kustomize;
    else if (value == "kubectl") o.render = Render::Kubectl;
    else if (error.empty()) error = "--render takes auto, kustomize, kubectl or none";
  } else if (is(a, nullptr, "--helm-values")) {
    takeValue(args, i, "--helm-values", value, error);
    o.helmValues.push_back(value);
  } else if (is(a, nullptr, "--kube-version")) {
    takeValue(args, i, "--kube-version", value, error);
    if (error.empty() && value.empty()) error = "--kube-version needs a version such as 1.37.0";
    o.kubeVersion = value;
  } else if (is(a, nullptr, "--render-timeout")) {
    takeValue(args, i, "--render-timeout", value, error);
    const std::optional<int> ms = durationMs(value);
    if (ms) o.renderTimeoutMs = *ms;
    else if (error.empty()) error = "--render-timeout takes a duration such as 300s, 5m or 1500ms, got \"" + value + "\"";
  } else if (is(a, "-n", "--namespace")) {
    takeValue(args, i, a.rfind("--namespace", 0) == 0 ? "--namespace" : "-n", value, error);
    if (error.empty() && value.empty()) error = "--namespace needs a namespace name";
    o.namespaceName = value;
  } else if (is(a, nullptr, "--nodes") || is(a, nullptr, "--facts") || is(a, nullptr, "--pods") ||
             is(a, nullptr, "--kubeconfig") || is(a, nullptr, "--context")) {
    const std::string flag = a.substr(0, a.find('='));
    takeValue(args, i, flag, value, error);
    if (flag == "--nodes") o.nodes = value;  // lint/pending.h
    else if (flag == "--facts") o.facts = value;  // lint/facts_file.h
    else if (flag == "--pods") o.pods = value;
    else if (flag == "--kubeconfig") o.kubeconfig = value;
    else o.kubeContext = value;
  } else {
    return false;
  }
  return true;
}

// --pending's own rules: a live question, no files.
std::string pendingConflicts(const Options& o) {
  if (o.allNamespaces && !o.pending) return "--all-namespaces goes with --pending";
  if (!o.pending) return "";
  if (!o.cluster) return "--pending asks the live cluster: add --cluster (for files, use --nodes FILE)";
  if (!o.paths.empty()) return "--pending reads the Pending pods from the cluster, not from PATH (got " + o.paths.front() + ")";
  if (o.namespaceName && o.allNamespaces) return "give --namespace or --all-namespaces, not both";
  if (o.nodes || o.facts || o.fix) return "--pending goes with neither --nodes, --facts nor --fix";
  if (!o.fileFormats.empty()) return "--pending prints one report (--format text or json)";
  return "";
}

// What is wrong with the options together, or "".
std::string conflicts(const Options& o) {
  const bool informational = o.help || o.version || o.listRules || o.explain || o.rulesMarkdown || o.rulesTable;
  if (std::string pending = pendingConflicts(o); !pending.empty() || o.pending) return pending;
  if (!informational && o.paths.empty()) return "no PATH given (use - for stdin)";
  if (o.pods && !o.nodes) return "--pods only goes with --nodes";
  if ((o.kubeconfig || o.kubeContext) && !o.cluster) return "--kubeconfig and --context go with --cluster";
  if (o.cluster && o.facts) return "--cluster and --facts are two sources of the same facts: give one";
  if (o.dryRun && !o.fix) return "--dry-run only goes with --fix";
  if (o.fixFollowSymlinks && !o.fix) return "--fix-follow-symlinks only goes with --fix";
  if (o.output && !o.bareFormat && !o.fileFormats.empty()) {
    return "--output names the file of the bare --format; with only --format FORMAT=FILE it has none";
  }
  if (o.nodes && !o.fileFormats.empty()) return "--nodes prints one report (--format text or json)";
  return "";
}

}  // namespace

ParsedOptions parseOptions(const std::vector<std::string>& args) {
  ParsedOptions parsed;
  Options& o = parsed.options;
  std::string& error = parsed.error;
  bool onlyPaths = false;
  for (std::size_t i = 0; i < args.size() && error.empty(); ++i) {
    const std::string& a = args[i];
    if (onlyPaths || a == "-" || a.empty() || a[0] != '-') {
      o.paths.push_back(a);
    } else if (a == "--") {
      onlyPaths = true;
    } else if (!applySwitch(a, o) && !applyReportOption(args, i, o, error) && !applyPolicyOption(args, i, o, error) &&
               !applyInputOption(args, i, o, error)) {
      error = "unknown option " + a;
    }
  }
  if (error.empty()) error = conflicts(o);
  return parsed;
}

}  // namespace gpuguard::lint
