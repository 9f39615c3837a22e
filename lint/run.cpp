#include "lint/run.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <set>
#include <thread>

#include "gpuguard_version.h"
#include "lint/cluster_list.h"
#include "lint/cluster_pending.h"
#include "lint/command.h"
#include "lint/exit_codes.h"
#include "lint/facts_file.h"
#include "lint/fix/fix.h"
#include "lint/fix/write.h"
#include "lint/lint_file.h"
#include "lint/pending.h"
#include "lint/render/helm.h"
#include "lint/report/output.h"
#include "lint/report/report.h"
#include "lint/rule_docs.h"
#include "lint/run_config.h"
#include "lint/units.h"
#include "rules/registry.h"

namespace gpuguard::lint {
namespace {

// What linting (and fixing) one unit produced.
struct Outcome {
  FileReport report;
  std::string diff;            // --fix --dry-run
  std::vector<FixNote> notes;  // --fix
  bool wrote = false;          // --fix: the file was rewritten
};

// One unit of work: a file (maybe a kustomize patch), a kustomization root
// to render, or a chart to render.
struct Job {
  enum class Kind { File, Kustomization, Chart } kind = Kind::File;
  std::string path;       // the file, or the chart's directory
  bool fragment = false;  // File: a kustomize patch
  std::size_t root = 0;   // Kustomization: its index in Plan::tree
};

// Writes a fixed file back (lint/fix/write.h). False when it could not be
// written: the input error is in `out`.
bool writeFixed(const std::string& path, const Options& o, const InputText& in, const FixResult& fixed, Outcome& out) {
  const WriteBackResult written = writeBack(path, in.text, fixed.text, {lintedTreeOf(path, o.paths), o.fixFollowSymlinks, nullptr});
  if (written.status != WriteBackResult::Status::Written) {
    for (FixNote& n : out.notes) {
      if (n.fixed) n.fixed = false, n.message = "not written (" + n.message + ")";
    }
  }
  if (written.status == WriteBackResult::Status::Failed) {
    out.report.file = displayName(path);
    out.report.errors.push_back({out.report.file, 0, 0, "cannot write the fixed file: " + written.message});
    return false;
  }
  if (written.status == WriteBackResult::Status::Refused) {
    out.notes.push_back({0, 0, "", false, "the file was not written: " + written.message});
    return true;
  }
  out.wrote = true;
  return true;
}

// SARIF carries each finding's fix as text (lint/fix/text_fix.h): worked
// out only when a SARIF report is written.
bool wantsFormat(const Options& o, Format format) {
  if (o.format == format) return true;
  return std::any_of(o.fileFormats.begin(), o.fileFormats.end(),
                     [format](const FormatTarget& t) { return t.format == format; });
}

// --fix on one file's text: the notes, the diff (--dry-run) or the file
// written back. Returns what the report judges: the fixed text (with what
// fixing parsed and judged of it), or the text as it was. False in `ok` when
// the file could not be written (the input error is in `out`).
FixResult fixFile(const std::string& path, const Options& o, const LintPolicy& policy, InputText& in, Outcome& out,
                  bool& ok) {
  FixResult fixed = fixText(in.text, policy);
  out.notes = std::move(fixed.notes);
  if (!fixed.changed) return fixed;  // its parse and findings are of in.text
  bool reportFixed = false;
  if (o.dryRun) {
    out.diff = unifiedDiff(in.text, fixed.text, path == "-" ? "stdin" : path);
    reportFixed = true;
  } else if (path == "-") {
    out.notes.push_back({0, 0, "", false, "standard input cannot be fixed in place; use --fix --dry-run for a patch"});
  } else {
    ok = writeFixed(path, o, in, fixed, out);
    reportFixed = ok && out.wrote;
  }
  if (!reportFixed) return FixResult{};  // the report judges the text as it was
  in.text = std::move(fixed.text);
  return fixed;
}

// One file: read, fixed (--fix), judged. With --fix the report takes what
// fixing parsed and judged, so the file is not parsed nor judged again.
Outcome processFile(const Job& job, const LintPolicy& policy, const Options& o) {
  Outcome out;
  const std::string& path = job.path;
  const std::string name = displayName(path);
  InputText in = readInput(path);
  if (!in.error.empty()) {
    out.report.file = name;
    out.report.errors.push_back({name, 0, 0, in.error});
    return out;
  }
  FixResult fixed;
  std::vector<InputError> writeErrors;
  if (o.fix && job.fragment) {
    out.notes.push_back({0, 0, "", false, "a kustomize patch is not fixed: fix the rendered object's source"});
  } else if (o.fix) {
    bool ok = true;
    fixed = fixFile(path, o, policy, in, out, ok);
    // The file was read and is judged as it is: its findings remain, and the
    // failed write is an input error beside them (exit 2).
    if (!ok) writeErrors = std::move(out.report.errors);
  }
  LintOptions options;
  options.fragment = job.fragment;
  options.textFixes = wantsFormat(o, Format::Sarif);
  options.objects = wantsFormat(o, Format::Junit);  // one testcase per object
  out.report = fixed.parsed ? lintParsed(name, in.text, std::move(*fixed.parsed), policy, options, &fixed.judged)
                            : lintText(name, in.text, policy, options);
  for (InputError& e : writeErrors) out.report.errors.push_back(std::move(e));
  return out;
}

struct RunInputs {
  const LintPolicy& policy;
  const Options& options;
  const Plan& plan;
  const Renderers& renderers;
};

// A root that did not render leaves the kustomizations judged through it
// unjudged: said beside its error, so that they are not taken for clean.
void noteUnjudgedBases(const Plan& plan, const std::string& rootDir, FileReport& report) {
  for (const Plan::JudgedThrough& base : plan.judgedThrough) {
    if (std::find(base.roots.begin(), base.roots.end(), rootDir) == base.roots.end()) continue;
    report.notes.push_back("kustomization " + printable(base.dir) + " is judged through " + printable(rootDir) +
                           ", which did not render (the error above): not judged there");
  }
}

Outcome processJob(const Job& job, const RunInputs& in) {
  Outcome out;
  switch (job.kind) {
    case Job::Kind::File: return processFile(job, in.policy, in.options);
    case Job::Kind::Kustomization: {
      const auto reportOnly = in.plan.reportOnly.find(job.root);
      out.report = lintKustomization(in.plan.tree[job.root], in.plan.tree, *in.renderers.kustomize, in.policy,
                                     in.renderers.settings,
                                     reportOnly == in.plan.reportOnly.end() ? std::vector<std::string>{}
                                                                            : reportOnly->second);
      if (!out.report.errors.empty()) noteUnjudgedBases(in.plan, in.plan.tree[job.root].dir, out.report);
      break;
    }
    case Job::Kind::Chart:
      out.report = lintChart(job.path, *in.renderers.helm, in.options.helmValues, in.policy, in.renderers.settings);
      if (in.options.fix) {
        out.report.notes.push_back("Helm chart " + job.path +
                                   " judged as rendered, not fixed (--fix rewrites YAML files; fix the chart's "
                                   "templates or values)");
      }
      break;
  }
  return out;
}

// A base that several roots include is judged through each: a finding that
// two renders place at the same line of the same file, about the same
// object, is one problem with one fix, reported once (the first root's).
void dropRepeatedFindings(const std::vector<Job>& jobs, std::vector<Outcome>& outcomes) {
  std::set<std::string> seen;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].kind != Job::Kind::Kustomization) continue;
    FileReport& report = outcomes[j].report;
    FindingStore kept;
    for (const Located& l : report.findings) {
      const std::string key = fileOf(report, l) + '\0' + std::to_string(l.line) + ':' + std::to_string(l.column) +
                              '\0' + l.finding.rule + '\0' + l.object.display() + '\0' + l.finding.fieldError();
      if (seen.insert(key).second) kept.push_back(l);
    }
    if (kept.size() != report.findings.size()) report.findings = std::move(kept);
  }
}

// Runs the jobs on `threads` threads; outcomes keep the job order.
std::vector<Outcome> processAll(const std::vector<Job>& jobs, const RunInputs& in, unsigned threads) {
  std::vector<Outcome> outcomes(jobs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) outcomes[i] = processJob(jobs[i], in);
  };
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return outcomes;
}

bool useColor(const Options& o, bool toFile, bool outIsTerminal) {
  if (o.color == Options::Color::Always) return true;
  if (o.color == Options::Color::Never || toFile || std::getenv("NO_COLOR")) return false;
  return outIsTerminal;
}

bool isInformational(const Options& o) {
  return o.help || o.version || o.listRules || o.explain || o.rulesMarkdown || o.rulesTable;
}

int informational(const Options& o, std::ostream& out, std::ostream& err) {
  if (o.help) out << kUsage;
  else if (o.version) out << "gpuguard-lint " << GPUGUARD_VERSION_LONG << "\n";
  else if (o.listRules && o.format == Format::Json) writeRuleListJson(out);
  else if (o.listRules) writeRuleList(out);
  else if (o.rulesMarkdown) writeRulesMarkdown(out);
  else if (o.rulesTable) writeRulesTable(out, "docs/rules.md");
  else if (o.explain) {
    const CatalogEntry* entry = findEntry(*o.explain);
    if (!entry) {
      err << "gpuguard-lint: unknown rule \"" << *o.explain << "\" (see --list-rules)\n";
      return kExitTrouble;
    }
    writeRuleExplanation(out, *entry);
  }
  return kExitClean;
}

// --fix: what was fixed and what was not, on stderr.
void reportFixes(const std::vector<Outcome>& outcomes, bool dryRun, std::ostream& err) {
  std::size_t fixed = 0, files = 0;
  for (const Outcome& out : outcomes) {
    std::size_t here = 0;
    for (const FixNote& n : out.notes) {
      err << printable(out.report.file) << ":";
      if (n.line > 0) err << n.line << ":" << n.column << ":";
      err << " " << (n.fixed ? (dryRun ? "would fix" : "fixed") : "not fixed") << ": " << printable(n.message);
      if (!n.rule.empty()) err << " [" << n.rule << "]";
      err << "\n";
      here += n.fixed;
    }
    if (here && (dryRun || out.wrote)) {
      fixed += here;
      ++files;
    }
  }
  err << "gpuguard-lint: " << (dryRun ? "would fix " : "fixed ") << fixed << (fixed == 1 ? " finding" : " findings")
            << " in " << files << (files == 1 ? " file" : " files") << "\n";
}

// --enable / --disable on top of the policy file.
bool applyRuleSwitches(const Options& o, Policy& policy, std::ostream& err) {
  for (const auto* list : {&o.enable, &o.disable}) {
    for (const std::string& id : *list) {
      const Rule* rule = findRule(id);
      if (!rule) {
        err << "gpuguard-lint: " << (list == &o.enable ? "--enable" : "--disable") << ": unknown rule \"" << id
                  << "\" (see --list-rules)\n";
        return false;
      }
      if (list == &o.enable) {
        policy.rules[id] = rule->doc().defaultSeverity == Severity::Error ? RuleSetting::Error : RuleSetting::Warning;
      } else {
        policy.rules[id] = RuleSetting::Off;
      }
    }
  }
  return true;
}

// Which renderers this run uses; nullopt (said on stderr) when --render
// names one that is not on PATH.
std::optional<Renderers> chooseRenderers(const Options& o, std::ostream& err) {
  Renderers r;
  r.settings.timeoutMs = o.renderTimeoutMs;
  r.settings.allowRemote = o.allowRemote;
  if (!o.kubeVersion.empty()) r.settings.kubeVersion = o.kubeVersion;
  if (o.namespaceName) r.settings.helmNamespace = *o.namespaceName;
  // A chart is rendered and judged with --fix too: its templates are not
  // YAML, so nothing in it is rewritten, and its findings remain to report.
  if (o.render != Render::None) r.helm = findOnPath("helm");
  if (o.fix || o.render == Render::None) return r;  // --fix rewrites the files as written
  const bool wantKustomize = o.render == Render::Auto || o.render == Render::Kustomize;
  const bool wantKubectl = o.render == Render::Auto || o.render == Render::Kubectl;
  if (wantKustomize && findOnPath("kustomize")) r.kustomize = RenderCommand{"kustomize", "build"};
  else if (wantKubectl && findOnPath("kubectl")) r.kustomize = RenderCommand{"kubectl", "kustomize"};
  if (!r.kustomize && o.render != Render::Auto) {
    err << "gpuguard-lint: --render " << (o.render == Render::Kustomize ? "kustomize" : "kubectl") << ": "
              << (o.render == Render::Kustomize ? "kustomize" : "kubectl") << " is not on PATH\n";
    return std::nullopt;
  }
  return r;
}

std::vector<Job> jobsOf(const Plan& plan) {
  std::vector<Job> jobs;
  for (const std::string& f : plan.files) {
    const bool patch = f != "-" && !plan.fragments.empty() &&
                       plan.fragments.count(std::filesystem::path(f).lexically_normal().generic_string()) > 0;
    jobs.push_back(Job{Job::Kind::File, f, patch, 0});
  }
  for (std::size_t root : plan.roots) jobs.push_back(Job{Job::Kind::Kustomization, "", false, root});
  for (const std::string& chart : plan.charts) jobs.push_back(Job{Job::Kind::Chart, chart, false, 0});
  return jobs;
}

std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < 5; ++i) out += (i ? ", " : "") + printable(items[i]);
  if (items.size() > 5) out += ", and " + std::to_string(items.size() - 5) + " more";
  return out;
}

// What the run could not judge, said once each on stderr.
void printNotes(const Plan& plan, const std::vector<FileReport>& reports, const Options& o, std::ostream& err) {
  if (!plan.skippedCharts.empty()) {
    err << "gpuguard-lint: note: Helm chart templates not linted ("
              << (o.render == Render::None ? "--render none" : "helm is not on PATH") << "): " << listed(plan.skippedCharts)
              << (o.render == Render::None ? "; " : "; install helm, or ")
              << "lint helm template's output (helm template DIR | gpuguard-lint -)\n";
  }
  for (const std::string& note : plan.notes) err << "gpuguard-lint: note: " << note << "\n";
  for (const Plan::JudgedThrough& base : plan.judgedThrough) {
    err << "gpuguard-lint: note: kustomization " << printable(base.dir) << " is included by " << listed(base.roots)
        << ": judged as " << (base.roots.size() == 1 ? "that renders" : "each renders") << " it, not on its own\n";
  }
  for (const FileReport& r : reports) {
    for (const std::string& note : r.notes) err << "gpuguard-lint: note: " << note << "\n";
  }
  std::size_t fragments = 0;
  std::vector<std::string> patchFiles;
  for (const FileReport& r : reports) {
    fragments += r.fragments;
    if (r.fragments > 0) patchFiles.push_back(r.file);
  }
  if (fragments > 0) {
    err << "gpuguard-lint: note: " << fragments << (fragments == 1 ? " document was" : " documents were")
        << " judged as kustomize patches (a kustomization lists " << (patchFiles.size() == 1 ? "the file" : "the files")
        << "): " << listed(patchFiles)
        << "; only for what they say (quantities, resource names), not for what only the whole object tells "
           "(tolerations, driver pins, GPU counts against nodes)";
    if (!plan.unrendered.empty())
      err << "; kustomizations not rendered" << (o.fix ? " with --fix" : o.render == Render::None ? " (--render none)" : " (no kustomize or kubectl on PATH)")
                << ": " << listed(plan.unrendered);
    err << "\n";
  }
}

// "no Kubernetes objects found in PATH": a wrong or empty directory must not
// pass silently. Said for each directory (or stdin) that held none; for
// files named one by one (pre-commit's lists hold values files and
// workflows), only when the whole run found none.
void printEmptyInputs(const Options& o, const std::vector<FileReport>& reports, const ExpandedInputs& inputs,
                      std::ostream& err) {
  namespace fs = std::filesystem;
  std::size_t total = 0, errors = 0;
  for (const FileReport& r : reports) total += r.documents, errors += r.errors.size();
  if (errors > 0) return;  // an input error already fails the run
  std::vector<std::string> emptyFiles;
  for (const std::string& arg : o.paths) {
    std::error_code ec;
    const bool directory = arg != "-" && fs::is_directory(arg, ec);
    if (!directory && arg != "-") {
      emptyFiles.push_back(arg);
      continue;
    }
    // "dir/" (shell completion) and "dir" alike: a rendered unit's report
    // names the directory without the slash.
    auto normal = [](const std::string& path) {
      std::string p = fs::path(path).lexically_normal().generic_string();
      while (p.size() > 1 && p.back() == '/') p.pop_back();
      return p;
    };
    const std::string prefix = normal(arg);
    auto inside = [&](const std::string& path) {
      if (arg == "-") return path == "<stdin>" || path == "-";
      const std::string p = normal(path);
      return prefix == "." || p == prefix || (p.starts_with(prefix) && (prefix == "/" || p[prefix.size()] == '/'));
    };
    std::size_t objects = 0;
    for (const FileReport& r : reports) {
      if (inside(r.file)) objects += r.documents;
    }
    if (objects > 0) continue;
    const bool anyFile = std::any_of(inputs.files.begin(), inputs.files.end(), inside);
    err << "gpuguard-lint: no Kubernetes objects found in " << printable(displayName(arg))
              << (anyFile ? "" : " (no *.yaml, *.yml or *.json file)") << "\n";
  }
  if (total == 0 && !emptyFiles.empty()) {
    err << "gpuguard-lint: no Kubernetes objects found in " << listed(emptyFiles) << "\n";
  }
}

// --fail-on-empty: no object judged anywhere in the run.
bool nothingLinted(const std::vector<FileReport>& reports) {
  return std::all_of(reports.begin(), reports.end(), [](const FileReport& r) { return r.documents == 0; });
}

void writeReport(std::ostream& out, Format format, const std::vector<FileReport>& reports, const ReportOptions& options) {
  switch (format) {
    case Format::Text: writeText(out, reports, options); break;
    case Format::Json: writeJson(out, reports, options); break;
    case Format::Sarif: writeSarif(out, reports, options); break;
    case Format::Junit: writeJunit(out, reports, options); break;
    case Format::Github: writeGithub(out, reports, options); break;
  }
}

int exitStatus(const RunSummary& s, FailOn failOn) {
  if (s.inputErrors) return kExitTrouble;
  switch (failOn) {
    case FailOn::Error: return s.errors ? kExitFindings : kExitClean;
    case FailOn::Warning: return s.errors || s.warnings ? kExitFindings : kExitClean;
    case FailOn::None: return kExitClean;
  }
  return kExitClean;
}

// Every report the command line asks for: the bare --format on stdout (or
// --output), each --format FORMAT=FILE in its file.
int writeReports(const Options& o, const std::vector<Outcome>& outcomes, const std::vector<FileReport>& reports,
                 const Policy& policy, int status, const RunStreams& streams) {
  ReportOptions reportOptions;
  reportOptions.showSuppressed = o.showSuppressed;
  reportOptions.toolVersion = GPUGUARD_VERSION;
  reportOptions.policy = &policy;
  for (const FormatTarget& target : o.fileFormats) {
    ReportOutput output(streams.out, streams.err);
    if (!output.open(target.path)) return kExitTrouble;
    writeReport(output.stream(), target.format, reports, reportOptions);
    status = output.finish(status, kExitTrouble);
  }
  if (!o.fileFormats.empty() && !o.bareFormat && !(o.fix && o.dryRun)) return status;
  ReportOutput output(streams.out, streams.err);
  if (!output.open(o.output)) return kExitTrouble;
  reportOptions.color = useColor(o, output.toFile(), streams.outIsTerminal);
  if (o.fix && o.dryRun) {
    for (const Outcome& oc : outcomes) output.stream() << oc.diff;
  } else {
    writeReport(output.stream(), o.format, reports, reportOptions);
  }
  return output.finish(status, kExitTrouble);
}

// -o FILE and --format F=FILE must not replace a manifest (or the policy,
// or a values file) with the report: refused before anything is linted.
bool reportTargetsAreNotInputs(const Options& o, const ExpandedInputs& inputs, std::ostream& err) {
  std::vector<std::string> read = inputs.files;
  read.insert(read.end(), o.helmValues.begin(), o.helmValues.end());
  if (o.config) read.push_back(*o.config);
  std::vector<std::string> targets;
  if (o.output) targets.push_back(*o.output);
  for (const FormatTarget& t : o.fileFormats) {
    if (t.path) targets.push_back(*t.path);
  }
  for (const std::string& target : targets) {
    if (const std::optional<std::string> input = inputAt(target, read)) {
      err << "gpuguard-lint: refusing to write the report to " << printable(target) << ": it is the input "
                << printable(*input)
                << " (same file); name another file\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int runLint(const Options& o, const RunStreams& streams) {
  std::ostream& err = streams.err;
  std::optional<RunConfig> config = loadRunConfig(o, err);
  if (!config || !applyRuleSwitches(o, config->policy.engine, err)) return kExitTrouble;
  if (o.pending) return runClusterPending(o, *config, streams);  // lint/cluster_pending.h: lists its own facts
  if (o.facts) {  // lint/facts_file.h
    config->policy.cluster = loadFactsFile(*o.facts, err);
    if (!config->policy.cluster) return kExitTrouble;
  }
  if (o.cluster) {  // lint/cluster_list.h: one list through the API
    config->policy.cluster = listClusterFactsFor(o, err);
    if (!config->policy.cluster) return kExitTrouble;
  }
  // --nodes: why is my GPU pod Pending? (lint/pending.h)
  if (o.nodes) return runPending(o, *config);

  const std::optional<Renderers> renderers = chooseRenderers(o, err);
  if (!renderers) return kExitTrouble;
  const ExpandedInputs inputs = selectInputs(o, *config, err);
  if (!reportTargetsAreNotInputs(o, inputs, err)) return kExitTrouble;
  const Plan plan = planUnits(inputs.files, *renderers);
  const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<Job> planned = jobsOf(plan);
  std::vector<Outcome> outcomes = processAll(planned, RunInputs{config->policy, o, plan, *renderers}, jobs);
  dropRepeatedFindings(planned, outcomes);

  std::vector<FileReport> reports;
  reports.reserve(inputs.problems.size() + outcomes.size());
  for (const std::string& missing : inputs.problems) {
    FileReport r;
    r.file = missing;
    r.errors.push_back({missing, 0, 0, "no such file or directory"});
    reports.push_back(std::move(r));
  }
  if (o.fix) reportFixes(outcomes, o.dryRun, err);
  // Moved, not copied: a report of a large input holds many findings.
  for (Outcome& out : outcomes) reports.push_back(std::move(out.report));
  printNotes(plan, reports, o, err);
  printEmptyInputs(o, reports, inputs, err);
  int status = exitStatus(summarize(reports), o.failOn);
  if (o.failOnEmpty && nothingLinted(reports)) {
    err << "gpuguard-lint: nothing linted (--fail-on-empty): no Kubernetes object in " << listed(o.paths) << "\n";
    status = kExitTrouble;
  }
  return writeReports(o, outcomes, reports, config->policy.engine, status, streams);
}

int lintCommand(const std::vector<std::string>& args, const RunStreams& streams) {
  try {
    const ParsedOptions parsed = parseOptions(args);
    if (!parsed.error.empty()) {
      streams.err << "gpuguard-lint: " << parsed.error << "\n\n" << kUsage;
      return kExitTrouble;
    }
    const Options& o = parsed.options;
    if (isInformational(o)) return informational(o, streams.out, streams.err);
    return runLint(o, streams);
  } catch (const std::exception& e) {
    streams.err << "gpuguard-lint: internal error: " << e.what() << "\n";
    return kExitTrouble;
  }
}

}  // namespace gpuguard::lint
