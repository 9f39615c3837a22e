#include "webhook/audit_metrics.h"

#include <map>
#include <set>
#include <tuple>

#include "webhook/metrics.h"
#include "webhook/metrics_text.h"

namespace gpuguard::webhook {

namespace {

std::string label(const char* name, const std::string& value) { return std::string(name) + "=\"" + escapeLabelValue(value) + "\""; }

// The findings by (rule, severity, namespace), the namespaces past the first
// `maxNamespaces` (by name) folded into "_other": a cluster of 10,000
// namespaces must not make 10,000 x rules series.
void renderFindings(std::string& out, const audit::AuditStatus& s, std::size_t maxNamespaces) {
  std::set<std::string> namespaces, kept;
  for (const auto& [key, count] : s.findings) namespaces.insert(std::get<2>(key));
  for (const std::string& ns : namespaces) {
    if (kept.size() >= maxNamespaces) break;
    kept.insert(ns);
  }
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> folded;
  for (const auto& [key, count] : s.findings) {
    const auto& [rule, severity, ns] = key;
    folded[{rule, severity, kept.count(ns) > 0 ? ns : "_other"}] += count;
  }
  header(out, "gpuguard_audit_findings", "gauge",
         "Current findings of the background audit, by rule, severity (error: enforce would deny) and namespace "
         "(\"\" for cluster-scoped objects).");
  for (const auto& [key, count] : folded) {
    const auto& [rule, severity, ns] = key;
    sample(out, "gpuguard_audit_findings", label("rule", rule) + "," + label("severity", severity) + "," + label("namespace", ns),
           count);
  }
}

void renderResources(std::string& out, const audit::AuditStatus& s) {
  header(out, "gpuguard_audit_objects", "gauge", "Objects the background audit holds a judgement of, by resource.");
  for (const audit::AuditResourceStatus& r : s.resources) sample(out, "gpuguard_audit_objects", label("resource", r.resource), r.objects);
  header(out, "gpuguard_audit_resource_synced", "gauge", "1 when the resource is listed and watched, by resource.");
  for (const audit::AuditResourceStatus& r : s.resources) {
    sample(out, "gpuguard_audit_resource_synced", label("resource", r.resource), r.synced ? 1 : 0);
  }
  header(out, "gpuguard_audit_objects_judged_total", "counter", "Judgements of the background audit, by resource and trigger.");
  for (const auto& [key, count] : s.judged) {
    sample(out, "gpuguard_audit_objects_judged_total", label("resource", key.first) + "," + label("trigger", key.second), count);
  }
}

void renderWork(std::string& out, const audit::AuditStatus& s) {
  header(out, "gpuguard_audit_last_full_scan_timestamp_seconds", "gauge",
         "End of the last complete scan (every resource listed), in seconds since the Unix epoch; 0: none yet.");
  out += "gpuguard_audit_last_full_scan_timestamp_seconds " + formatDouble(s.lastFullScanTimestamp) + "\n";
  header(out, "gpuguard_audit_last_full_scan_duration_seconds", "gauge", "Duration of the last complete scan.");
  out += "gpuguard_audit_last_full_scan_duration_seconds " + formatDouble(s.lastFullScanDuration) + "\n";
  header(out, "gpuguard_audit_queue_length", "gauge", "Objects waiting to be judged.");
  sample(out, "gpuguard_audit_queue_length", "", s.queueLength);
  header(out, "gpuguard_audit_queue_refetches_total", "counter",
         "Queued objects whose body was dropped over --audit-pending-bytes (fetched again to be judged).");
  sample(out, "gpuguard_audit_queue_refetches_total", "", s.refetches);
  header(out, "gpuguard_audit_judge_seconds_total", "counter", "CPU time the background audit spent judging.");
  out += "gpuguard_audit_judge_seconds_total " + formatDouble(s.judgeSeconds) + "\n";
  header(out, "gpuguard_audit_report_writes_total", "counter",
         "Report writes, by verb (apply, delete) and result (ok, conflict, error, fenced).");
  for (const auto& [key, count] : s.writes) {
    sample(out, "gpuguard_audit_report_writes_total", label("verb", key.first) + "," + label("result", key.second), count);
  }
  header(out, "gpuguard_audit_reports", "gauge", "Report documents the audit holds written.");
  sample(out, "gpuguard_audit_reports", "", s.reports);
  header(out, "gpuguard_audit_reports_api_served", "gauge", "1 when the report API (its CRDs) is served.");
  sample(out, "gpuguard_audit_reports_api_served", "", s.reportsApiServed ? 1 : 0);
  header(out, "gpuguard_audit_running", "gauge", "1 while this replica audits.");
  sample(out, "gpuguard_audit_running", "", s.running ? 1 : 0);
  header(out, "gpuguard_audit_leader", "gauge", "1 while this replica holds the audit's Lease (or audits without election).");
  sample(out, "gpuguard_audit_leader", "", s.leader ? 1 : 0);
  header(out, "gpuguard_audit_leader_transitions_total", "counter", "Times this replica became the audit's leader.");
  sample(out, "gpuguard_audit_leader_transitions_total", "", s.leaderTransitions);
}

}  // namespace

void renderAudit(std::string& out, const audit::AuditStatus& status, std::size_t maxNamespaces) {
  renderFindings(out, status, maxNamespaces);
  renderResources(out, status);
  renderWork(out, status);
}

}  // namespace gpuguard::webhook
