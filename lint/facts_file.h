// gpuguard-lint --facts FILE: the cluster facts (rules/cluster_facts.h) of a
// snapshot file, `kubectl get nodes,nodepools,deviceclasses,resourceclaimtemplates,
// resourceclaims,namespaces -A -o json` (JSON or YAML; a List, or one object).
// The same file works for --nodes, which reads the Nodes and DeviceClasses of
// it for the Pending replay.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"

namespace gpuguard::lint {

// kubectl -o json output (-o yaml works too). A YAML stream of several
// documents (objects or Lists) is read as one List of all their objects.
// false, with the reason in `error`, when the file cannot be read or parsed.
bool readKubectlDocument(const std::string& path, nlohmann::json& doc, std::string& error);

// The facts of `doc`. Nodes are always "listed" (a snapshot with none has no
// nodes); the other kinds when the file holds at least one object of the kind.
std::shared_ptr<const ClusterFacts> factsOfSnapshot(const nlohmann::json& doc, const std::string& source,
                                                    std::vector<std::string>& warnings);

// Reads FILE; nullptr, with the reason on `err`, when it cannot be read or
// holds no Node, NodePool, Namespace or DRA object at all.
std::shared_ptr<const ClusterFacts> loadFactsFile(const std::string& path, std::ostream& err);

}  // namespace gpuguard::lint
