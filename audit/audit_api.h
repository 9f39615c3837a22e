// What the background audit needs of the Kubernetes API server, and nothing
// more: lists and watches of the audited resources, one object's GET (an
// item whose body the queue dropped), and its reports' writes. The real one
// is a thin adapter over cluster::ApiClient (audit/cluster_audit_api.h);
// the tests drive the auditor with a fake.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/audited_resources.h"
#include "cluster/api_client.h"
#include "cluster/watch_events.h"

namespace gpuguard::audit {

// The answer to a request on one object.
struct ApiAnswer {
  int status = 0;         // HTTP status; 0: no answer
  nlohmann::json body;    // the object, or the metav1.Status
  std::string error;      // "" on 2xx
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

class AuditApi {
 public:
  virtual ~AuditApi() = default;

  // Every object of `resource` (all namespaces) that `labelSelector` selects,
  // page by page, each handed to `onItem` (which may block: back-pressure).
  // ListResult::version: the API version that answered.
  virtual cluster::ListResult list(const AuditedResource& resource, const std::string& labelSelector,
                                   const std::function<void(nlohmann::json&&)>& onItem,
                                   const std::atomic<bool>* cancel) = 0;
  // A watch from `resourceVersion` with bookmarks, until the server ends it,
  // `cancel` is set or `onEvent` returns false.
  virtual cluster::WatchResult watch(const AuditedResource& resource, const std::string& version,
                                     const std::string& resourceVersion,
                                     const std::function<bool(cluster::WatchEvent&&)>& onEvent,
                                     const std::atomic<bool>* cancel) = 0;
  virtual ApiAnswer get(const AuditedResource& resource, const std::string& version, const std::string& ns,
                        const std::string& name) = 0;
  // Server-side apply of a report (creates it when absent).
  virtual ApiAnswer apply(const AuditedResource& resource, const nlohmann::json& report) = 0;
  virtual ApiAnswer remove(const AuditedResource& resource, const std::string& ns, const std::string& name) = 0;
};

}  // namespace gpuguard::audit
