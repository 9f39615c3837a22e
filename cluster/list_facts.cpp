#include "cluster/list_facts.h"

namespace gpuguard::cluster {

ListedFacts listClusterFacts(const ClientConfig& config, const std::vector<Resource>& resources) {
  ListedFacts out;
  ApiClient api(config);
  ClusterFactsBuilder builder;
  builder.setSource("cluster " + config.server);
  std::size_t refused = 0;
  for (const Resource& resource : resources) {
    const ListResult r = api.list(resource, [&](nlohmann::json&& item) {
      item["apiVersion"] = resource.group.empty() ? resource.versions.front() : resource.group + "/" + resource.versions.front();
      item["kind"] = resource.kind;
      builder.add(item);
    });
    if (r.error.empty()) {
      for (FactKind kind : kAllFactKinds) {
        if (factKindName(kind) == resource.plural) builder.markListed(kind);
      }
      continue;
    }
    if (r.status == 0) {  // a transport error: nothing else will answer either
      out.error = "cannot reach the API server " + config.server + " (" + config.describe + "): " + r.error;
      return out;
    }
    if (r.status == 404) {
      out.notes.push_back(resource.name() + ": not served by the API server (judged as absent)");
    } else if (r.status == 403) {
      ++refused;
      out.warnings.push_back(resource.name() + ": " + r.error + " (judged without " + resource.name() + ")");
    } else {
      out.error = "the API server " + config.server + " answered " + std::to_string(r.status) + " to the list of " +
                  resource.name() + ": " + r.error;
      return out;
    }
  }
  if (refused == resources.size()) {
    out.error = "the API server " + config.server + " refused every list (" + config.describe + ")";
    return out;
  }
  out.facts = builder.build();
  return out;
}

}  // namespace gpuguard::cluster
