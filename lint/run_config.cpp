#include "lint/run_config.h"

#include <filesystem>
#include <ostream>

#include "yaml/policy_file.h"

namespace gpuguard::lint {
namespace {

// .gpuguard.yaml in the working directory or the nearest parent.
std::optional<std::string> findConfig() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::current_path(ec);
  if (ec) return std::nullopt;
  while (true) {
    for (const char* name : {".gpuguard.yaml", ".gpuguard.yml"}) {
      const auto candidate = dir / name;
      if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
    dir = dir.parent_path();
  }
}

}  // namespace

std::optional<RunConfig> loadRunConfig(const Options& o, std::ostream& err) {
  RunConfig config;
  try {
    const std::optional<std::string> file = o.config ? o.config : findConfig();
    const std::string_view platform = o.platform ? std::string_view(*o.platform) : std::string_view();
    if (!file && o.platform) config.policy.engine = Policy::fromJson(nullptr, "--platform", platform);
    if (file) {
      config.policy = LintPolicy::from(yaml::loadPolicyFile(*file, platform));
      config.configDir = std::filesystem::path(*file).parent_path().string();
      if (config.configDir.empty()) config.configDir = ".";
    }
  } catch (const PolicyError& e) {
    err << "gpuguard-lint: " << e.what() << "\n";
    return std::nullopt;
  }
  return config;
}

ExpandedInputs selectInputs(const Options& o, const RunConfig& config, std::ostream& err) {
  ExpandedInputs inputs = expandInputs(o.paths, config.policy.include, config.policy.exclude, config.configDir);
  for (const std::string& missing : inputs.problems) {
    err << "gpuguard-lint: " << missing << ": no such file or directory\n";
  }
  return inputs;
}

}  // namespace gpuguard::lint
