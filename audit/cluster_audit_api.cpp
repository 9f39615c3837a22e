#include "audit/cluster_audit_api.h"

namespace gpuguard::audit {

namespace {

constexpr std::size_t kPageSize = 100;

ApiAnswer answerOf(cluster::ApiResult&& r) { return ApiAnswer{r.status, std::move(r.body), std::move(r.error)}; }

std::string stringAt(const nlohmann::json& object, const char* key) {
  const nlohmann::json meta = object.value("metadata", nlohmann::json::object());
  return meta.is_object() && meta.value(key, nlohmann::json()).is_string() ? meta[key].get<std::string>() : "";
}

}  // namespace

cluster::Resource clusterResource(const AuditedResource& resource) {
  return cluster::Resource{resource.group, resource.versions, resource.plural, resource.kind, resource.namespaced};
}

ClusterAuditApi::ClusterAuditApi(cluster::ClientConfig config, int watchTimeoutSeconds, std::chrono::milliseconds cancelCheck)
    : api_(std::move(config)), watchTimeoutSeconds_(watchTimeoutSeconds) {
  api_.setCancelCheck(cancelCheck);
}

cluster::ListResult ClusterAuditApi::list(const AuditedResource& resource, const std::string& labelSelector,
                                          const std::function<void(nlohmann::json&&)>& onItem,
                                          const std::atomic<bool>* cancel) {
  cluster::ListOptions options;
  options.labelSelector = labelSelector;
  options.pageSize = kPageSize;
  return api_.list(clusterResource(resource), onItem, options, cancel);
}

cluster::WatchResult ClusterAuditApi::watch(const AuditedResource& resource, const std::string& version,
                                            const std::string& resourceVersion,
                                            const std::function<bool(cluster::WatchEvent&&)>& onEvent,
                                            const std::atomic<bool>* cancel) {
  return api_.watch(clusterResource(resource), version, cluster::ListOptions{}, resourceVersion, onEvent,
                    watchTimeoutSeconds_, cancel);
}

ApiAnswer ClusterAuditApi::get(const AuditedResource& resource, const std::string& version, const std::string& ns,
                               const std::string& name) {
  return answerOf(api_.getObject(clusterResource(resource), version, ns, name));
}

ApiAnswer ClusterAuditApi::apply(const AuditedResource& resource, const nlohmann::json& report) {
  return answerOf(api_.apply(clusterResource(resource), resource.versions.front(), stringAt(report, "namespace"),
                             stringAt(report, "name"), report));
}

ApiAnswer ClusterAuditApi::remove(const AuditedResource& resource, const std::string& ns, const std::string& name) {
  return answerOf(api_.remove(clusterResource(resource), resource.versions.front(), ns, name, ""));
}

}  // namespace gpuguard::audit
