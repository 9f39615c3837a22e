#include "cluster/api_client.h"

namespace gpuguard::cluster {

namespace {

using nlohmann::json;

// The message of a metav1.Status body, else the start of the body.
std::string statusMessage(const HttpResponse& r) {
  if (!r.error.empty()) return r.error;
  const json body = json::parse(r.body, nullptr, false);
  if (body.is_object() && body.contains("message") && body["message"].is_string()) return body["message"];
  return "HTTP " + std::to_string(r.status) + (r.body.empty() ? "" : ": " + r.body.substr(0, 200));
}

}  // namespace

std::string Resource::path(const std::string& version) const {
  return (group.empty() ? "/api/" + version : "/apis/" + group + "/" + version) + "/" + plural;
}

const std::vector<Resource>& factResources() {
  static const std::vector<Resource> kResources = {
      {"", {"v1"}, "nodes", "Node"},
      {"", {"v1"}, "namespaces", "Namespace"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "deviceclasses", "DeviceClass"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceclaimtemplates", "ResourceClaimTemplate"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceclaims", "ResourceClaim"},
      {"karpenter.sh", {"v1"}, "nodepools", "NodePool"},
  };
  return kResources;
}

std::string queryEscape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

ApiClient::ApiClient(ClientConfig config) : config_(config), authenticator_(std::move(config)) {}

std::shared_ptr<HttpClient> ApiClient::clientFor(const Authenticator::Current& credential) {
  std::lock_guard lock(mutex_);
  if (!client_ || clientCertPem_ != credential.clientCertPem) {
    TlsSettings tls = config_.tls;
    tls.clientCertPem = credential.clientCertPem;
    tls.clientKeyPem = credential.clientKeyPem;
    client_ = std::make_shared<HttpClient>(config_.url, std::move(tls));
    clientCertPem_ = credential.clientCertPem;
  }
  return client_;
}

HttpResponse ApiClient::get(HttpRequest request) {
  const std::size_t baseHeaders = request.headers.size();
  for (int attempt = 0;; ++attempt) {
    const Authenticator::Current credential = authenticator_.current();
    if (!credential.error.empty()) {
      HttpResponse failed;
      failed.error = credential.error;
      return failed;
    }
    request.headers.resize(baseHeaders);
    if (!credential.authorization.empty()) request.headers.emplace_back("Authorization", credential.authorization);
    HttpResponse response = clientFor(credential)->get(request);
    if (response.status != 401 || attempt > 0 || !config_.credentials.exec) return response;
    authenticator_.unauthorized();  // the plugin's credential was revoked or expired early
  }
}

ListResult ApiClient::list(const Resource& resource, const std::function<void(json&&)>& onItem, std::size_t pageSize,
                           const std::atomic<bool>* cancel) {
  ListResult result;
  for (const std::string& version : resource.versions) {
    result = ListResult{};
    result.version = version;
    std::string continueToken;
    do {
      HttpRequest request;
      request.pathAndQuery = resource.path(version) + "?limit=" + std::to_string(pageSize);
      if (!continueToken.empty()) request.pathAndQuery += "&continue=" + queryEscape(continueToken);
      request.cancel = cancel;
      request.cancelCheck = cancelCheck_;
      request.idleTimeout = std::chrono::seconds(60);
      HttpResponse page = get(std::move(request));
      result.status = page.status;
      if (!page.ok()) {
        result.error = statusMessage(page);
        break;
      }
      json body = json::parse(page.body, nullptr, false);
      page.body = std::string();
      if (body.is_discarded() || !body.is_object() || !body.contains("items") || !body["items"].is_array()) {
        result.error = "the list of " + resource.name() + " is not a JSON list";
        break;
      }
      for (json& item : body["items"]) {
        onItem(std::move(item));
        ++result.items;
      }
      result.resourceVersion = resourceVersionOf(body);
      const json& meta = body.value("metadata", json::object());
      continueToken = meta.is_object() && meta.contains("continue") && meta["continue"].is_string()
                          ? meta["continue"].get<std::string>() : "";
    } while (!continueToken.empty());
    if (result.status != 404) return result;  // 404: this version is not served, try the next
  }
  return result;
}

WatchResult ApiClient::watch(const Resource& resource, const std::string& version, const std::string& resourceVersion,
                             const std::function<bool(WatchEvent&&)>& onEvent, int timeoutSeconds,
                             const std::atomic<bool>* cancel, const std::function<void(int status)>& onOpen) {
  WatchResult result;
  result.resourceVersion = resourceVersion;
  WatchStreamParser parser;
  std::string parseError;
  auto handle = [&](WatchEvent&& event) {
    ++result.events;
    if (event.type == WatchEvent::Type::Error) {
      result.errorEventCode = statusCode(event.object);
      if (result.errorEventCode == 0) result.errorEventCode = 500;
      result.error = "watch ERROR event: " + event.object.value("message", event.object.dump());
      return false;
    }
    if (std::string rv = resourceVersionOf(event.object); !rv.empty()) result.resourceVersion = std::move(rv);
    return onEvent(std::move(event));
  };
  HttpRequest request;
  request.pathAndQuery = resource.path(version) + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                         queryEscape(resourceVersion) + "&timeoutSeconds=" + std::to_string(timeoutSeconds);
  request.cancel = cancel;
  request.cancelCheck = cancelCheck_;
  request.onStatus = onOpen;
  // Bookmarks come about once a minute; silence longer than the watch's own timeout is a dead peer.
  request.idleTimeout = std::chrono::seconds(timeoutSeconds + 30);
  bool stopped = false;
  request.onBody = [&](std::string_view bytes) {
    parseError = parser.feed(bytes, [&](WatchEvent&& e) { return (stopped = !handle(std::move(e))) == false; });
    return parseError.empty() && !stopped;
  };
  const HttpResponse response = get(std::move(request));
  result.status = response.status;
  if (!parseError.empty()) {
    result.error = parseError;
  } else if (result.error.empty() && !(response.ok() || stopped)) {
    result.error = statusMessage(response);
  }
  return result;
}

}  // namespace gpuguard::cluster
