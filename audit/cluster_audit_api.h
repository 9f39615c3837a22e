// The auditor's view of the API server (audit/audit_api.h) over the cluster
// client (cluster/api_client.h): lists of 100 objects a page (workload
// objects are larger than nodes), bookmarked watches the server ends every
// `watchTimeoutSeconds`, and the reports written by server-side apply
// (fieldManager gpuguard-audit) and deleted by name.
#pragma once

#include <chrono>

#include "audit/audit_api.h"
#include "cluster/api_client.h"
#include "cluster/client_config.h"

namespace gpuguard::audit {

class ClusterAuditApi final : public AuditApi {
 public:
  explicit ClusterAuditApi(cluster::ClientConfig config, int watchTimeoutSeconds = 300,
                           std::chrono::milliseconds cancelCheck = std::chrono::milliseconds(250));

  cluster::ListResult list(const AuditedResource& resource, const std::string& labelSelector,
                           const std::function<void(nlohmann::json&&)>& onItem, const std::atomic<bool>* cancel) override;
  cluster::WatchResult watch(const AuditedResource& resource, const std::string& version,
                             const std::string& resourceVersion,
                             const std::function<bool(cluster::WatchEvent&&)>& onEvent,
                             const std::atomic<bool>* cancel) override;
  ApiAnswer get(const AuditedResource& resource, const std::string& version, const std::string& ns,
                const std::string& name) override;
  ApiAnswer apply(const AuditedResource& resource, const nlohmann::json& report) override;
  ApiAnswer remove(const AuditedResource& resource, const std::string& ns, const std::string& name) override;
  // The client itself (discovery).
  cluster::ApiClient& client() { return api_; }

 private:
  cluster::ApiClient api_;
  int watchTimeoutSeconds_;
};

// The cluster client's name for a resource of the audit.
cluster::Resource clusterResource(const AuditedResource& resource);

}  // namespace gpuguard::audit
