// What the background audit lists and watches (docs/audit.md, "What is
// audited"): the kinds the webhook judges at admission (the chart's
// gpuguard.webhookRules), plus LimitRanges and Karpenter NodePools (rules
// read them), plus --audit-extra-resource=plural.group.
//
// The skip rule: an object that a controller of an audited kind owns
// (an ownerReference with controller: true) is not judged; its owner
// carries the finding, once, where the fix belongs: a ReplicaSet of a
// Deployment, a Job of a CronJob, a Pod of a ReplicaSet, Job, StatefulSet,
// DaemonSet or RayCluster. Pods of a controller that is not audited (a
// home-grown operator, a node's mirror pods) are judged.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/report_model.h"
#include "cluster/discovery.h"

namespace gpuguard::audit {

struct AuditedResource {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;  // tried in order until discovery picks the preferred one
  std::string plural;                 // "deployments"
  std::string kind;                   // "Deployment"; "" until discovery names it (an extra resource)
  bool namespaced = true;

  // "deployments.apps", "pods": kubectl's name, the metrics' label.
  std::string name() const { return group.empty() ? plural : plural + "." + group; }
};

// The fixed table, core and apps first.
const std::vector<AuditedResource>& auditedResources();

// The table plus the extra resources ("plural.group", a CRD the chart's RBAC
// grants), without duplicates. Throws std::invalid_argument naming a bad entry.
std::vector<AuditedResource> withExtraResources(const std::vector<std::string>& extra);

// The resources as the API server serves them (discovery): each one served
// speaks the version discovery picked (the group's preferred one) first, and
// takes its kind and scope from it (an extra resource learns them only so).
// A resource not served keeps its table versions (listed, 404, looked for
// again later); so does one whose group's discovery failed.
std::vector<AuditedResource> resolveServed(std::vector<AuditedResource> resources, const cluster::Discovery& discovery);
// The groups of `resources`, once each ("" for core).
std::vector<std::string> groupsOf(const std::vector<AuditedResource>& resources);

// "trainers.example.com" -> {group example.com, plural trainers}; nullopt
// when it is not a lowercase plural and a DNS group.
std::optional<AuditedResource> parseExtraResource(std::string_view text);

// The table as `gpuguard-webhook --print-audit-resources` prints it, one
// resource a line: "<group or core> <plural> <Namespaced|Cluster>".
std::string printAuditedResources(const std::vector<AuditedResource>& resources);

// True when `object` is controlled by an object of an audited kind (the skip rule).
bool controlledByAuditedOwner(const nlohmann::json& object, const std::vector<AuditedResource>& resources);

// The object's reference (apiVersion, kind, namespace, name, uid) as a report names it.
AuditedObject auditedObject(const nlohmann::json& object);

}  // namespace gpuguard::audit
