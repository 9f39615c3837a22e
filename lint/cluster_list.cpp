#include "lint/cluster_list.h"

#include "cluster/list_facts.h"

namespace gpuguard::lint {

std::optional<cluster::ClientConfig> clientConfigFor(const Options& o, std::ostream& err) {
  std::optional<cluster::ClientConfig> config;
  try {
    config = cluster::findClientConfig({o.kubeconfig, o.kubeContext}, cluster::Environment::process());
  } catch (const cluster::ConfigError& e) {
    err << "gpuguard-lint: --cluster: " << e.what() << "\n";
    return std::nullopt;
  }
  if (!config) {
    err << "gpuguard-lint: --cluster: no kubeconfig found (--kubeconfig FILE, $KUBECONFIG, ~/.kube/config) "
           "and not running in a pod\n";
  }
  return config;
}

std::shared_ptr<const ClusterFacts> listClusterFactsFor(const cluster::ClientConfig& config, std::ostream& err) {
  cluster::ListedFacts listed = cluster::listClusterFacts(config);
  for (const std::string& note : listed.notes) err << "gpuguard-lint: --cluster: note: " << note << "\n";
  for (const std::string& warning : listed.warnings) err << "gpuguard-lint: --cluster: warning: " << warning << "\n";
  if (!listed.error.empty()) {
    err << "gpuguard-lint: --cluster: " << listed.error << "\n";
    return nullptr;
  }
  return listed.facts;
}

std::shared_ptr<const ClusterFacts> listClusterFactsFor(const Options& o, std::ostream& err) {
  const std::optional<cluster::ClientConfig> config = clientConfigFor(o, err);
  return config ? listClusterFactsFor(*config, err) : nullptr;
}

}  // namespace gpuguard::lint
