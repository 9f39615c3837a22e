// gpuguard-lint: the offline front end of the GPU rule engine.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "gpuguard_version.h"
#include "lint/exit_codes.h"
#include "lint/fix.h"
#include "lint/inputs.h"
#include "lint/lint_file.h"
#include "lint/options.h"
#include "lint/pending.h"
#include "lint/report.h"
#include "lint/report_output.h"
#include "lint/rule_docs.h"
#include "rules/registry.h"
#include "yaml/policy_file.h"

namespace {

using namespace gpuguard;
using namespace gpuguard::lint;

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

// What linting (and fixing) one input produced.
struct Outcome {
  FileReport report;
  std::string diff;            // --fix --dry-run
  std::vector<FixNote> notes;  // --fix
  bool wrote = false;          // --fix: the file was rewritten
};

Outcome processOne(const std::string& path, const Policy& policy, const Options& o) {
  Outcome out;
  const std::string name = displayName(path);
  InputText in = readInput(path);
  if (!in.error.empty()) {
    out.report.file = name;
    out.report.errors.push_back({name, 0, 0, in.error});
    return out;
  }
  if (o.fix) {
    FixResult fixed = fixText(in.text, policy);
    out.notes = std::move(fixed.notes);
    if (fixed.changed) {
      if (o.dryRun) {
        out.diff = unifiedDiff(in.text, fixed.text, path == "-" ? "stdin" : path);
        in.text = std::move(fixed.text);
      } else if (path == "-") {
        out.notes.push_back({0, 0, "", false, "standard input cannot be fixed in place; use --fix --dry-run for a patch"});
      } else {
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file << fixed.text;
        file.close();
        if (!file) {
          out.report.file = name;
          out.report.errors.push_back({name, 0, 0, "cannot write the fixed file"});
          return out;
        }
        out.wrote = true;
        in.text = std::move(fixed.text);
      }
    }
  }
  out.report = lintText(name, in.text, policy);
  return out;
}

// Lints the files on `jobs` threads; outcomes keep the input order.
std::vector<Outcome> processAll(const std::vector<std::string>& files, const Policy& policy, const Options& o,
                                unsigned jobs) {
  std::vector<Outcome> outcomes(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) outcomes[i] = processOne(files[i], policy, o);
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(files.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return outcomes;
}

// stdout is a pipe whose reading end was closed.
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
  else if (o.rulesTable) writeRulesTable(std::cout, "docs/rules.md");
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

// --fix: what was fixed and what was not, on stderr.
void reportFixes(const std::vector<Outcome>& outcomes, bool dryRun) {
  std::size_t fixed = 0, files = 0;
  for (const Outcome& out : outcomes) {
    std::size_t here = 0;
    for (const FixNote& n : out.notes) {
      std::cerr << out.report.file << ":";
      if (n.line > 0) std::cerr << n.line << ":" << n.column << ":";
      std::cerr << " " << (n.fixed ? (dryRun ? "would fix" : "fixed") : "not fixed") << ": " << n.message;
      if (!n.rule.empty()) std::cerr << " [" << n.rule << "]";
      std::cerr << "\n";
      here += n.fixed;
    }
    if (here && (dryRun || out.wrote)) {
      fixed += here;
      ++files;
    }
  }
  std::cerr << "gpuguard-lint: " << (dryRun ? "would fix " : "fixed ") << fixed << (fixed == 1 ? " finding" : " findings")
            << " in " << files << (files == 1 ? " file" : " files") << "\n";
}

int run(const Options& o) {
  Policy policy;
  std::string configDir;
  try {
    const std::optional<std::string> config = o.config ? o.config : findConfig();
    if (config) {
      policy = yaml::loadPolicyFile(*config);
      configDir = std::filesystem::path(*config).parent_path().string();
      if (configDir.empty()) configDir = ".";
    }
  } catch (const PolicyError& e) {
    std::cerr << "gpuguard-lint: " << e.what() << "\n";
    return kExitTrouble;
  }
  // --nodes: why is my GPU pod Pending? (lint/pending.h)
  if (o.nodes) return runPending(o, policy);

  const ExpandedInputs inputs = expandInputs(o.paths, policy.include, policy.exclude, configDir);
  const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Outcome> outcomes = processAll(inputs.files, policy, o, jobs);
  std::vector<FileReport> reports;
  reports.reserve(inputs.problems.size() + outcomes.size());
  for (const std::string& missing : inputs.problems) {
    std::cerr << "gpuguard-lint: " << missing << ": no such file or directory\n";
    FileReport r;
    r.file = missing;
    r.errors.push_back({missing, 0, 0, "no such file or directory"});
    reports.push_back(std::move(r));
  }
  for (Outcome& out : outcomes) reports.push_back(out.report);
  if (o.fix) reportFixes(outcomes, o.dryRun);

  ReportOutput output;
  if (!output.open(o.output)) return kExitTrouble;
  std::ostream& out = output.stream();
  ReportOptions reportOptions;
  reportOptions.color = useColor(o, output.toFile());
  reportOptions.showSuppressed = o.showSuppressed;
  reportOptions.toolVersion = GPUGUARD_VERSION;
  reportOptions.policy = &policy;
  if (o.fix && o.dryRun) {
    for (const Outcome& oc : outcomes) out << oc.diff;
  } else {
    switch (o.format) {
      case Format::Text: writeText(out, reports, reportOptions); break;
      case Format::Json: writeJson(out, reports, reportOptions); break;
      case Format::Sarif: writeSarif(out, reports, reportOptions); break;
      case Format::Junit: writeJunit(out, reports, reportOptions); break;
      case Format::Github: writeGithub(out, reports, reportOptions); break;
    }
  }
  const RunSummary s = summarize(reports);
  return output.finish(s.inputErrors ? kExitTrouble : s.errors ? kExitFindings : kExitClean, kExitTrouble);
}

}  // namespace

int main(int argc, char** argv) {
  // A closed output pipe is EPIPE on write, handled in run(), not a signal
  // that kills the process mid-report.
  std::signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  const ParsedOptions parsed = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.error.empty()) {
    std::cerr << "gpuguard-lint: " << parsed.error << "\n\n" << kUsage;
    return kExitTrouble;
  }
  const Options& o = parsed.options;
  if (o.help || o.version || o.listRules || o.explain || o.rulesMarkdown || o.rulesTable) return informational(o);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "gpuguard-lint: internal error: " << e.what() << "\n";
    return kExitTrouble;
  }
}
