// gpuguard-lint: the offline front end of the GPU rule engine.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "lint/inputs.h"
#include "lint/lint_file.h"
#include "lint/options.h"
#include "lint/report.h"
#include "lint/rule_docs.h"
#include "rules/registry.h"
#include "yaml/policy_file.h"

namespace {

using namespace gpuguard;
using namespace gpuguard::lint;

constexpr int kExitClean = 0;
constexpr int kExitFindings = 1;
constexpr int kExitTrouble = 2;

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

// Lints the files on `jobs` threads; reports keep the input order.
std::vector<FileReport> lintAll(const std::vector<std::string>& files, const Policy& policy, unsigned jobs) {
  std::vector<FileReport> reports(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) reports[i] = lintPath(files[i], policy);
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(files.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return reports;
}

bool useColor(const Options& o, bool toFile) {
  if (o.color == Options::Color::Always) return true;
  if (o.color == Options::Color::Never || toFile || std::getenv("NO_COLOR")) return false;
  return isatty(STDOUT_FILENO);
}

int informational(const Options& o) {
  if (o.help) std::cout << kUsage;
  else if (o.version) std::cout << "gpuguard-lint " << GPUGUARD_VERSION << "\n";
  else if (o.listRules) writeRuleList(std::cout);
  else if (o.rulesMarkdown) writeRulesMarkdown(std::cout);
  else if (o.explain) {
    const Rule* rule = findRule(*o.explain);
    if (!rule) {
      std::cerr << "gpuguard-lint: unknown rule \"" << *o.explain << "\" (see --list-rules)\n";
      return kExitTrouble;
    }
    writeRuleExplanation(std::cout, *rule);
  }
  return kExitClean;
}

int run(const Options& o) {
  Policy policy;
  try {
    const std::optional<std::string> config = o.config ? o.config : findConfig();
    if (config) policy = yaml::loadPolicyFile(*config);
  } catch (const PolicyError& e) {
    std::cerr << "gpuguard-lint: " << e.what() << "\n";
    return kExitTrouble;
  }

  const ExpandedInputs inputs = expandInputs(o.paths, policy.include, policy.exclude);
  for (const std::string& missing : inputs.problems) {
    std::cerr << "gpuguard-lint: " << missing << ": no such file or directory\n";
  }
  const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<FileReport> reports = lintAll(inputs.files, policy, jobs);

  std::ofstream file;
  if (o.output) {
    file.open(*o.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "gpuguard-lint: cannot write " << *o.output << "\n";
      return kExitTrouble;
    }
  }
  std::ostream& out = o.output ? static_cast<std::ostream&>(file) : std::cout;
  const ReportOptions reportOptions{useColor(o, o.output.has_value()), o.showSuppressed};
  if (o.format == Format::Json) writeJson(out, reports, reportOptions);
  else writeText(out, reports, reportOptions);
  out.flush();
  if (!out) {
    std::cerr << "gpuguard-lint: failed to write the report\n";
    return kExitTrouble;
  }

  const RunSummary s = summarize(reports);
  if (s.inputErrors || !inputs.problems.empty()) return kExitTrouble;
  return s.errors ? kExitFindings : kExitClean;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const ParsedOptions parsed = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.error.empty()) {
    std::cerr << "gpuguard-lint: " << parsed.error << "\n\n" << kUsage;
    return kExitTrouble;
  }
  const Options& o = parsed.options;
  if (o.help || o.version || o.listRules || o.explain || o.rulesMarkdown) return informational(o);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "gpuguard-lint: internal error: " << e.what() << "\n";
    return kExitTrouble;
  }
}
