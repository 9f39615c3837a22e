#include "lint/options.h"

#include <charconv>

namespace gpuguard::lint {

const char* const kUsage = R"(Usage: gpuguard-lint [options] PATH...

Checks Kubernetes manifests for GPU mistakes before they reach a cluster.
PATH is a file, a directory (searched for *.yaml, *.yml, *.json) or - for stdin.

Options:
  -f, --format FORMAT    text (default), json, sarif (SARIF 2.1.0), junit (JUnit XML)
                         or github (GitHub Actions workflow commands)
  -o, --output FILE      write the report (or the --dry-run diff) to FILE instead of stdout
      --fix              fix what can be fixed safely, in place (requests-only -> limits,
                         the missing GPU toleration), keeping comments and formatting;
                         then report what remains
      --dry-run          with --fix: print the fixes as a unified diff, change nothing
  -c, --config FILE      policy file (default: .gpuguard.yaml in this or a parent directory)
      --show-suppressed  also list findings silenced by ignore.gpuguard.io/<rule> annotations
      --color WHEN       auto (default), always or never; NO_COLOR is honoured
  -j, --jobs N           lint N files at a time (default: all cores)
      --list-rules       list the rules and exit
      --explain RULE     print a rule's documentation with examples and exit
      --rules-markdown   print docs/rules.md and exit
      --rules-table      print the README's rules table and exit
      --version          print the version and exit
  -h, --help             print this help and exit

Why is my GPU pod Pending? (docs/pending.md)
      --nodes FILE       judge every GPU pod and pod template in PATH against the nodes
                         in FILE (kubectl get nodes -o json): a table per pod, or
                         --format json; exit 1 if one fits on no node
      --pods FILE        with --nodes: the pods holding resources (kubectl get pods -A -o json)

Exit status: 0 no errors, 1 at least one error finding, 2 unreadable input or bad usage.
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

}  // namespace

ParsedOptions parseOptions(const std::vector<std::string>& args) {
  ParsedOptions parsed;
  Options& o = parsed.options;
  std::string& error = parsed.error;
  bool onlyPaths = false;
  for (std::size_t i = 0; i < args.size() && error.empty(); ++i) {
    const std::string& a = args[i];
    std::string value;
    if (onlyPaths || a == "-" || a.empty() || a[0] != '-') {
      o.paths.push_back(a);
    } else if (a == "--") {
      onlyPaths = true;
    } else if (is(a, "-f", "--format")) {
      takeValue(args, i, a.rfind("--format", 0) == 0 ? "--format" : "-f", value, error);
      if (value == "text") o.format = Format::Text;
      else if (value == "json") o.format = Format::Json;
      else if (value == "sarif") o.format = Format::Sarif;
      else if (value == "junit") o.format = Format::Junit;
      else if (value == "github") o.format = Format::Github;
      else if (error.empty()) error = "unknown format \"" + value + "\" (text, json, sarif, junit, github)";
    } else if (is(a, "-o", "--output")) {
      takeValue(args, i, a.rfind("--output", 0) == 0 ? "--output" : "-o", value, error);
      o.output = value;
    } else if (is(a, "-c", "--config")) {
      takeValue(args, i, a.rfind("--config", 0) == 0 ? "--config" : "-c", value, error);
      o.config = value;
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
    } else if (a == "--no-color") {
      o.color = Options::Color::Never;
    } else if (a == "--show-suppressed") {
      o.showSuppressed = true;
    } else if (a == "--list-rules") {
      o.listRules = true;
    } else if (is(a, nullptr, "--explain")) {
      takeValue(args, i, "--explain", value, error);
      o.explain = value;
    } else if (a == "--rules-markdown") {
      o.rulesMarkdown = true;
    } else if (a == "--rules-table") {
      o.rulesTable = true;
    } else if (a == "--fix") {
      o.fix = true;
    } else if (a == "--dry-run") {
      o.dryRun = true;
    } else if (is(a, nullptr, "--nodes")) {  // lint/pending.h
      takeValue(args, i, "--nodes", value, error);
      o.nodes = value;
    } else if (is(a, nullptr, "--pods")) {
      takeValue(args, i, "--pods", value, error);
      o.pods = value;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else {
      error = "unknown option " + a;
    }
  }
  const bool informational = o.help || o.version || o.listRules || o.explain || o.rulesMarkdown || o.rulesTable;
  if (error.empty() && !informational && o.paths.empty()) error = "no PATH given (use - for stdin)";
  if (error.empty() && o.pods && !o.nodes) error = "--pods only goes with --nodes";
  if (error.empty() && o.dryRun && !o.fix) error = "--dry-run only goes with --fix";
  return parsed;
}

}  // namespace gpuguard::lint
