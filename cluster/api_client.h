// GET requests to the Kubernetes API server with the configured credential:
// paginated lists (limit/continue) handed over item by item, and watches
// handed over event by event. A 401 runs the exec plugin again and retries once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/client_config.h"
#include "cluster/credentials.h"
#include "cluster/http_client.h"
#include "cluster/watch_events.h"

namespace gpuguard::cluster {

// A resource the facts are read from; the versions are tried in order (a
// cluster before DRA's v1 serves v1beta2 or v1beta1).
struct Resource {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;
  std::string plural;                 // "nodes"
  std::string kind;                   // "Node"

  // "nodes", "deviceclasses.resource.k8s.io": kubectl's name, the metrics' label.
  std::string name() const { return group.empty() ? plural : plural + "." + group; }
  // "/api/v1/nodes", "/apis/resource.k8s.io/v1/deviceclasses" (all namespaces).
  std::string path(const std::string& version) const;
};

// What the facts read: nodes, namespaces, deviceclasses, resourceclaimtemplates,
// resourceclaims (resource.k8s.io) and nodepools (karpenter.sh), the exact
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
};

class ApiClient {
 public:
  explicit ApiClient(ClientConfig config);

  const ClientConfig& config() const { return config_; }

  // One GET with the credential (a 401 re-runs the exec plugin and retries once).
  HttpResponse get(HttpRequest request);

  // Every item of `resource`, page by page (`pageSize` per page), each handed
  // to `onItem` as soon as its page is parsed: no whole list is held.
  ListResult list(const Resource& resource, const std::function<void(nlohmann::json&&)>& onItem,
                  std::size_t pageSize = 500, const std::atomic<bool>* cancel = nullptr);
  // How often a request waiting on the server looks at its cancel flag.
  void setCancelCheck(std::chrono::milliseconds every) { cancelCheck_ = every; }

  // A watch from `resourceVersion` with bookmarks, ended by the server after
  // `timeoutSeconds`, by `cancel`, or by `onEvent` returning false.
  WatchResult watch(const Resource& resource, const std::string& version, const std::string& resourceVersion,
                    const std::function<bool(WatchEvent&&)>& onEvent, int timeoutSeconds,
                    const std::atomic<bool>* cancel, const std::function<void(int status)>& onOpen = {});

 private:
  std::shared_ptr<HttpClient> clientFor(const Authenticator::Current& credential);

  ClientConfig config_;
  Authenticator authenticator_;
  std::mutex mutex_;
  std::shared_ptr<HttpClient> client_;
  std::string clientCertPem_;  // the certificate client_ was built with
  std::chrono::milliseconds cancelCheck_{250};
};

// "limit=500&continue=..." with the value percent-encoded.
std::string queryEscape(std::string_view value);

}  // namespace gpuguard::cluster
