// A small HTTPS/1.1 server built for one job: answering admission reviews
// from kube-apiserver, fast, under hostile clients. Event-driven (epoll,
// non-blocking OpenSSL), so idle or slow connections cost a file descriptor,
// never a thread; handlers run on a fixed worker pool.
//
// It knows nothing of admission: it parses requests, enforces limits and
// timeouts, calls the handler, and writes the response.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuguard::webhook {

struct HttpRequest {
  std::string method;  // "POST"
  std::string target;  // "/validate?timeout=10s"
  std::string path;    // "/validate"
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string peer;  // "127.0.0.1:53422"

  const std::string* header(std::string_view lowerCaseName) const;
};

struct HttpResponse {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

using Handler = std::function<HttpResponse(const HttpRequest&)>;

struct ServerConfig {
  std::string bindAddress = "0.0.0.0";
  std::uint16_t port = 8443;
  std::string certFile;
  std::string keyFile;
  std::optional<std::string> clientCaFile;  // require and verify client certificates
  std::size_t maxHeaderBytes = 16 * 1024;     // 431 beyond
  std::size_t maxBodyBytes = 3 * 1024 * 1024; // 413 beyond (kube-apiserver caps requests at 3 MiB)
  std::chrono::milliseconds handshakeTimeout{5000};
  std::chrono::milliseconds requestTimeout{10000};  // first byte to last byte of one request
  std::chrono::milliseconds idleTimeout{90000};     // keep-alive between requests
  std::chrono::milliseconds certificatePollInterval{2000};
  unsigned workerThreads = 0;  // 0: one per core
};

// Counters the server exposes for /metrics.
struct ServerStats {
  std::uint64_t connectionsAccepted = 0;
  std::uint64_t connectionsOpen = 0;
  std::uint64_t handshakeFailures = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t requestsRejected = 0;  // 400/413/431 answered by the server itself
  std::uint64_t certificateReloads = 0;
  std::uint64_t certificateReloadFailures = 0;
};

class HttpsServer {
 public:
  HttpsServer(ServerConfig config, Handler handler);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Loads the certificate and binds the port. False with `error` on failure.
  bool start(std::string& error);
  // Serves until stop(); returns after in-flight requests are answered.
  void run();
  // Thread- and signal-safe: stop accepting, finish in-flight requests, close.
  void stop();

  // Re-reads the certificate and key now (it also happens by itself when the
  // files change). A broken pair is rejected and the old one keeps serving.
  bool reloadCertificate(std::string& error);
  bool certificateLoaded() const;
  std::uint16_t boundPort() const;  // useful with port 0 in tests
  ServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuguard::webhook
