#include "audit/report_model.h"

#include <algorithm>
#include <tuple>

#include "audit/sha256.h"
#include "text/utf8.h"

namespace gpuguard::audit {

namespace {

using nlohmann::json;

constexpr std::string_view kSource = "gpuguard";
constexpr std::string_view kCategory = "GPU";
constexpr std::string_view kProcess = "background scan";

// Serialized as the API server would receive it: invalid UTF-8 cannot occur
// (boundedText cleaned every string), but a dump must never throw.
std::string dumped(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string_view resultWord(const AuditResult& r) {
  if (r.suppressed) return "skip";
  return r.severity == Severity::Error ? "fail" : "warn";
}

// The Result severity enum (critical|high|medium|low|info).
std::string_view severityWord(Severity s) { return s == Severity::Error ? "high" : "medium"; }

json objectReference(const AuditedObject& o) {
  json ref = {{"apiVersion", o.apiVersion}, {"kind", o.kind}};
  if (!o.ns.empty()) ref["namespace"] = o.ns;
  ref["name"] = o.name;
  if (!o.uid.empty()) ref["uid"] = o.uid;
  return ref;
}

json properties(const AuditResult& r) {
  json p = {{"field", r.field}, {"pointer", r.pointer}};
  if (!r.value.empty()) p["value"] = r.value;
  p["fixable"] = r.fixable ? "true" : "false";
  p["process"] = kProcess;
  p["clusterFacts"] = r.clusterFacts ? "true" : "false";
  if (r.suppressed) p["suppressedBecause"] = r.suppressedBecause;
  return p;
}

json renderResult(const AuditResult& r) {
  json out = {{"source", kSource}, {"policy", r.rule}, {"category", kCategory},
              {"severity", severityWord(r.severity)}, {"result", resultWord(r)}};
  if (!r.suppressed && r.severity == Severity::Error) out["scored"] = true;  // warn: "not met and not scored"
  out["message"] = r.message;
  out["resources"] = json::array({objectReference(r.object)});
  out["properties"] = properties(r);
  out["timestamp"] = {{"seconds", r.firstSeen.seconds}, {"nanos", r.firstSeen.nanos}};
  return out;
}

// The counts of the results written in this document (Kyverno's CalculateSummary).
json summaryOf(const json& results) {
  std::map<std::string, int> counts{{"pass", 0}, {"fail", 0}, {"warn", 0}, {"error", 0}, {"skip", 0}};
  for (const json& r : results) ++counts[r["result"].get<std::string>()];
  return counts;
}

json reportDocument(const NamespaceResults& set, ReportFormat format, const ReportBounds& bounds, std::size_t index,
                    json results, const std::string& digest) {
  const ReportApi& api = reportApi(format);
  json meta = {{"name", reportName(index)}};
  if (!set.ns.empty()) meta["namespace"] = set.ns;
  meta["labels"] = {{kManagedByLabel, kManagedByValue}};
  meta["annotations"] = {{kDigestAnnotation, digest}};
  if (set.dropped > 0) meta["annotations"][kTruncatedAnnotation] = std::to_string(set.dropped);
  json doc = {{"apiVersion", std::string(api.group) + "/" + std::string(api.version)},
              {"kind", set.ns.empty() ? api.clusterKind : api.kind},
              {"metadata", std::move(meta)}};
  if (format == ReportFormat::OpenReports) {
    doc["source"] = kSource;
    doc["configuration"] = {{"limits", {{"maxResults", bounds.maxResultsPerObject},
                                        {"statusFilter", json::array({"fail", "warn", "skip"})}}}};
  }
  doc["summary"] = summaryOf(results);
  doc["results"] = std::move(results);
  return doc;
}

Severity severityOfWords(std::string_view result, std::string_view severity) {
  if (result == "fail") return Severity::Error;
  if (result == "warn") return Severity::Warning;
  return severity == "high" || severity == "critical" ? Severity::Error : Severity::Warning;
}

std::string stringAt(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<AuditResult> parseResult(const json& r) {
  if (!r.is_object() || !r.contains("resources") || !r["resources"].is_array() || r["resources"].empty()) return std::nullopt;
  const json& ref = r["resources"][0];
  if (!ref.is_object()) return std::nullopt;
  AuditResult out;
  out.object = {stringAt(ref, "apiVersion"), stringAt(ref, "kind"), stringAt(ref, "namespace"), stringAt(ref, "name"),
                stringAt(ref, "uid")};
  out.rule = stringAt(r, "policy");
  const std::string result = stringAt(r, "result");
  out.severity = severityOfWords(result, stringAt(r, "severity"));
  out.suppressed = result == "skip";
  out.message = stringAt(r, "message");
  const json props = r.value("properties", json::object());
  if (props.is_object()) {
    out.field = stringAt(props, "field");
    out.pointer = stringAt(props, "pointer");
    out.value = stringAt(props, "value");
    out.fixable = stringAt(props, "fixable") == "true";
    out.clusterFacts = stringAt(props, "clusterFacts") == "true";
    out.suppressedBecause = stringAt(props, "suppressedBecause");
  }
  const json ts = r.value("timestamp", json::object());
  if (ts.is_object() && ts.value("seconds", json()).is_number_integer()) {
    out.firstSeen.seconds = ts["seconds"].get<std::int64_t>();
    const json nanos = ts.value("nanos", json());
    if (nanos.is_number_integer()) out.firstSeen.nanos = static_cast<std::int32_t>(std::clamp<std::int64_t>(nanos.get<std::int64_t>(), 0, 999'999'999));
  }
  if (out.rule.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::string_view reportFormatName(ReportFormat format) {
  return format == ReportFormat::OpenReports ? "openreports" : "wgpolicyk8s";
}

std::optional<ReportFormat> parseReportFormat(std::string_view name) {
  if (name == "openreports") return ReportFormat::OpenReports;
  if (name == "wgpolicyk8s") return ReportFormat::WgPolicy;
  return std::nullopt;
}

const ReportApi& reportApi(ReportFormat format) {
  static const ReportApi kOpenReports{"openreports.io", "v1alpha1", "Report", "ClusterReport", "reports", "clusterreports"};
  static const ReportApi kWgPolicy{"wgpolicyk8s.io", "v1alpha2", "PolicyReport", "ClusterPolicyReport", "policyreports",
                                   "clusterpolicyreports"};
  return format == ReportFormat::OpenReports ? kOpenReports : kWgPolicy;
}

std::string AuditResult::key() const {
  return object.uid + '\n' + rule + '\n' + pointer + '\n' + message;
}

std::string boundedText(std::string_view text, std::size_t maxBytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const utf8::Decoded d = utf8::decode(text, i);
    const std::size_t consumed = d.error == utf8::Error::None ? d.length : 1;
    const char32_t cp = d.error == utf8::Error::None ? d.codePoint : U'\uFFFD';
    std::string piece;
    utf8::append(piece, cp);
    if (out.size() + piece.size() > maxBytes) break;
    out += piece;
    i += consumed;
  }
  return out;
}

ObjectResults resultsOf(const AuditedObject& object, const std::vector<Finding>& findings, bool clusterFacts,
                        Timestamp now, const std::vector<AuditResult>& previous, std::size_t maxResults) {
  std::map<std::string, Timestamp> seen;
  for (const AuditResult& p : previous) seen.emplace(p.key(), p.firstSeen);
  ObjectResults out;
  for (const Finding& f : findings) {
    if (out.results.size() >= maxResults) {
      ++out.dropped;
      continue;
    }
    AuditResult r;
    r.object = object;
    r.rule = boundedText(f.rule, kMaxValueBytes);
    r.severity = f.severity;
    r.suppressed = f.suppressed;
    r.suppressedBecause = f.suppressed ? boundedText(f.suppressionReason, kMaxValueBytes) : std::string();
    r.message = boundedText(f.fieldError(), kMaxMessageBytes);
    r.field = boundedText(f.field(), kMaxMessageBytes);
    r.pointer = boundedText(f.pointer(), kMaxMessageBytes);
    r.value = boundedText(f.value, kMaxValueBytes);
    r.fixable = f.fix.has_value();
    r.clusterFacts = clusterFacts;
    const auto it = seen.find(r.key());
    r.firstSeen = it != seen.end() ? it->second : now;
    out.results.push_back(std::move(r));
  }
  return out;
}

std::string resultsDigest(const std::vector<AuditResult>& results, std::size_t dropped) {
  json canonical = json::array();
  for (const AuditResult& r : results) {
    canonical.push_back({r.object.apiVersion, r.object.kind, r.object.ns, r.object.name, r.object.uid, r.rule,
                         r.severity == Severity::Error, r.suppressed, r.suppressedBecause, r.message, r.field, r.pointer,
                         r.value, r.fixable, r.clusterFacts});
  }
  canonical.push_back(dropped);
  return "sha256:" + sha256Hex(dumped(canonical));
}

void sortResults(std::vector<AuditResult>& results) {
  std::stable_sort(results.begin(), results.end(), [](const AuditResult& a, const AuditResult& b) {
    return std::tie(a.object.kind, a.object.name, a.object.uid) < std::tie(b.object.kind, b.object.name, b.object.uid);
  });
}

std::string reportName(std::size_t index) {
  return index == 0 ? std::string(kReportBaseName) : std::string(kReportBaseName) + "-" + std::to_string(index + 1);
}

std::vector<nlohmann::json> buildReports(const NamespaceResults& set, ReportFormat format, const ReportBounds& bounds) {
  std::vector<json> reports;
  if (set.results.empty()) return reports;
  const std::string digest = resultsDigest(set.results, set.dropped);
  const std::size_t maxResults = std::max<std::size_t>(1, bounds.maxResults);
  json shard = json::array();
  std::size_t shardBytes = 0;
  for (const AuditResult& r : set.results) {
    json rendered = renderResult(r);
    const std::size_t bytes = dumped(rendered).size() + 1;
    if (!shard.empty() && (shard.size() >= maxResults || shardBytes + bytes > bounds.maxBytes)) {
      reports.push_back(reportDocument(set, format, bounds, reports.size(), std::move(shard), digest));
      shard = json::array();
      shardBytes = 0;
    }
    shard.push_back(std::move(rendered));
    shardBytes += bytes;
  }
  reports.push_back(reportDocument(set, format, bounds, reports.size(), std::move(shard), digest));
  return reports;
}

std::vector<AuditResult> resultsFromReport(const nlohmann::json& report) {
  std::vector<AuditResult> out;
  if (!report.is_object()) return out;
  const auto it = report.find("results");
  if (it == report.end() || !it->is_array()) return out;
  for (const json& r : *it) {
    if (std::optional<AuditResult> parsed = parseResult(r)) out.push_back(std::move(*parsed));
  }
  return out;
}

}  // namespace gpuguard::audit
