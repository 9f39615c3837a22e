// One list of every fact resource, no watch: the cluster's facts for
// gpuguard-lint --cluster.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/api_client.h"
#include "cluster/client_config.h"
#include "rules/cluster_facts.h"

namespace gpuguard::cluster {

struct ListedFacts {
  std::shared_ptr<const ClusterFacts> facts;  // null when `error` is set
  std::vector<std::string> notes;              // a resource not served (no Karpenter, no DRA)
  std::vector<std::string> warnings;           // a resource refused (RBAC): judged without it
  std::string error;                           // the API server cannot be reached, or refuses the credentials
};

ListedFacts listClusterFacts(const ClientConfig& config, const std::vector<Resource>& resources = factResources());

}  // namespace gpuguard::cluster
