// What the background audit reports about itself, for the webhook's
// /metrics (docs/webhook.md, "Metrics"); plain data, like cluster/facts_status.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gpuguard::audit {

struct AuditResourceStatus {
  std::string resource;  // "deployments.apps"
  std::string state;     // cluster::resourceStateName: "synced", "not served", "refused"...
  bool synced = false;   // listed, watch open
  std::size_t objects = 0;
};

struct AuditStatus {
  bool running = false;           // this replica audits (the Lease holder, or no election)
  bool reportsApiServed = false;  // the report API answered the inventory
  std::vector<AuditResourceStatus> resources;
  // (rule, severity "error"|"warning", namespace "" for cluster-scoped) -> current findings
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> findings;
  // (resource, trigger) -> judgements
  std::map<std::pair<std::string, std::string>, std::uint64_t> judged;
  // (verb "apply"|"delete", result "ok"|"conflict"|"error"|"fenced") -> writes
  std::map<std::pair<std::string, std::string>, std::uint64_t> writes;
  double lastFullScanTimestamp = 0;  // Unix seconds at the end of the last complete scan; 0: none yet
  double lastFullScanDuration = 0;   // seconds
  std::size_t queueLength = 0;
  std::uint64_t refetches = 0;
  double judgeSeconds = 0;           // CPU time judging (the thread's), in total
  std::size_t reports = 0;           // report documents held
  // The Lease (set by the webhook, which runs the election).
  bool leader = false;               // this replica holds it (or audits without election)
  std::uint64_t leaderTransitions = 0;  // times this replica became the leader
};

}  // namespace gpuguard::audit
