// The background audit's series on /metrics (docs/webhook.md, "Metrics"):
//
//   gpuguard_audit_findings{rule,severity,namespace}           gauge, current findings (namespace "" for
//                                                              cluster-scoped objects; past the cap "_other")
//   gpuguard_audit_objects{resource}                           gauge, objects audited
//   gpuguard_audit_objects_judged_total{resource,trigger}      counter (watch, resync, policy, facts)
//   gpuguard_audit_last_full_scan_timestamp_seconds            gauge, end of the last complete scan
//   gpuguard_audit_last_full_scan_duration_seconds             gauge
//   gpuguard_audit_resource_synced{resource}                   gauge 0/1
//   gpuguard_audit_queue_length                                gauge
//   gpuguard_audit_queue_refetches_total                       counter, bodies dropped over the budget
//   gpuguard_audit_judge_seconds_total                         counter, CPU time judging
//   gpuguard_audit_report_writes_total{verb,result}            counter
//   gpuguard_audit_reports                                     gauge, report documents held
//   gpuguard_audit_reports_api_served                          gauge 0/1
//   gpuguard_audit_running                                     gauge 0/1, this replica audits
//   gpuguard_audit_leader, gpuguard_audit_leader_transitions_total   gauge 0/1, counter: the Lease
#pragma once

#include <cstddef>
#include <string>

#include "audit/audit_status.h"

namespace gpuguard::webhook {

void renderAudit(std::string& out, const audit::AuditStatus& status, std::size_t maxNamespaces);

}  // namespace gpuguard::webhook
