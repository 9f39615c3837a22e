// Requests to the Kubernetes API server with the configured credential:
// paginated lists (limit/continue) handed over item by item, watches handed
// over event by event, and one object's GET, create (POST), replace (PUT),
// server-side apply (PATCH) and delete. A 401 runs the exec plugin again and
// retries once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/client_config.h"
#include "cluster/credentials.h"
#include "cluster/http_client.h"
#include "cluster/watch_events.h"

namespace gpuguard::cluster {

// A resource of the API; list() tries the versions in order (a cluster before
// DRA's v1 serves v1beta2 or v1beta1).
struct Resource {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;
  std::string plural;                 // "nodes"
  std::string kind;                   // "Node"
  bool namespaced = false;            // objects live in a namespace ("pods"), or not ("nodes")

  // "nodes", "deviceclasses.resource.k8s.io": kubectl's name, the metrics' label.
  std::string name() const { return group.empty() ? plural : plural + "." + group; }
  // "v1", "apps/v1": the apiVersion of its objects.
  std::string apiVersion(const std::string& version) const { return group.empty() ? version : group + "/" + version; }
  // The collection: "/api/v1/nodes", "/apis/apps/v1/deployments" (all
  // namespaces), "/apis/apps/v1/namespaces/ml/deployments" (one namespace:
  // `namespaceName` is used only when the resource is namespaced).
  std::string path(const std::string& version, const std::string& namespaceName = "") const;
  // One object: the collection's path + "/" + name.
  std::string objectPath(const std::string& version, const std::string& namespaceName, const std::string& name) const;
};

// What a list or watch selects. Empty fields select everything.
struct ListOptions {
  std::string namespaceName;   // one namespace of a namespaced resource; "": all
  std::string labelSelector;   // "app.kubernetes.io/managed-by=gpuguard"
  std::string fieldSelector;   // "status.phase=Pending"
  std::size_t pageSize = 500;  // limit= of each page (lists only)
};

// The answer to a request on one object.
struct ApiResult {
  int status = 0;              // the HTTP status; 0: no answer (see error)
  nlohmann::json body;         // the answer parsed: the object on success, else the metav1.Status (or null)
  std::string error;           // "" on 2xx; else the Status's message, or the transport's error
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  bool notFound() const { return status == 404; }
  bool conflict() const { return status == 409; }  // AlreadyExists, a stale resourceVersion, a failed precondition
};

// What the facts read: nodes, namespaces, deviceclasses, resourceclaimtemplates,
// resourceclaims, resourceslices (resource.k8s.io), nodepools (karpenter.sh) and
// runtimeclasses (node.k8s.io), the exact
// list the ClusterRole grants get/list/watch on.
const std::vector<Resource>& factResources();

struct ListResult {
  int status = 0;                // the HTTP status of the failing page, 200 when all pages came
  std::string error;             // "" when every page came
  std::string resourceVersion;   // the list's, to watch from
  std::string version;           // the API version that answered
  std::size_t items = 0;
};

struct WatchResult {
  int status = 0;                // 200: the stream ran (and ended); else the HTTP status (410: relist)
  std::string error;             // transport error, or a malformed event line
  int errorEventCode = 0;        // an ERROR event's Status code (410: relist)
  std::string resourceVersion;   // the last seen, to resume from
  std::size_t events = 0;
  bool silent = false;           // nothing arrived for the idle timeout: a dead connection
};

class ApiClient {
 public:
  explicit ApiClient(ClientConfig config);

  const ClientConfig& config() const { return config_; }

  static constexpr std::size_t kMaxObjectBytes = 16u << 20;  // one object's answer (etcd holds <= 1.5 MiB)
  static constexpr const char* kFieldManager = "gpuguard-audit";

  // One request with the credential (a 401 re-runs the exec plugin and retries once).
  HttpResponse send(std::string_view method, HttpRequest request, std::string_view body = {},
                    std::string_view contentType = {});
  HttpResponse get(HttpRequest request) { return send("GET", std::move(request)); }

  // Every item of `resource`, page by page, each handed to `onItem` as soon as
  // its page is parsed: no whole list is held. `onItem` may block (back-pressure).
  ListResult list(const Resource& resource, const std::function<void(nlohmann::json&&)>& onItem,
                  const ListOptions& options, const std::atomic<bool>* cancel = nullptr);
  ListResult list(const Resource& resource, const std::function<void(nlohmann::json&&)>& onItem,
                  std::size_t pageSize = 500, const std::atomic<bool>* cancel = nullptr) {
    ListOptions options;
    options.pageSize = pageSize;
    return list(resource, onItem, options, cancel);
  }
  // How often a request waiting on the server looks at its cancel flag.
  void setCancelCheck(std::chrono::milliseconds every) { cancelCheck_ = every; }
  // How long a request on one object waits for each answer byte (30 s; the
  // leader election sets it well within its renew deadline).
  void setObjectTimeout(std::chrono::milliseconds timeout) { objectTimeout_ = timeout; }
  // How long a watch may deliver nothing before it counts as dead (silent);
  // 0: its timeoutSeconds + kWatchEndMargin, by when a live server ended it.
  void setWatchIdleTimeout(std::chrono::milliseconds timeout) { watchIdleTimeout_ = timeout; }
  static constexpr std::chrono::seconds kWatchEndMargin{15};

  // A watch from `resourceVersion` with bookmarks, ended by the server after
  // `timeoutSeconds`, by `cancel`, or by `onEvent` returning false.
  WatchResult watch(const Resource& resource, const std::string& version, const std::string& resourceVersion,
                    const std::function<bool(WatchEvent&&)>& onEvent, int timeoutSeconds,
                    const std::atomic<bool>* cancel, const std::function<void(int status)>& onOpen = {}) {
    return watch(resource, version, ListOptions{}, resourceVersion, onEvent, timeoutSeconds, cancel, onOpen);
  }
  // The same, of what `options` selects (its pageSize is not used).
  WatchResult watch(const Resource& resource, const std::string& version, const ListOptions& options,
                    const std::string& resourceVersion, const std::function<bool(WatchEvent&&)>& onEvent,
                    int timeoutSeconds, const std::atomic<bool>* cancel,
                    const std::function<void(int status)>& onOpen = {});

  // A GET of any path ("/apis", "/apis/apps/v1") answered as one JSON object.
  ApiResult getPath(std::string pathAndQuery, const std::atomic<bool>* cancel = nullptr) {
    return call("GET", std::move(pathAndQuery), {}, {}, cancel);
  }

  // One object. `namespaceName` is "" for a cluster-scoped resource; `version`
  // is the one to speak (discovery's preferred version). Every call answers an
  // ApiResult: 404 and 409 are statuses to act on, not exceptions.
  ApiResult getObject(const Resource& resource, const std::string& version, const std::string& namespaceName,
                      const std::string& name, const std::atomic<bool>* cancel = nullptr);
  // POST `object` to its collection (409: it exists).
  ApiResult create(const Resource& resource, const std::string& version, const std::string& namespaceName,
                   const nlohmann::json& object);
  // PUT `object` (with metadata.resourceVersion: 409 when the stored one moved on).
  ApiResult replace(const Resource& resource, const std::string& version, const std::string& namespaceName,
                    const std::string& name, const nlohmann::json& object);
  // Server-side apply: PATCH ?fieldManager=...&force=true with
  // application/apply-patch+yaml (JSON is YAML). Creates the object when
  // absent; `object` holds apiVersion, kind, metadata.name (and namespace).
  ApiResult apply(const Resource& resource, const std::string& version, const std::string& namespaceName,
                  const std::string& name, const nlohmann::json& object, const std::string& fieldManager = kFieldManager);
  // DELETE, with preconditions.uid when `uid` is not empty (409: the name now
  // holds another object; 404: already gone).
  ApiResult remove(const Resource& resource, const std::string& version, const std::string& namespaceName,
                   const std::string& name, const std::string& uid);

 private:
  ApiResult call(std::string_view method, std::string pathAndQuery, std::string_view body,
                 std::string_view contentType, const std::atomic<bool>* cancel = nullptr);
  std::shared_ptr<HttpClient> clientFor(const Authenticator::Current& credential);

  ClientConfig config_;
  Authenticator authenticator_;
  std::mutex mutex_;
  std::shared_ptr<HttpClient> client_;
  std::string clientCertPem_;  // the certificate client_ was built with
  std::chrono::milliseconds cancelCheck_{250};
  std::chrono::milliseconds objectTimeout_{std::chrono::seconds(30)};
  std::chrono::milliseconds watchIdleTimeout_{0};
};

// "limit=500&continue=..." with the value percent-encoded.
std::string queryEscape(std::string_view value);

// The message of a metav1.Status answer, else the transport error or the
// start of the body: what a log line says about a failed request.
std::string statusMessage(const HttpResponse& response);

}  // namespace gpuguard::cluster
