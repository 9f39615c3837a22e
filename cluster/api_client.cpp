#include "cluster/api_client.h"

namespace gpuguard::cluster {

using nlohmann::json;

namespace {

// "&labelSelector=...&fieldSelector=..." (each only when set).
std::string selectorQuery(const ListOptions& options) {
  std::string query;
  if (!options.labelSelector.empty()) query += "&labelSelector=" + queryEscape(options.labelSelector);
  if (!options.fieldSelector.empty()) query += "&fieldSelector=" + queryEscape(options.fieldSelector);
  return query;
}

// Serialized without throwing: a string that is not UTF-8 is written with U+FFFD.
std::string jsonText(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string statusMessage(const HttpResponse& r) {
  if (!r.error.empty()) return r.error;
  const json body = json::parse(r.body, nullptr, false);
  if (body.is_object() && body.contains("message") && body["message"].is_string()) return body["message"];
  return "HTTP " + std::to_string(r.status) + (r.body.empty() ? "" : ": " + r.body.substr(0, 200));
}

std::string Resource::path(const std::string& version, const std::string& namespaceName) const {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !namespaceName.empty()) p += "/namespaces/" + queryEscape(namespaceName);
  return p + "/" + plural;
}

std::string Resource::objectPath(const std::string& version, const std::string& namespaceName,
                                 const std::string& name) const {
  return path(version, namespaceName) + "/" + queryEscape(name);
}

const std::vector<Resource>& factResources() {
  static const std::vector<Resource> kResources = {
      {"", {"v1"}, "nodes", "Node"},
      {"", {"v1"}, "namespaces", "Namespace"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "deviceclasses", "DeviceClass"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceclaimtemplates", "ResourceClaimTemplate"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceclaims", "ResourceClaim"},
      {"resource.k8s.io", {"v1", "v1beta2", "v1beta1"}, "resourceslices", "ResourceSlice"},
      {"karpenter.sh", {"v1"}, "nodepools", "NodePool"},
      {"node.k8s.io", {"v1"}, "runtimeclasses", "RuntimeClass"},
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

HttpResponse ApiClient::send(std::string_view method, HttpRequest request, std::string_view body,
                             std::string_view contentType) {
  const std::size_t baseHeaders = request.headers.size();
  for (int attempt = 0;; ++attempt) {
    const Authenticator::Current credential = authenticator_.current(request.cancel);
    if (!credential.error.empty()) {
      HttpResponse failed;
      failed.error = credential.error;
      return failed;
    }
    request.headers.resize(baseHeaders);
    if (!credential.authorization.empty()) request.headers.emplace_back("Authorization", credential.authorization);
    HttpResponse response = clientFor(credential)->send(method, request, body, contentType);
    if (response.status != 401 || attempt > 0 || !config_.credentials.exec) return response;
    authenticator_.unauthorized();  // the plugin's credential was revoked or expired early
  }
}

ListResult ApiClient::list(const Resource& resource, const std::function<void(json&&)>& onItem,
                           const ListOptions& options, const std::atomic<bool>* cancel) {
  ListResult result;
  for (const std::string& version : resource.versions) {
    result = ListResult{};
    result.version = version;
    std::string continueToken;
    do {
      HttpRequest request;
      request.pathAndQuery = resource.path(version, options.namespaceName) +
                             "?limit=" + std::to_string(options.pageSize) + selectorQuery(options);
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

WatchResult ApiClient::watch(const Resource& resource, const std::string& version, const ListOptions& options,
                             const std::string& resourceVersion, const std::function<bool(WatchEvent&&)>& onEvent,
                             int timeoutSeconds, const std::atomic<bool>* cancel,
                             const std::function<void(int status)>& onOpen) {
  WatchResult result;
  result.resourceVersion = resourceVersion;
  WatchStreamParser parser;
  std::string parseError;
  auto handle = [&](WatchEvent&& event) {
    ++result.events;
    if (event.type == WatchEvent::Type::Error) {
      result.errorEventCode = statusCode(event.object);
      if (result.errorEventCode == 0) result.errorEventCode = 500;
      const json* message = event.object.is_object() && event.object.contains("message") ? &event.object["message"] : nullptr;
      result.error = "watch ERROR event: " + (message != nullptr && message->is_string() ? message->get<std::string>()
                                                                                       : jsonText(event.object));
      return false;
    }
    if (std::string rv = resourceVersionOf(event.object); !rv.empty()) result.resourceVersion = std::move(rv);
    return onEvent(std::move(event));
  };
  HttpRequest request;
  request.pathAndQuery = resource.path(version, options.namespaceName) +
                         "?watch=1&allowWatchBookmarks=true&resourceVersion=" + queryEscape(resourceVersion) +
                         "&timeoutSeconds=" + std::to_string(timeoutSeconds) + selectorQuery(options);
  request.cancel = cancel;
  request.cancelCheck = cancelCheck_;
  request.onStatus = onOpen;
  // A live server ends the watch at timeoutSeconds (after a last BOOKMARK): silence
  // past that is a connection that died without FIN or RST (a partition, a NAT that
  // forgot the flow), which TCP alone would notice only after many minutes.
  request.idleTimeout = watchIdleTimeout_.count() > 0 ? watchIdleTimeout_
                                                       : std::chrono::seconds(timeoutSeconds) + kWatchEndMargin;
  bool stopped = false;
  request.onBody = [&](std::string_view bytes) {
    parseError = parser.feed(bytes, [&](WatchEvent&& e) { return (stopped = !handle(std::move(e))) == false; });
    return parseError.empty() && !stopped;
  };
  const HttpResponse response = get(std::move(request));
  result.status = response.status;
  result.silent = response.status == 200 && response.error == "timed out";
  if (!parseError.empty()) {
    result.error = parseError;
  } else if (result.error.empty() && !(response.ok() || stopped)) {
    result.error = statusMessage(response);
  }
  return result;
}

ApiResult ApiClient::call(std::string_view method, std::string pathAndQuery, std::string_view body,
                          std::string_view contentType, const std::atomic<bool>* cancel) {
  HttpRequest request;
  request.pathAndQuery = std::move(pathAndQuery);
  request.cancel = cancel;
  request.cancelCheck = cancelCheck_;
  request.idleTimeout = objectTimeout_;
  request.maxBodyBytes = kMaxObjectBytes;
  HttpResponse response = send(method, std::move(request), body, contentType);
  ApiResult result;
  result.status = response.status;
  if (!response.error.empty()) {
    result.error = response.error;
    return result;
  }
  result.body = json::parse(response.body, nullptr, false);
  if (result.body.is_discarded()) result.body = nullptr;
  if (!response.ok()) {
    result.error = statusMessage(response);
  } else if (!result.body.is_object() && !response.body.empty()) {
    result.error = std::string("the answer to ") + std::string(method) + " is not a JSON object: " +
                   response.body.substr(0, 80);
  }
  return result;
}

ApiResult ApiClient::getObject(const Resource& resource, const std::string& version, const std::string& namespaceName,
                               const std::string& name, const std::atomic<bool>* cancel) {
  return call("GET", resource.objectPath(version, namespaceName, name), {}, {}, cancel);
}

ApiResult ApiClient::create(const Resource& resource, const std::string& version, const std::string& namespaceName,
                            const json& object) {
  return call("POST", resource.path(version, namespaceName), jsonText(object), "application/json");
}

ApiResult ApiClient::replace(const Resource& resource, const std::string& version, const std::string& namespaceName,
                             const std::string& name, const json& object) {
  return call("PUT", resource.objectPath(version, namespaceName, name), jsonText(object), "application/json");
}

ApiResult ApiClient::apply(const Resource& resource, const std::string& version, const std::string& namespaceName,
                           const std::string& name, const json& object, const std::string& fieldManager) {
  return call("PATCH",
              resource.objectPath(version, namespaceName, name) + "?fieldManager=" + queryEscape(fieldManager) +
                  "&force=true",
              jsonText(object), "application/apply-patch+yaml");
}

ApiResult ApiClient::remove(const Resource& resource, const std::string& version, const std::string& namespaceName,
                            const std::string& name, const std::string& uid) {
  json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
  return call("DELETE", resource.objectPath(version, namespaceName, name), jsonText(options), "application/json");
}

}  // namespace gpuguard::cluster
