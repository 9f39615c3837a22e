// Which resources the API server serves, and in which version: the legacy
// discovery documents (/api/v1, /apis, /apis/GROUP/VERSION), as kubectl and
// client-go's discovery client read them. The background audit asks for the
// groups it audits; a CRD installed later shows up at the next discovery.
// Needs no RBAC grant: every authenticated user may read discovery
// (ClusterRole system:discovery).
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/api_client.h"

namespace gpuguard::cluster {

struct ServedResource {
  std::string group;                // "" for the core group
  std::string version;              // the version to speak: the group's preferred one when it serves the resource
  std::string plural;               // "deployments"
  std::string kind;                 // "Deployment"
  bool namespaced = false;
  std::vector<std::string> verbs;   // "get", "list", "watch", ...

  bool has(const std::string& verb) const;
  // The resource as ApiClient takes it (the one version above).
  Resource resource() const { return Resource{group, {version}, plural, kind, namespaced}; }
};

struct Discovery {
  std::vector<ServedResource> resources;      // one per (group, plural); no subresources ("pods/status")
  std::map<std::string, std::string> errors;  // group ("" core) -> why its documents could not be read

  // The served resource, or null: not served (or its group's discovery failed: see errors).
  const ServedResource* find(const std::string& group, const std::string& plural) const;
};

// A group's versions, preferred first, from one entry of /apis (APIGroup).
struct GroupVersions {
  std::string group;
  std::vector<std::string> versions;
};

// /apis (APIGroupList) -> the groups with their versions, preferred first.
// Throws std::runtime_error naming what is malformed.
std::vector<GroupVersions> parseGroupList(const nlohmann::json& document);

// /api/v1 or /apis/G/V (APIResourceList) -> the resources it serves (not subresources).
// Throws std::runtime_error naming what is malformed.
std::vector<ServedResource> parseResourceList(const nlohmann::json& document, const std::string& group,
                                              const std::string& version);

// Reads discovery for `groups` ("" = core; empty list = every group). Each
// resource gets the first version, preferred first, that serves it. A group
// the server does not serve is absent without an error; a group whose
// documents fail (403, 500, not JSON) is in `errors` and none of its
// resources is listed.
Discovery discover(ApiClient& api, const std::vector<std::string>& groups, const std::atomic<bool>* cancel = nullptr);

}  // namespace gpuguard::cluster
