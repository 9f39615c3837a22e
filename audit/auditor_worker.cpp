// The auditor's worker: judges what the reflectors queued and writes the
// reports of the namespaces whose results changed.
#include <ctime>

#include "audit/auditor.h"

namespace gpuguard::audit {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::uint64_t threadCpuNanos() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

Timestamp systemNow() {
  const auto since = std::chrono::system_clock::now().time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since);
  return Timestamp{seconds.count(),
                   static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since - seconds).count())};
}

}  // namespace

void Auditor::workerLoop() {
  auto lastFlush = Clock::now();
  while (!stopping_.load()) {
    std::optional<std::pair<std::string, WorkItem>> next = queue_.get(options_.flushInterval);
    if (next) {
      process(next->first, std::move(next->second));
      queue_.done(next->first);
    }
    // First full scan: its end (the loop comes here with nothing queued) or the long interval.
    const bool firstScan = completedScans_.load() == 0;
    const auto interval = firstScan ? options_.firstScanFlushInterval : options_.flushInterval;
    if ((!next && !firstScan) || Clock::now() - lastFlush >= interval) {
      working_.store(true);  // before the dirty set is taken: idle() never sees neither
      flush();
      working_.store(false);
      lastFlush = Clock::now();
    }
  }
}

void Auditor::process(const std::string& uid, WorkItem item) {
  if (item.trigger == Trigger::Delete) {
    index_.forget(uid);
    return;
  }
  std::optional<json> body = std::move(item.body);
  if (!body) body = refetch(uid, item);
  if (body) judgeAndRecord(uid, *body, item);
}

std::optional<json> Auditor::refetch(const std::string& uid, const WorkItem& item) {
  const AuditedResource& resource = options_.resources.at(item.resource);
  if (!apiBucket_.take(stopping_)) return std::nullopt;
  ApiAnswer a = api_.get(resource, answeredVersion(item.resource), item.ns, item.name);
  if (a.status == 404) {
    index_.forget(uid);  // gone since it was queued
    return std::nullopt;
  }
  if (!a.ok() || !a.body.is_object() || auditedObject(a.body).uid != uid) return std::nullopt;  // next resync
  if (!a.body.contains("kind")) a.body["kind"] = resource.kind;
  return std::move(a.body);
}

void Auditor::judgeAndRecord(const std::string& uid, const json& object, const WorkItem& item) {
  if (!judgeBucket_.take(stopping_)) return;
  const std::shared_ptr<const FactsState> facts = facts_.load();
  const Generations with{policyGeneration(), facts->generation};
  const std::uint64_t cpuStart = threadCpuNanos();
  Judgement judgement;
  try {
    judgement = judge_(object, facts->facts.get());
  } catch (const std::exception& e) {
    if (options_.log) options_.log(true, "audit: cannot judge " + auditedObject(object).name + ": " + e.what());
    return;
  }
  judgeNanos_.fetch_add(threadCpuNanos() - cpuStart);
  ObjectRecord record;
  record.resource = item.resource;
  record.ref = auditedObject(object);
  record.resourceVersion = cluster::resourceVersionOf(object);
  record.judgeKey = item.judgeKey.empty() ? judgeKeyOf(object) : item.judgeKey;
  record.judgedWith = with;
  record.factsSensitive = judgement.factsSensitive;
  record.judged = true;
  if (!judgement.exempt) {
    ObjectResults results = resultsOf(record.ref, judgement.findings, facts->facts != nullptr,
                                      options_.now ? options_.now() : systemNow(), index_.resultsOf(uid),
                                      options_.bounds.maxResultsPerObject);
    record.results = std::move(results.results);
    record.dropped = results.dropped;
  }
  index_.record(uid, std::move(record));
  std::lock_guard lock(mutex_);
  ++judged_[{options_.resources.at(item.resource).name(), std::string(triggerName(item.trigger))}];
}

void Auditor::flush() {
  {
    std::lock_guard lock(mutex_);
    if (!inventoryTaken_ || !reportsServed_) return;  // nowhere to write: the namespaces stay dirty
  }
  for (const std::string& ns : index_.takeDirty()) {
    if (stopping_.load()) {
      index_.markDirty(ns);
      continue;
    }
    if (!writer_.write(index_.namespaceResults(ns))) index_.markDirty(ns);  // written again at the next flush
  }
  // A format switch: our reports in the other API go once a complete scan wrote the new ones.
  if (otherFormatLeft_ && completedScans_.load() > 0 && !stopping_.load()) otherFormatLeft_ = !writer_.removeOtherFormat();
}

}  // namespace gpuguard::audit
