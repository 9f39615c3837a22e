// The background audit's reports, as pure data (no I/O, no clock): the
// findings of audited objects in, the documents to write out.
//
// One report per namespace with findings, named `gpuguard` (split into
// `gpuguard-2`, `gpuguard-3`... when one would pass 200 results or ~1 MiB:
// etcd refuses requests over 1.5 MiB), and one cluster-scoped report
// `gpuguard` for the cluster-scoped objects (ClusterWorkflowTemplates,
// NodePools). Two APIs (docs/audit.md):
//   openreports.io/v1alpha1   Report / ClusterReport (Kyverno 1.15+, Policy Reporter)
//   wgpolicyk8s.io/v1alpha2   PolicyReport / ClusterPolicyReport (the older API:
//                             no top-level source, no configuration)
// One result per finding: source gpuguard, policy = the rule id, result
// fail (an error finding: enforce would deny) or warn, severity high or
// medium, the API server's field error as the message, the object in
// `resources`, the field path in `properties`, and the time it was first
// seen (carried over, so an unchanged object rewrites nothing).
//
// A namespace's report is rewritten only when its result set changed:
// resultsDigest() hashes the results without their timestamps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"

namespace gpuguard::audit {

enum class ReportFormat { OpenReports, WgPolicy };
std::string_view reportFormatName(ReportFormat format);  // "openreports", "wgpolicyk8s"
std::optional<ReportFormat> parseReportFormat(std::string_view name);

// The API group/version and kinds of one report API.
struct ReportApi {
  std::string_view group;          // "openreports.io"
  std::string_view version;        // "v1alpha1"
  std::string_view kind;           // "Report"
  std::string_view clusterKind;    // "ClusterReport"
  std::string_view plural;         // "reports"
  std::string_view clusterPlural;  // "clusterreports"
};
const ReportApi& reportApi(ReportFormat format);

// What marks a report as ours (the inventory's label selector).
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "gpuguard";
inline constexpr std::string_view kDigestAnnotation = "gpuguard.io/results-digest";
inline constexpr std::string_view kTruncatedAnnotation = "gpuguard.io/results-truncated";
inline constexpr std::string_view kReportBaseName = "gpuguard";

// metav1.Timestamp: the CRDs require both fields.
struct Timestamp {
  std::int64_t seconds = 0;
  std::int32_t nanos = 0;
  bool operator==(const Timestamp&) const = default;
};

// The object a result is about (an ObjectReference in `resources`).
struct AuditedObject {
  std::string apiVersion;  // "apps/v1"
  std::string kind;        // "Deployment"
  std::string ns;          // "" for a cluster-scoped object
  std::string name;
  std::string uid;
};

// One result, before it is rendered into either API.
struct AuditResult {
  AuditedObject object;
  std::string rule;
  Severity severity = Severity::Error;
  bool suppressed = false;         // an allowed ignore.gpuguard.io/<rule> annotation: result "skip"
  std::string suppressedBecause;
  std::string message;             // "<field>: <API server's error>; <what to do>", <= kMaxMessageBytes
  std::string field;               // spec.template.spec.tolerations
  std::string pointer;             // /spec/template/spec/tolerations
  std::string value;               // the offending value as written, <= kMaxValueBytes; "" for none
  bool fixable = false;
  bool clusterFacts = false;       // judged with the cluster's facts
  Timestamp firstSeen;

  // Same finding of the same object (what carries the timestamp over).
  std::string key() const;
};

inline constexpr std::size_t kMaxMessageBytes = 1024;
inline constexpr std::size_t kMaxValueBytes = 256;

// The findings of one object's judgement as results, at most `maxResults`
// (the rest counted in `dropped`), each first seen at `now` unless
// `previous` (the object's last results) had the same finding.
struct ObjectResults {
  std::vector<AuditResult> results;
  std::size_t dropped = 0;
};
ObjectResults resultsOf(const AuditedObject& object, const std::vector<Finding>& findings, bool clusterFacts,
                        Timestamp now, const std::vector<AuditResult>& previous = {}, std::size_t maxResults = 100);

// `text` as valid UTF-8 (invalid bytes become U+FFFD) of at most `maxBytes`,
// cut on a character boundary.
std::string boundedText(std::string_view text, std::size_t maxBytes);

// "sha256:<hex>" of the results in their order, without timestamps, and of
// the count of dropped results: equal digests, nothing to rewrite.
std::string resultsDigest(const std::vector<AuditResult>& results, std::size_t dropped = 0);

// Limits of one report document: results, and the size of the serialized results.
struct ReportBounds {
  std::size_t maxResults = 200;
  std::size_t maxBytes = 1000 * 1024;  // ~1 MiB, well under etcd's 1.5 MiB
  std::size_t maxResultsPerObject = 100;  // written to configuration.limits.maxResults
};

// The result set of one namespace ("" = the cluster-scoped objects), in a
// stable order (kind, name, uid, then each object's own order).
struct NamespaceResults {
  std::string ns;
  std::vector<AuditResult> results;
  std::size_t dropped = 0;
};
void sortResults(std::vector<AuditResult>& results);

// The report documents of one namespace: `gpuguard`, `gpuguard-2`...; none
// when it has no results. Each carries the digest of the whole set.
std::vector<nlohmann::json> buildReports(const NamespaceResults& set, ReportFormat format,
                                         const ReportBounds& bounds = {});
// "gpuguard", "gpuguard-2", ... (`index` from 0).
std::string reportName(std::size_t index);

// The results a report holds, read back (a takeover carries their
// timestamps over); what does not parse as a result is skipped.
std::vector<AuditResult> resultsFromReport(const nlohmann::json& report);

}  // namespace gpuguard::audit
