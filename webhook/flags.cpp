#include "webhook/flags.h"

#include "https/memory_budget.h"
#include "webhook/flag_setters.h"

#include <charconv>
#include <functional>
#include <limits>
#include <map>

namespace gpuguard::webhook {

const char* const kUsage =
    R"(Usage: gpuguard-webhook --tls-cert-file=PATH --tls-private-key-file=PATH [flags]

The GPU rules of gpuguard as a Kubernetes ValidatingAdmissionWebhook. Serves
HTTPS only (TLS 1.2 or newer):
  POST /validate   AdmissionReview admission.k8s.io/v1 or v1beta1
  GET  /healthz    200 while the process is up
  GET  /readyz     200 while a certificate is loaded and the server is serving
  GET  /metrics    Prometheus text format

TLS:
  --tls-cert-file=PATH          Serving certificate (PEM, leaf first, then any
                                intermediates). Reloaded when it changes on disk.
  --tls-private-key-file=PATH   Private key of the serving certificate (PEM).
  --client-ca-file=PATH         Verify client certificates against these CAs (for
                                API servers configured to present one): without
                                a verified one, only /healthz, /livez and /readyz
                                are served (403 otherwise), so the kubelet's
                                HTTPS probes work. Reloaded when it changes.
  --tls-reload-interval=DUR     How often to check the certificate files and the
                                client CA file for changes (default 2s).

Serving:
  --port=N                      HTTPS port (default 8443; 0 picks a free port).
  --bind-address=IP             Address to listen on (default 0.0.0.0; use :: for
                                IPv6).
  --max-request-bytes=SIZE      Largest request body; larger ones get 413,
                                once read (default 20Mi: an UPDATE review of
                                two large objects reaches 18 MiB).
  --request-timeout=DUR         Time allowed to receive one request (default 10s).
  --handshake-timeout=DUR       Time allowed for a TLS handshake, from the
                                accept (default 5s).
  --memory-limit=SIZE           The container's memory limit (the chart and
                                kustomize pass limits.memory): the caps on open
                                connections and TLS handshakes in progress, and
                                the memory for large request bodies held at
                                once (beyond, 503 with Retry-After) are derived
                                from it. Default: the cgroup's limit
                                (memory.max, memory.limit_in_bytes); without
                                one, 10,000 connections.
  --idle-timeout=DUR            Keep-alive connections idle longer are closed
                                (default 120s: longer than the API server's 90s,
                                so that it, not the webhook, closes them).
  --shutdown-timeout=DUR        On SIGTERM, the longest wait for requests in
                                flight before the remaining connections are
                                closed (default 20s; keep it below the pod's
                                terminationGracePeriodSeconds minus preStop).
  --worker-threads=N            Event-loop threads: they read, write and judge
                                the requests of their connections (default 0:
                                two per usable core).
  --judge-off-loop-bytes=SIZE   Requests with a body at least this large are
                                judged on the judging threads, so that a large
                                object does not hold the other connections of
                                its event loop (default 64Ki; 0: every request).
  --judge-threads=N             Judging threads (default 0: one per core).
  --judge-queue-length=N        Large requests that may wait for a judging
                                thread; beyond, 503 with Retry-After: 1, which
                                the API server retries (default 0: four per
                                judging thread). A request waiting past the
                                API server's timeout (its ?timeout=, else 10s)
                                or whose client left is not judged.

Policy:
  --policy=FILE                 Policy file (the schema of gpuguard-lint's
                                .gpuguard.yaml: rules, gpuResources, gpuTaints,
                                driverPinLabels, exemptNamespaces, ...). Without
                                it, the built-in defaults. Suppression annotations
                                count only with allowSuppressions: true in it.
  --policy-reload-interval=DUR  How often to check the policy file for changes
                                (default 2s). A changed file that does not load
                                is rejected and the active policy stays.
  --check-policy                Load --policy, print what is wrong with it (if
                                anything) and exit: 0 valid, 1 invalid.

Cluster facts (docs/cluster-facts.md):
  --cluster-facts=on|off|auto   Read the cluster's nodes, namespaces, DeviceClasses,
                                ResourceClaim(Template)s, ResourceSlices, NodePools
                                (list, then watch) and judge with them (default
                                auto: on when a configuration is found). Until
                                they are synced, or while the API server is
                                unreachable or RBAC refuses them, pods are
                                judged without them, as with off.
  --kubeconfig=FILE             The API server and credentials, as kubectl reads
                                them. Default: $KUBECONFIG, else the pod's
                                service account, else ~/.kube/config.
  --context=NAME                The kubeconfig context (default: current-context).

Background audit (docs/audit.md; off by default):
  --audit=off|on|auto           Judge what the cluster already runs (list, then
                                watch) with this policy, engine and cluster
                                facts, and write the findings as one report per
                                namespace (default off; auto: on when a cluster
                                configuration is found). With several
                                replicas, only the Lease holder audits.
  --audit-policy=FILE           The policy the audit judges with (default
                                --policy); reloaded like it.
  --audit-report-format=F       openreports (openreports.io/v1alpha1 Report and
                                ClusterReport, default) or wgpolicyk8s
                                (wgpolicyk8s.io/v1alpha2 PolicyReport).
  --audit-resync-interval=DUR   A full relist this often (default 1h).
  --audit-judge-qps=N           Judgements per second at most (default 50; 0:
                                unlimited).
  --audit-api-qps=N             API calls per second (GET, apply, DELETE; not
                                lists and watches) (default 20), with
  --audit-api-burst=N           bursts of up to N (default 40).
  --audit-max-results=N         Results per object at most (default 100).
  --audit-extra-resource=R      Also audit this custom resource, plural.group
                                (repeatable; RBAC must grant get/list/watch).
  --audit-exclude-namespace=NS  Do not audit this namespace (repeatable).
  --audit-pending-bytes=SIZE    Object bodies held in the audit's queue at most,
                                as parsed (default 16Mi; lists wait beyond it).
  --audit-metrics-max-namespaces=N  Namespaces with their own
                                gpuguard_audit_findings series (default 500; the
                                rest are namespace="_other").
  --print-audit-resources       Print the audited resources and exit.
  --leader-elect=true|false     Only the replica holding a coordination.k8s.io
                                Lease audits; the others stand by (default
                                true). The Lease:
  --leader-elect-resource-name=NAME       (default gpuguard-audit) in
  --leader-elect-resource-namespace=NS    (default $POD_NAMESPACE, else the
                                configuration's namespace), held as
  --leader-elect-identity=ID    (default $POD_NAME or the host name, plus "_" and
                                8 random hex digits), with
  --leader-elect-lease-duration=DUR, --leader-elect-renew-deadline=DUR,
  --leader-elect-retry-period=DUR   (default 15s, 10s, 2s; client-go's rule:
                                lease > renew deadline > 1.2 x retry period).

Logging:
  --log-level=LEVEL             debug, info, warn or error (default info). Info
                                logs every denial and every request that got
                                warnings (allowed requests are not logged: at
                                thousands per second that is noise); debug logs
                                every decision; warn only invalid requests.

  --help                        Show this help and exit.
  --version                     Print the version and exit.

DUR is a duration like 500ms, 2s, 1m (a bare number is seconds). SIZE is a
byte count, optionally with Ki, Mi or Gi.
Signals: SIGTERM or SIGINT accepts the connections already queued, then stops
accepting; answers every request already received (with Connection: close),
closes idle connections and exits 0 (within --shutdown-timeout). SIGHUP is
ignored: the certificate, client CAs and policy reload when their files change.
)";

std::optional<std::chrono::milliseconds> parseDuration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t n = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || p == text.data()) return std::nullopt;
  const std::string unit(p, end);
  std::uint64_t factor = 0;
  if (unit.empty() || unit == "s") factor = 1000;
  else if (unit == "ms") factor = 1;
  else if (unit == "m") factor = 60'000;
  else if (unit == "h") factor = 3'600'000;
  else return std::nullopt;
  if (n > std::numeric_limits<std::int64_t>::max() / factor / 2) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(n * factor));
}

std::optional<std::size_t> parseByteSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t n = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || p == text.data()) return std::nullopt;
  static const std::map<std::string, std::uint64_t, std::less<>> kUnits{
      {"", 1}, {"k", 1000}, {"K", 1000}, {"M", 1000'000}, {"G", 1000'000'000},
      {"Ki", 1024}, {"Mi", 1024 * 1024}, {"Gi", 1024ull * 1024 * 1024}};
  auto unit = kUnits.find(std::string_view(p, static_cast<std::size_t>(end - p)));
  if (unit == kUnits.end()) return std::nullopt;
  if (n > std::numeric_limits<std::size_t>::max() / unit->second) return std::nullopt;
  return static_cast<std::size_t>(n * unit->second);
}

namespace {

// Sets one flag from its value; returns what is wrong with the value, or "".
using Setter = FlagSetter;
using Setters = FlagSetters;

// "must not be empty" unless the flag says what it names.
Setter path(std::string& dst) { return nonEmpty(dst); }

Setter optionalPath(std::optional<std::string>& dst, const char* empty = "must not be empty") {
  return nonEmpty(dst, empty);
}

Setter duration(std::chrono::milliseconds& dst) {
  return durationAtLeast(dst, std::chrono::milliseconds(1), "must be a duration like 500ms, 2s or 1m");
}

// A whole number from 0 to `max`, into `dst` (unsigned, std::size_t...).
template <typename Number>
Setter number(Number& dst, Number max, std::string error) {
  return wholeNumber(dst, Number{0}, max, std::move(error));
}

// TLS, the policy and the cluster: files and names.
void addSourceFlags(Flags& f, Setters& s) {
  s.emplace("tls-cert-file", path(f.tlsCertFile));
  s.emplace("tls-private-key-file", path(f.tlsPrivateKeyFile));
  s.emplace("client-ca-file", optionalPath(f.clientCaFile));
  s.emplace("policy", optionalPath(f.policy));
  s.emplace("kubeconfig", optionalPath(f.kubeconfig, "must name a file"));
  s.emplace("context", optionalPath(f.kubeContext, "must name a context"));
  s.emplace("cluster-facts", onOffAuto(f.clusterFacts));
  s.emplace("log-level", [&f](const std::string& v) -> std::string {
    auto level = parseLogLevel(v);
    if (!level) return "must be debug, info, warn or error";
    f.logLevel = *level;
    return "";
  });
  s.emplace("policy-reload-interval", duration(f.policyPollInterval));
  s.emplace("tls-reload-interval", duration(f.certPollInterval));
}

// Serving: the address, limits, timeouts and threads.
void addServingFlags(Flags& f, Setters& s) {
  s.emplace("bind-address", path(f.bindAddress));
  s.emplace("port", number<std::uint16_t>(f.port, 65535, "must be a port number (0-65535)"));
  s.emplace("max-request-bytes", byteSize(f.maxRequestBytes, 1024, "must be a byte size of at least 1024, like 20Mi"));
  s.emplace("memory-limit", byteSize(f.memoryLimit, 16 * 1024 * 1024, "must be a byte size of at least 16Mi, like 256Mi"));
  s.emplace("judge-off-loop-bytes", byteSize(f.judgeOffLoopBytes, 0, "must be a byte size, like 64Ki"));
  s.emplace("request-timeout", duration(f.requestTimeout));
  s.emplace("handshake-timeout", duration(f.handshakeTimeout));
  s.emplace("idle-timeout", duration(f.idleTimeout));
  s.emplace("shutdown-timeout", duration(f.shutdownTimeout));
  s.emplace("worker-threads", number(f.workerThreads, 1024u, "must be a number from 0 to 1024"));
  s.emplace("judge-threads", number(f.judgeThreads, 1024u, "must be a number from 0 to 1024"));
  s.emplace("judge-queue-length", number<std::size_t>(f.judgeQueueLength, 100000, "must be a number from 0 to 100000"));
}

// --help, --version, --check-policy: alone, or =true / =false.
std::string applySwitch(const std::string& name, std::size_t eq, const std::string& arg, bool& target) {
  if (eq == std::string::npos) {
    target = true;
    return "";
  }
  const std::string v = arg.substr(eq + 1);
  if (v != "true" && v != "false") return "--" + name + " takes no value (or =true/=false)";
  target = v == "true";
  return "";
}

// Applies args[i] (and its value, args[i + 1], when it takes the next
// argument); returns the error, or "".
std::string applyArgument(const std::vector<std::string>& args, std::size_t& i, Flags& f, const Setters& valued) {
  const std::string& arg = args[i];
  if (arg == "-h") {
    f.help = true;
    return "";
  }
  if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
    return "unexpected argument \"" + arg + "\" (flags start with --; see --help)";
  }
  const std::size_t eq = arg.find('=');
  const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  if (name == "help") return applySwitch(name, eq, arg, f.help);
  if (name == "version") return applySwitch(name, eq, arg, f.version);
  if (name == "check-policy") return applySwitch(name, eq, arg, f.checkPolicy);
  if (name == "print-audit-resources") return applySwitch(name, eq, arg, f.audit.printResources);
  auto setter = valued.find(name);
  if (setter == valued.end()) return "unknown flag --" + name + " (see --help)";
  std::string value;
  if (eq != std::string::npos) {
    value = arg.substr(eq + 1);
  } else if (i + 1 < args.size()) {
    value = args[++i];
  } else {
    return "--" + name + " needs a value";
  }
  if (std::string err = setter->second(value); !err.empty()) return "--" + name + "=" + value + ": " + err;
  return "";
}

// What the flags lack for the mode they ask for, or "".
std::string missingFlags(const Flags& f) {
  if (f.help || f.version || f.audit.printResources) return "";
  if (f.checkPolicy) return f.policy ? "" : "--check-policy needs --policy=FILE";
  if (f.tlsCertFile.empty() || f.tlsPrivateKeyFile.empty()) {
    return "--tls-cert-file and --tls-private-key-file are required (there is no plain-HTTP mode)";
  }
  return "";
}

}  // namespace

FlagsResult parseFlags(const std::vector<std::string>& args) {
  FlagsResult r;
  Setters valued;
  addSourceFlags(r.flags, valued);
  addServingFlags(r.flags, valued);
  addAuditFlags(r.flags.audit, valued);
  for (std::size_t i = 0; i < args.size(); ++i) {
    r.error = applyArgument(args, i, r.flags, valued);
    if (!r.error.empty()) return r;
  }
  r.error = missingFlags(r.flags);
  return r;
}

MemoryLimit memoryLimit(const Flags& flags, std::optional<std::uint64_t> cgroupLimit) {
  if (flags.memoryLimit) return {flags.memoryLimit, "--memory-limit"};
  if (cgroupLimit) return {cgroupLimit, "cgroup"};
  return {std::nullopt, "none"};
}

ServerConfig serverConfig(const Flags& flags, std::optional<std::uint64_t> memoryLimit) {
  ServerConfig c;
  const ConnectionLimits caps = connectionLimitsFor(memoryLimit, {c.maxConnections, c.maxConnections});
  c.maxConnections = caps.maxConnections;
  c.maxHandshakes = caps.maxHandshakes;
  c.handshakeTimeout = flags.handshakeTimeout;
  c.bindAddress = flags.bindAddress;
  c.port = flags.port;
  c.certFile = flags.tlsCertFile;
  c.keyFile = flags.tlsPrivateKeyFile;
  c.clientCaFile = flags.clientCaFile;
  c.maxBodyBytes = flags.maxRequestBytes;
  c.bodyBudgetBytes = bodyBudgetFor(memoryLimit);
  c.requestTimeout = flags.requestTimeout;
  c.idleTimeout = flags.idleTimeout;
  c.shutdownTimeout = flags.shutdownTimeout;
  c.certificatePollInterval = flags.certPollInterval;
  c.workerThreads = flags.workerThreads;
  c.judgeThreads = flags.judgeThreads;
  c.judgeOffLoopBytes = flags.judgeOffLoopBytes;
  c.maxQueuedJudgements = flags.judgeQueueLength;
  return c;
}

}  // namespace gpuguard::webhook
