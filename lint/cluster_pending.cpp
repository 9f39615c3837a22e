#include "lint/cluster_pending.h"

#include <map>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "cluster/api_client.h"
#include "lint/cluster_list.h"
#include "lint/exit_codes.h"
#include "lint/report/output.h"
#include "rules/cluster_reach.h"
#include "rules/engine.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/owner_references.h"
#include "rules/pod_specs.h"
#include "rules/resources.h"
#include "schedule/diagnose.h"
#include "schedule/node_snapshot.h"
#include "schedule/report.h"
#include "schedule/scheduler_message.h"

namespace gpuguard::lint {
namespace {

using nlohmann::json;

// At most this many Pending GPU pods are kept and explained: a queue of
// 10,000 pods waiting for GPUs says the same thing 10,000 times.
constexpr std::size_t kMaxPendingPods = 500;

const cluster::Resource kPods{"", {"v1"}, "pods", "Pod", true};

// What the pod lists brought.
struct LivePods {
  std::vector<json> pending;       // unbound, Pending, asking for GPUs, in the namespace(s) asked for
  std::size_t droppedPending = 0;  // over kMaxPendingPods
  std::size_t startingGpuPods = 0; // Pending but bound: the kubelet is starting them
  std::string error;               // non-empty: exit 2
};

std::string phaseOf(const json& pod) {
  const json* status = member(pod, "status");
  return status ? stringOr(*status, "phase") : "";
}

bool asksForGpus(const json& pod, const Policy& policy) {
  for (const PodSite& site : findPodSites(pod)) {
    if (site.specPath.apiPath() == "spec" && requestsGpu(site, policy)) return true;
  }
  return false;
}

// Keeps `pod` when it is one of the Pending GPU pods asked for.
void takePending(json&& pod, const Options& o, const std::string& ns, const Policy& policy, LivePods& out) {
  if (phaseOf(pod) != "Pending") return;
  const json* md = member(pod, "metadata");
  if (!o.allNamespaces && (!md || stringOr(*md, "namespace") != ns)) return;
  pod["apiVersion"] = "v1";  // list items carry neither
  pod["kind"] = "Pod";
  if (!asksForGpus(pod, policy)) return;
  const json* spec = member(pod, "spec");
  if (spec && !stringOr(*spec, "nodeName").empty()) {
    ++out.startingGpuPods;
  } else if (out.pending.size() < kMaxPendingPods) {
    out.pending.push_back(std::move(pod));
  } else {
    ++out.droppedPending;
  }
}

// One list of every pod that is not finished, all namespaces: the bound ones
// go into the snapshot, the Pending GPU pods of `ns` (or all) are kept. When
// RBAC refuses the cluster-wide list, -n NS falls back to that namespace's
// Pending pods and judges against allocatable alone (a warning).
LivePods listPods(cluster::ApiClient& api, const Options& o, const std::string& ns, const Policy& policy,
                  schedule::Snapshot& snapshot, std::ostream& err) {
  LivePods out;
  cluster::ListOptions all;
  all.fieldSelector = "status.phase!=Succeeded,status.phase!=Failed";
  const cluster::ListResult r = api.list(kPods, [&](json&& pod) {
    schedule::addBoundPod(snapshot, pod);
    takePending(std::move(pod), o, ns, policy, out);
  }, all);
  if (r.error.empty()) {
    snapshot.podsGiven = true;
    return out;
  }
  if (r.status != 403 || o.allNamespaces) {
    out.error = "the list of pods (all namespaces) failed: " + (r.status ? "HTTP " + std::to_string(r.status) + ": " : "") + r.error;
    return out;
  }
  err << "gpuguard-lint: --pending: warning: cannot list the pods of all namespaces (" << r.error
      << "): the nodes' free GPUs are not known, each pod is judged against allocatable as if nothing held it\n";
  out = LivePods{};
  snapshot = schedule::snapshotOf(snapshot.facts);
  cluster::ListOptions pending;
  pending.namespaceName = ns;
  pending.fieldSelector = "status.phase=Pending";
  const cluster::ListResult mine = api.list(kPods, [&](json&& pod) { takePending(std::move(pod), o, ns, policy, out); }, pending);
  if (!mine.error.empty()) out.error = "the list of pods in namespace " + ns + " failed: " + mine.error;
  return out;
}

// Whether `pod` can never schedule: the filters fail on every node even
// empty (allocatable, no bound pods), and no NodePool can launch a node for
// it. Cordoned nodes count as refusing (they may come back: said in docs).
bool neverSchedules(const json& pod, const ClusterFacts& facts, const Policy& policy) {
  const InputFacts none;
  const json* md = member(pod, "metadata");
  const std::string ns = md ? stringOr(*md, "namespace") : "";
  for (const PodSite& site : findPodSites(pod)) {
    if (site.specPath.apiPath() != "spec") continue;
    const GpuFacts gpu{policy, none, &facts, ns};
    const PodReach reach = reachOf(site, facts, gpu, ns);
    if (!reach.notJudged.empty() || reach.schedulableOnSomeNode()) return false;
    const long long gpus = podGpus(site, policy);
    for (const PoolReach& p : reach.pools) {
      if (p.reachable && (!p.maxGpus || *p.maxGpus >= gpus)) return false;
    }
    return true;
  }
  return false;
}

// One Pending GPU pod, explained.
struct Explained {
  schedule::PodDiagnosis replay;
  std::optional<schedule::SchedulerCondition> condition;
  schedule::SchedulerComparison comparison;
  bool never = false;
  std::vector<Finding> findings;  // unsuppressed, with the cluster's facts
  std::string owner;              // "ReplicaSet ml/vllm-6d5f": where the fix belongs
};

// The controller reference of an object ("ReplicaSet", "vllm-6d5f"), or nullopt.
std::optional<std::pair<std::string, std::string>> controllerRef(const json& object) {
  const json* ref = controllerReference(object);
  if (!ref) return std::nullopt;
  return std::make_pair(stringOr(*ref, "kind"), stringOr(*ref, "name"));
}

// Where a Pending pod's fix belongs: its controller, and for a ReplicaSet or
// a Job the Deployment or CronJob above it (one GET per owner, remembered,
// at most kMaxOwnerGets in a run; refused or absent: the direct owner only).
// "" for a bare pod.
class OwnerFinder {
 public:
  explicit OwnerFinder(cluster::ApiClient& api) : api_(api) {}

  std::string of(const json& pod) {
    const auto owner = controllerRef(pod);
    if (!owner) return "";
    const json* md = member(pod, "metadata");
    const std::string ns = md ? stringOr(*md, "namespace") : "";
    const std::string direct = owner->first + " " + ns + "/" + owner->second;
    const cluster::Resource* kind = owner->first == "ReplicaSet" ? &kReplicaSets
                                    : owner->first == "Job"      ? &kJobs
                                                                 : nullptr;
    if (!kind) return direct;
    auto above = above_.find(direct);
    if (above == above_.end()) above = above_.emplace(direct, controllerOf(*kind, ns, owner->second)).first;
    return above->second.empty() ? direct : above->second + " (through " + direct + ")";
  }

 private:
  static constexpr std::size_t kMaxOwnerGets = 50;
  inline static const cluster::Resource kReplicaSets{"apps", {"v1"}, "replicasets", "ReplicaSet", true};
  inline static const cluster::Resource kJobs{"batch", {"v1"}, "jobs", "Job", true};

  // "Deployment ml/vllm": the controller of the object `kind` ns/name; "".
  std::string controllerOf(const cluster::Resource& kind, const std::string& ns, const std::string& name) {
    if (gets_ >= kMaxOwnerGets) return "";
    ++gets_;
    const cluster::ApiResult r = api_.getObject(kind, "v1", ns, name);
    const auto above = r.ok() ? controllerRef(r.body) : std::nullopt;
    return above ? above->first + " " + ns + "/" + above->second : "";
  }

  cluster::ApiClient& api_;
  std::size_t gets_ = 0;
  std::map<std::string, std::string> above_;  // "ReplicaSet ml/x" -> "Deployment ml/vllm" ("" none)
};

std::vector<Explained> explainAll(const LivePods& pods, const schedule::Snapshot& snapshot, const LintPolicy& policy,
                                  OwnerFinder& owners) {
  std::vector<Explained> out;
  for (const json& pod : pods.pending) {
    for (schedule::PodDiagnosis& d : schedule::diagnoseObject(pod, snapshot, policy.engine)) {
      Explained e;
      e.replay = std::move(d);
      e.condition = schedule::podScheduledCondition(pod);
      const json* spec = member(pod, "spec");
      e.comparison = schedule::compareWithScheduler(e.replay, e.condition, spec ? stringOr(*spec, "schedulerName") : "");
      e.never = neverSchedules(pod, *snapshot.facts, policy.engine);
      JudgeOptions options;
      options.cluster = snapshot.facts.get();
      options.exemptions = &policy.exemptions;
      for (Finding& f : judge(pod, policy.engine, options)) {
        if (!f.suppressed || !policy.allowSuppressions) e.findings.push_back(std::move(f));
      }
      e.owner = owners.of(pod);
      out.push_back(std::move(e));
    }
  }
  return out;
}


std::string whereText(const Options& o, const std::string& ns) {
  return o.allNamespaces ? "in all namespaces" : "in namespace " + ns;
}

// The lines under a pod's --nodes block: kube-scheduler's word, whether the
// two agree, whether it can ever schedule, what the rules say to change.
void writeLive(std::ostream& out, const Explained& e) {
  if (e.condition && !e.condition->message.empty()) {
    out << "  kube-scheduler: " << e.condition->message << " (PodScheduled=" << e.condition->status;
    if (!e.condition->reason.empty()) out << ", " << e.condition->reason;
    if (!e.condition->lastTransitionTime.empty()) out << ", since " << e.condition->lastTransitionTime;
    out << ")\n";
  }
  out << "  agreement: " << e.comparison.text << "\n";
  if (e.never) {
    out << "  never schedules: no node could take it even with nothing else running, and no NodePool can launch one\n";
  } else if (!e.replay.schedulable()) {
    out << "  waits: a node could take it once other pods free what they hold\n";
  }
  for (const Finding& f : e.findings) {
    out << "  " << severityName(f.severity) << ": " << f.fieldError() << " [" << f.rule << "]\n";
  }
  if (!e.owner.empty()) out << "  owned by " << e.owner << ": change the pod template there, not the pod\n";
}

void writeLiveText(std::ostream& out, const std::vector<Explained>& pods, const schedule::Snapshot& snapshot,
                   const std::string& where) {
  for (const std::string& w : snapshot.warnings) out << "warning: " << w << "\n";
  if (pods.empty()) {
    out << "No Pending GPU pods " << where << ".\n";
    return;
  }
  std::size_t never = 0, tried = 0, agree = 0;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (i) out << "\n";
    schedule::writePodText(out, pods[i].replay);
    writeLive(out, pods[i]);
    never += pods[i].never;
    if (const std::optional<bool> a = pods[i].comparison.agrees()) tried += 1, agree += *a;
  }
  out << "\n" << pods.size() << (pods.size() == 1 ? " Pending GPU pod " : " Pending GPU pods ") << where << " against "
      << snapshot.nodes.size() << (snapshot.nodes.size() == 1 ? " node" : " nodes") << ": " << never
      << " never schedule" << (never == 1 ? "s" : "") << ", " << (pods.size() - never) << " wait"
      << (pods.size() - never == 1 ? "s" : "") << "; kube-scheduler agrees on " << agree << " of the " << tried
      << " it has tried\n";
}

json liveJson(const std::vector<Explained>& pods, const schedule::Snapshot& snapshot, const Options& o,
              const std::string& ns) {
  std::vector<schedule::PodDiagnosis> replays;
  for (const Explained& e : pods) replays.push_back(e.replay);
  json doc = schedule::toJson(replays, snapshot);
  doc["namespace"] = o.allNamespaces ? json(nullptr) : json(ns);
  bool anyNever = false;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const Explained& e = pods[i];
    json& j = doc["pods"][i];
    j["scheduler"] = nullptr;
    if (e.condition) {
      j["scheduler"] = {{"status", e.condition->status}, {"reason", e.condition->reason},
                        {"message", e.condition->message}, {"lastTransitionTime", e.condition->lastTransitionTime}};
    }
    const std::optional<bool> agrees = e.comparison.agrees();
    j["agreesWithScheduler"] = agrees ? json(*agrees) : json(nullptr);
    j["agreement"] = e.comparison.text;
    j["neverSchedules"] = e.never;
    j["owner"] = e.owner;
    j["findings"] = json::array();
    for (const Finding& f : e.findings) {
      j["findings"].push_back({{"rule", f.rule}, {"severity", severityName(f.severity)}, {"field", f.field()},
                               {"message", f.message()}});
    }
    anyNever = anyNever || e.never;
  }
  doc["neverSchedules"] = anyNever;
  return doc;
}

}  // namespace

int runClusterPending(const Options& o, const RunConfig& config, const RunStreams& streams) {
  std::ostream& err = streams.err;
  if (o.format != Format::Text && o.format != Format::Json) {
    err << "gpuguard-lint: --pending prints text or json (--format)\n";
    return kExitTrouble;
  }
  const std::optional<cluster::ClientConfig> client = clientConfigFor(o, err);
  if (!client) return kExitTrouble;
  std::shared_ptr<const ClusterFacts> facts = listClusterFactsFor(*client, err);
  if (!facts) return kExitTrouble;
  const std::string ns = o.namespaceName.value_or(client->namespaceName);
  schedule::Snapshot snapshot = schedule::snapshotOf(facts);
  cluster::ApiClient api(*client);
  const LivePods pods = listPods(api, o, ns, config.policy.engine, snapshot, err);
  if (!pods.error.empty()) {
    err << "gpuguard-lint: --pending: " << pods.error << "\n";
    return kExitTrouble;
  }
  if (pods.droppedPending > 0) {
    err << "gpuguard-lint: --pending: note: " << pods.droppedPending << " more Pending GPU pods " << whereText(o, ns)
        << " not explained (the first " << kMaxPendingPods << " are)\n";
  }
  if (pods.startingGpuPods > 0) {
    err << "gpuguard-lint: --pending: note: " << pods.startingGpuPods << " Pending GPU pod"
        << (pods.startingGpuPods == 1 ? " is" : "s are") << " already bound to a node (the kubelet is starting "
        << (pods.startingGpuPods == 1 ? "it" : "them") << ": kubectl describe pod)\n";
  }
  OwnerFinder owners(api);
  const std::vector<Explained> explained = explainAll(pods, snapshot, config.policy, owners);
  ReportOutput output(streams.out, err);
  if (!output.open(o.output)) return kExitTrouble;
  if (o.format == Format::Json) output.stream() << liveJson(explained, snapshot, o, ns).dump(2) << "\n";
  else writeLiveText(output.stream(), explained, snapshot, whereText(o, ns));
  const bool never = std::any_of(explained.begin(), explained.end(), [](const Explained& e) { return e.never; });
  return output.finish(never ? kExitFindings : kExitClean, kExitTrouble);
}

}  // namespace gpuguard::lint
