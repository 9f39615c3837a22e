// gpuguard-lint --cluster [--kubeconfig FILE] [--context NAME]: the cluster's
// facts from one list of each resource through the Kubernetes API (no watch),
// found as kubectl finds its cluster (cluster/client_config.h).
#pragma once

#include <memory>
#include <optional>
#include <ostream>

#include "cluster/client_config.h"

#include "lint/options.h"
#include "rules/cluster_facts.h"

namespace gpuguard::lint {

// The facts, or null with the reason on `err` (no configuration, a malformed
// kubeconfig, an API server that cannot be reached or refuses the
// credentials): the caller exits 2. A resource the API server does not serve
// is a note, one RBAC refuses a warning; both go to `err`.
std::shared_ptr<const ClusterFacts> listClusterFactsFor(const Options& o, std::ostream& err);
std::shared_ptr<const ClusterFacts> listClusterFactsFor(const cluster::ClientConfig& config, std::ostream& err);

// The cluster --kubeconfig/--context (or the environment) names, or nullopt
// with the reason on `err`.
std::optional<cluster::ClientConfig> clientConfigFor(const Options& o, std::ostream& err);

}  // namespace gpuguard::lint
