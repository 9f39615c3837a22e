// gpuguard-lint's command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuguard::lint {

enum class Format { Text, Json, Sarif, Junit, Github };

struct Options {
  std::vector<std::string> paths;
  Format format = Format::Text;
  std::optional<std::string> output;   // --output FILE
  std::optional<std::string> config;   // --config FILE
  bool showSuppressed = false;
  enum class Color { Auto, Always, Never } color = Color::Auto;
  unsigned jobs = 0;                   // 0: all cores
  bool listRules = false;
  std::optional<std::string> explain;  // --explain RULE
  bool rulesMarkdown = false;
  bool rulesTable = false;             // --rules-table: the README's rules table
  bool fix = false;                    // --fix: rewrite what can be fixed safely, in place
  bool dryRun = false;                 // --dry-run (with --fix): print a unified diff instead
  bool version = false;
  bool help = false;
  // --nodes / --pods: "Why is my GPU pod Pending?" (lint/pending.h)
  std::optional<std::string> nodes;    // --nodes FILE: kubectl get nodes -o json
  std::optional<std::string> pods;     // --pods FILE: kubectl get pods -A -o json
};

struct ParsedOptions {
  Options options;
  std::string error;  // non-empty: bad usage
};

ParsedOptions parseOptions(const std::vector<std::string>& args);

extern const char* const kUsage;

}  // namespace gpuguard::lint
