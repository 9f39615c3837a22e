// A small HTTP/1.1 client for the Kubernetes API server, over TLS (OpenSSL) or
// plain TCP (`kubectl proxy`). A streaming request (a watch: an endless
// chunked body handed over as it arrives) has a connection of its own; the
// others (list pages, GET/POST/PUT/PATCH/DELETE of one object) reuse idle
// keep-alive connections, so 1,000 report writes are not 1,000 TLS handshakes.
//
// Why not cpp-httplib's client, which the design names: Debian 12 ships it
// only as a shared library (libcpp-httplib.so.0.11; its header is the split,
// declaration-only one), and the release binaries are fully static
// (cmake/static.cmake, tools/release.sh: no NEEDED entry), so linking it would
// break the release. The tests use cpp-httplib's server as the independent
// peer of this client (test/unit/cluster/cluster_*_test.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuguard::cluster {

// Where the API server is and how to trust it and prove who we are.
struct TlsSettings {
  std::string caPem;           // trusted roots; empty: the system's (/etc/ssl/certs)
  bool insecureSkipVerify = false;
  std::string clientCertPem;   // with clientKeyPem: a client certificate (and its chain)
  std::string clientKeyPem;
  std::string serverName;      // tls-server-name: verify against this name instead of the host
};

struct ServerUrl {
  bool tls = true;
  std::string host;            // a name, an IPv4 address or an IPv6 address without brackets
  std::uint16_t port = 443;
  std::string pathPrefix;      // "https://host/k8s/clusters/c1" (Rancher): "/k8s/clusters/c1"
};

// Parses "https://host[:port][/prefix]" (and http://). Empty optional-like
// error text on success.
std::string parseServerUrl(std::string_view url, ServerUrl& out);

struct HttpResponse {
  int status = 0;              // 0: no answer (see error)
  std::string body;            // when no body callback was given (capped, see kMaxBodyBytes)
  std::string error;           // transport error: connect, TLS, timeout, malformed answer
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

struct HttpRequest {
  std::string pathAndQuery;                                  // "/api/v1/nodes?limit=500"
  std::vector<std::pair<std::string, std::string>> headers;  // besides Host, Accept, User-Agent
  // Called with each piece of the (de-chunked) body of a 2xx answer; return
  // false to stop reading. Unset: the body is collected in HttpResponse::body.
  std::function<bool(std::string_view)> onBody;
  // Called once with the status, as soon as the answer's headers are read
  // (a watch learns that it is open before any event comes).
  std::function<void(int status)> onStatus;
  // No byte for this long: the request fails with a timeout.
  std::chrono::milliseconds idleTimeout{30000};
  // Checked at least every `cancelCheck` while waiting: true ends the request.
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::milliseconds cancelCheck{250};
  // A collected body (no onBody) larger than this fails the request: one
  // object is at most ~1.5 MiB in etcd, a list page of 500 large objects more.
  std::size_t maxBodyBytes = 512u << 20;
};

class HttpClient {
 public:
  static constexpr std::size_t kMaxBodyBytes = 512u << 20;    // one collected answer
  static constexpr std::size_t kMaxHeaderBytes = 64u << 10;

  HttpClient(ServerUrl server, TlsSettings tls, std::chrono::milliseconds connectTimeout = std::chrono::seconds(10));
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Empty when the TLS settings are usable, else why not (a bad PEM...).
  const std::string& configError() const { return configError_; }

  // `method` ("GET", "POST", "PUT", "PATCH", "DELETE") with `body` of
  // `contentType` (none when empty). A non-streaming request on a reused
  // connection that the server closed before answering is sent once more on a
  // new one: the API server's writes are safe to repeat (create answers 409
  // AlreadyExists, PUT carries its resourceVersion, apply is idempotent, DELETE
  // its uid precondition).
  HttpResponse send(std::string_view method, const HttpRequest& request, std::string_view body = {},
                    std::string_view contentType = {}) const;
  HttpResponse get(const HttpRequest& request) const { return send("GET", request); }

  // Idle keep-alive connections held (tests; at most kMaxIdleConnections).
  std::size_t idleConnections() const;
  static constexpr std::size_t kMaxIdleConnections = 4;
  static constexpr std::chrono::seconds kMaxIdleTime{30};

 private:
  struct Tls;
  struct Pool;
  struct Exchange;
  HttpResponse exchange(const Exchange& x, bool& staleConnection) const;
  ServerUrl server_;
  TlsSettings settings_;
  std::chrono::milliseconds connectTimeout_;
  std::string configError_;
  Tls* tls_ = nullptr;  // the SSL_CTX, built once
  Pool* pool_ = nullptr;  // idle keep-alive connections
};

}  // namespace gpuguard::cluster
