#include "audit/report_writer.h"

namespace gpuguard::audit {

namespace {

using nlohmann::json;

std::string stringAt(const json& object, std::initializer_list<const char*> path) {
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return {};
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

AuditedResource reportResourceOf(ReportFormat format, bool clusterScoped) {
  const ReportApi& api = reportApi(format);
  return AuditedResource{std::string(api.group), {std::string(api.version)},
                         std::string(clusterScoped ? api.clusterPlural : api.plural),
                         std::string(clusterScoped ? api.clusterKind : api.kind), !clusterScoped};
}

ReportFormat otherFormat(ReportFormat format) {
  return format == ReportFormat::OpenReports ? ReportFormat::WgPolicy : ReportFormat::OpenReports;
}

}  // namespace

ReportWriter::ReportWriter(AuditApi& api, TokenBucket& apiCalls, const std::atomic<bool>& cancel, WriterOptions options)
    : api_(api), apiCalls_(apiCalls), cancel_(cancel), options_(std::move(options)) {}

AuditedResource ReportWriter::reportResource(bool clusterScoped) const {
  return reportResourceOf(options_.format, clusterScoped);
}

void ReportWriter::count(const char* verb, const char* result) {
  std::lock_guard lock(mutex_);
  ++writes_[{verb, result}];
}

bool ReportWriter::fenced(const char* verb) {
  if (!options_.mayWrite || options_.mayWrite()) return false;
  count(verb, "fenced");
  return true;
}

ReportWriter::Listed ReportWriter::listReports(bool clusterScoped, std::vector<AuditResult>& results) {
  const std::string selector = std::string(kManagedByLabel) + "=" + std::string(kManagedByValue);
  std::map<std::string, Written> found;
  const cluster::ListResult listed = api_.list(
      reportResource(clusterScoped), selector,
      [&](json&& report) {
        const std::string ns = clusterScoped ? "" : stringAt(report, {"metadata", "namespace"});
        const std::string digest = stringAt(report, {"metadata", "annotations", std::string(kDigestAnnotation).c_str()});
        Written& w = found[ns];
        if (w.names.empty()) w.digest = digest;
        if (w.digest != digest) w.digest.clear();  // shards of two writes: rewrite
        w.names.insert(stringAt(report, {"metadata", "name"}));
        for (AuditResult& r : resultsFromReport(report)) results.push_back(std::move(r));
      },
      &cancel_);
  if (!listed.error.empty()) {
    if (options_.log && listed.status != 404) {
      options_.log(true, "audit: cannot list our " + reportResource(clusterScoped).name() + ": " + listed.error);
    }
    if (listed.status == 404) return Listed::NotServed;
    return listed.status == 401 || listed.status == 403 ? Listed::Refused : Listed::Failed;
  }
  std::lock_guard lock(mutex_);
  for (auto& [ns, w] : found) written_[ns] = std::move(w);
  return Listed::Yes;
}

void ReportWriter::listOtherFormat(bool clusterScoped) {
  const AuditedResource resource = reportResourceOf(otherFormat(options_.format), clusterScoped);
  const std::string selector = std::string(kManagedByLabel) + "=" + std::string(kManagedByValue);
  std::vector<std::tuple<bool, std::string, std::string>> found;
  api_.list(
      resource, selector,
      [&](json&& report) {
        found.emplace_back(clusterScoped, stringAt(report, {"metadata", "namespace"}), stringAt(report, {"metadata", "name"}));
      },
      &cancel_);  // not served (404) or refused: nothing of ours to find there
  std::lock_guard lock(mutex_);
  for (auto& f : found) otherFormat_.push_back(std::move(f));
}

ReportWriter::Inventory ReportWriter::inventory() {
  Inventory out;
  {
    std::lock_guard lock(mutex_);
    written_.clear();
    otherFormat_.clear();
  }
  const Listed namespaced = listReports(false, out.results);
  const Listed clusterScoped = listReports(true, out.results);
  out.served = namespaced == Listed::Yes && clusterScoped == Listed::Yes;
  out.failed = namespaced == Listed::Failed || clusterScoped == Listed::Failed;
  out.refused = namespaced == Listed::Refused || clusterScoped == Listed::Refused;
  listOtherFormat(false);
  listOtherFormat(true);
  return out;
}

bool ReportWriter::removeOtherFormat() {
  std::vector<std::tuple<bool, std::string, std::string>> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(otherFormat_);
  }
  std::vector<std::tuple<bool, std::string, std::string>> left;
  for (auto& [clusterScoped, ns, name] : pending) {
    const AuditedResource resource = reportResourceOf(otherFormat(options_.format), clusterScoped);
    bool gone = false;
    if (!fenced("delete") && apiCalls_.take(cancel_)) {
      const ApiAnswer a = api_.remove(resource, ns, name);
      gone = a.ok() || a.status == 404;
      count("delete", gone ? "ok" : a.status == 409 ? "conflict" : "error");
    }
    if (!gone) left.emplace_back(clusterScoped, ns, name);
  }
  std::lock_guard lock(mutex_);
  for (auto& l : left) otherFormat_.push_back(std::move(l));
  return otherFormat_.empty();
}

bool ReportWriter::applyOne(const json& report, bool clusterScoped) {
  if (fenced("apply") || !apiCalls_.take(cancel_)) return false;
  const ApiAnswer a = api_.apply(reportResource(clusterScoped), report);
  count("apply", a.ok() ? "ok" : a.status == 409 ? "conflict" : "error");
  if (!a.ok() && options_.log) {
    options_.log(true, "audit: cannot write " + reportResource(clusterScoped).name() + " " +
                           stringAt(report, {"metadata", "namespace"}) + "/" + stringAt(report, {"metadata", "name"}) +
                           ": " + a.error);
  }
  return a.ok();
}

bool ReportWriter::removeOne(const std::string& ns, const std::string& name, bool clusterScoped) {
  if (fenced("delete") || !apiCalls_.take(cancel_)) return false;
  const ApiAnswer a = api_.remove(reportResource(clusterScoped), ns, name);
  const bool gone = a.ok() || a.status == 404;
  count("delete", gone ? "ok" : a.status == 409 ? "conflict" : "error");
  if (!gone && options_.log) {
    options_.log(true, "audit: cannot delete " + reportResource(clusterScoped).name() + " " + ns + "/" + name + ": " + a.error);
  }
  return gone;
}

bool ReportWriter::write(const NamespaceResults& set) {
  const bool clusterScoped = set.ns.empty();
  const std::string digest = set.results.empty() ? "" : resultsDigest(set.results, set.dropped);
  Written before;
  {
    std::lock_guard lock(mutex_);
    const auto it = written_.find(set.ns);
    if (it == written_.end() && set.results.empty()) return true;  // nothing written, nothing to write
    if (it != written_.end()) before = it->second;
  }
  if (!set.results.empty() && !before.digest.empty() && before.digest == digest) return true;
  Written after{digest, {}};
  bool ok = true;
  for (const json& report : buildReports(set, options_.format, options_.bounds)) {
    after.names.insert(stringAt(report, {"metadata", "name"}));
    ok = applyOne(report, clusterScoped) && ok;
  }
  for (const std::string& name : before.names) {
    if (after.names.count(name) == 0) ok = removeOne(set.ns, name, clusterScoped) && ok;
  }
  std::lock_guard lock(mutex_);
  if (!ok) {
    after.digest.clear();  // partly written: rewrite next time
    for (const std::string& name : before.names) after.names.insert(name);
  }
  if (after.names.empty()) {
    written_.erase(set.ns);
  } else {
    written_[set.ns] = std::move(after);
  }
  return ok;
}

std::size_t ReportWriter::reportsHeld() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [ns, w] : written_) n += w.names.size();
  return n;
}

std::map<std::pair<std::string, std::string>, std::uint64_t> ReportWriter::writes() const {
  std::lock_guard lock(mutex_);
  return writes_;
}

void ReportWriter::clear() {
  std::lock_guard lock(mutex_);
  written_.clear();
}

}  // namespace gpuguard::audit
