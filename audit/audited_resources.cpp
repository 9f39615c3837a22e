#include "audit/audited_resources.h"

#include <algorithm>
#include <stdexcept>

namespace gpuguard::audit {

namespace {

using nlohmann::json;

AuditedResource core(const char* plural, const char* kind) { return {"", {"v1"}, plural, kind, true}; }

AuditedResource crd(const char* group, std::vector<std::string> versions, const char* plural, const char* kind,
                    bool namespaced = true) {
  return {group, std::move(versions), plural, kind, namespaced};
}

std::vector<AuditedResource> table() {
  return {
      core("pods", "Pod"),
      core("replicationcontrollers", "ReplicationController"),
      core("podtemplates", "PodTemplate"),
      core("limitranges", "LimitRange"),
      crd("apps", {"v1"}, "deployments", "Deployment"),
      crd("apps", {"v1"}, "statefulsets", "StatefulSet"),
      crd("apps", {"v1"}, "daemonsets", "DaemonSet"),
      crd("apps", {"v1"}, "replicasets", "ReplicaSet"),
      crd("batch", {"v1"}, "jobs", "Job"),
      crd("batch", {"v1"}, "cronjobs", "CronJob"),
      crd("ray.io", {"v1", "v1alpha1"}, "rayclusters", "RayCluster"),
      crd("ray.io", {"v1", "v1alpha1"}, "rayjobs", "RayJob"),
      crd("ray.io", {"v1", "v1alpha1"}, "rayservices", "RayService"),
      crd("kubeflow.org", {"v1"}, "pytorchjobs", "PyTorchJob"),
      crd("kubeflow.org", {"v1"}, "tfjobs", "TFJob"),
      crd("kubeflow.org", {"v2beta1", "v1"}, "mpijobs", "MPIJob"),
      crd("kubeflow.org", {"v1"}, "xgboostjobs", "XGBoostJob"),
      crd("kubeflow.org", {"v1"}, "paddlejobs", "PaddleJob"),
      crd("kubeflow.org", {"v1"}, "jaxjobs", "JAXJob"),
      crd("trainer.kubeflow.org", {"v1alpha1"}, "trainjobs", "TrainJob"),
      crd("jobset.x-k8s.io", {"v1alpha2"}, "jobsets", "JobSet"),
      crd("leaderworkerset.x-k8s.io", {"v1"}, "leaderworkersets", "LeaderWorkerSet"),
      crd("serving.kserve.io", {"v1beta1"}, "inferenceservices", "InferenceService"),
      crd("serving.kserve.io", {"v1alpha1"}, "servingruntimes", "ServingRuntime"),
      crd("serving.kserve.io", {"v1alpha1"}, "llminferenceservices", "LLMInferenceService"),
      crd("batch.volcano.sh", {"v1alpha1"}, "jobs", "Job"),
      crd("argoproj.io", {"v1alpha1"}, "workflows", "Workflow"),
      crd("argoproj.io", {"v1alpha1"}, "cronworkflows", "CronWorkflow"),
      crd("argoproj.io", {"v1alpha1"}, "workflowtemplates", "WorkflowTemplate"),
      crd("argoproj.io", {"v1alpha1"}, "clusterworkflowtemplates", "ClusterWorkflowTemplate", false),
      crd("apps.nvidia.com", {"v1alpha1"}, "nimservices", "NIMService"),
      crd("nvidia.com", {"v1alpha1", "v1beta1"}, "dynamographdeployments", "DynamoGraphDeployment"),
      crd("sparkoperator.k8s.io", {"v1beta2"}, "sparkapplications", "SparkApplication"),
      crd("sparkoperator.k8s.io", {"v1beta2"}, "scheduledsparkapplications", "ScheduledSparkApplication"),
      crd("serving.knative.dev", {"v1"}, "services", "Service"),
      crd("serving.knative.dev", {"v1"}, "configurations", "Configuration"),
      crd("karpenter.sh", {"v1", "v1beta1"}, "nodepools", "NodePool", false),
  };
}

bool isDnsLabelChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// A lowercase DNS subdomain (RFC 1123) with at least one dot: a CRD's group.
bool isGroup(std::string_view group) {
  if (group.empty() || group.size() > 253 || group.find('.') == std::string_view::npos) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= group.size(); ++i) {
    if (i == group.size() || group[i] == '.') {
      if (label == 0 || label > 63 || group[i - 1] == '-' || group[i - label] == '-') return false;
      label = 0;
    } else if (!isDnsLabelChar(group[i])) {
      return false;
    } else {
      ++label;
    }
  }
  return true;
}

bool isPlural(std::string_view plural) {
  if (plural.empty() || plural.size() > 63 || plural.front() == '-' || plural.back() == '-') return false;
  for (char c : plural) {
    if (!isDnsLabelChar(c)) return false;
  }
  return true;
}

std::string groupOf(std::string_view apiVersion) {
  const std::size_t slash = apiVersion.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(apiVersion.substr(0, slash));
}

std::string stringAt(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

const std::vector<AuditedResource>& auditedResources() {
  static const std::vector<AuditedResource> kTable = table();
  return kTable;
}

std::optional<AuditedResource> parseExtraResource(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view plural = text.substr(0, dot), group = text.substr(dot + 1);
  if (!isPlural(plural) || !isGroup(group)) return std::nullopt;
  return AuditedResource{std::string(group), {}, std::string(plural), "", true};
}

std::vector<AuditedResource> withExtraResources(const std::vector<std::string>& extra) {
  std::vector<AuditedResource> out = auditedResources();
  for (const std::string& text : extra) {
    std::optional<AuditedResource> parsed = parseExtraResource(text);
    if (!parsed) {
      throw std::invalid_argument("--audit-extra-resource " + text +
                                  ": expected <plural>.<group> of a custom resource, e.g. trainers.example.com");
    }
    bool known = false;
    for (const AuditedResource& r : out) known = known || r.name() == parsed->name();
    if (!known) out.push_back(std::move(*parsed));
  }
  return out;
}

std::vector<AuditedResource> resolveServed(std::vector<AuditedResource> resources, const cluster::Discovery& discovery) {
  for (AuditedResource& r : resources) {
    const cluster::ServedResource* served = discovery.find(r.group, r.plural);
    if (!served) continue;
    std::vector<std::string> versions{served->version};
    for (const std::string& v : r.versions) {
      if (v != served->version) versions.push_back(v);
    }
    r.versions = std::move(versions);
    r.kind = served->kind;
    r.namespaced = served->namespaced;
  }
  return resources;
}

std::vector<std::string> groupsOf(const std::vector<AuditedResource>& resources) {
  std::vector<std::string> groups;
  for (const AuditedResource& r : resources) {
    if (std::find(groups.begin(), groups.end(), r.group) == groups.end()) groups.push_back(r.group);
  }
  return groups;
}

std::string printAuditedResources(const std::vector<AuditedResource>& resources) {
  std::string out;
  for (const AuditedResource& r : resources) {
    out += (r.group.empty() ? "core" : r.group) + " " + r.plural + " " + (r.namespaced ? "Namespaced" : "Cluster") + "\n";
  }
  return out;
}

bool controlledByAuditedOwner(const json& object, const std::vector<AuditedResource>& resources) {
  const json* owners = object.is_object() && object.contains("metadata") && object["metadata"].is_object() &&
                               object["metadata"].contains("ownerReferences")
                           ? &object["metadata"]["ownerReferences"]
                           : nullptr;
  if (!owners || !owners->is_array()) return false;
  for (const json& owner : *owners) {
    if (!owner.is_object() || owner.value("controller", json(false)) != json(true)) continue;
    const std::string group = groupOf(stringAt(owner, "apiVersion")), kind = stringAt(owner, "kind");
    for (const AuditedResource& r : resources) {
      if (r.group == group && !r.kind.empty() && r.kind == kind) return true;
    }
  }
  return false;
}

AuditedObject auditedObject(const json& object) {
  const json meta = object.is_object() ? object.value("metadata", json::object()) : json::object();
  return {stringAt(object, "apiVersion"), stringAt(object, "kind"), stringAt(meta, "namespace"), stringAt(meta, "name"),
          stringAt(meta, "uid")};
}

}  // namespace gpuguard::audit
