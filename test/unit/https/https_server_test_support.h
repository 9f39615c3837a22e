// What the HTTPS server tests share: an echoing handler, a server on
// loopback with a throw-away CA (TestServer), and small waits. The tests are
// split by what they exercise: https_server_requests_test.cpp (happy paths,
// server-made errors), https_server_hostile_clients_test.cpp,
// https_server_tls_test.cpp (certificates, mutual TLS),
// https_server_shutdown_test.cpp (shutdown, the judging pool); the HTTP/1.1
// parser on its own is https_http1_test.cpp.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test/unit/tls_test_support.h"
#include "https/server.h"

namespace gpuguard::webhook::https_test {

namespace tls = gpuguard::testing::tls;
using namespace std::chrono_literals;

inline HttpResponse echo(const HttpRequest& r) {
  HttpResponse out;
  out.body = r.body;
  out.headers.emplace_back("X-Method", r.method);
  out.headers.emplace_back("X-Path", r.path);
  out.headers.emplace_back("X-Target", r.target);
  out.headers.emplace_back("X-Peer", r.peer);
  out.headers.emplace_back("X-Client-Verified", r.clientCertificateVerified ? "yes" : "no");
  if (const std::string* v = r.header("x-test")) out.headers.emplace_back("X-Test-Echo", *v);
  if (r.path == "/throw") throw std::runtime_error("boom");
  return out;
}

template <typename F>
inline bool eventually(F condition, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// A config for 127.0.0.1:<any port> serving `certPem` with `keyPem`, both
// written to `dir`.
inline ServerConfig loopbackConfig(tls::TempDir& dir, const std::string& certPem, const std::string& keyPem) {
  ServerConfig config;
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  config.certFile = dir.write("tls.crt", certPem);
  config.keyFile = dir.write("tls.key", keyPem);
  return config;
}

// A server on 127.0.0.1:<any port>, running on its own thread, with a
// throw-away CA and certificate. Tests tweak the config before it starts.
class TestServer {
 public:
  explicit TestServer(const std::function<void(TestServer&, ServerConfig&)>& tweak = {}, Handler handler = echo) {
    pair = ca.issueServer();
    config = loopbackConfig(dir, pair.certPem, pair.keyPem);
    config.workerThreads = 2;
    config.handshakeTimeout = 2000ms;
    config.requestTimeout = 2000ms;
    config.idleTimeout = 5000ms;
    config.certificatePollInterval = 50ms;
    if (tweak) tweak(*this, config);
    server = std::make_unique<HttpsServer>(config, std::move(handler));
    std::string error;
    if (!server->start(error)) throw std::runtime_error("server did not start: " + error);
    thread = std::thread([this] { server->run(); });
  }
  ~TestServer() { shutdown(); }
  void shutdown() {
    if (thread.joinable()) {
      server->stop();
      thread.join();
    }
  }

  std::uint16_t port() const { return server->boundPort(); }
  tls::ClientOptions client() const {
    tls::ClientOptions o;
    o.caPem = ca.certPem();
    return o;
  }
  // One POST on a new connection, answered 200 with the body echoed.
  bool healthy() const {
    auto r = tls::httpsRequest(port(), client(), "POST", "/validate", R"({"healthy":true})");
    return r && r->status == 200 && r->body == R"({"healthy":true})";
  }
  ServerStats stats() const { return server->stats(); }

  tls::TestCa ca;
  tls::TempDir dir;
  tls::KeyPair pair;
  ServerConfig config;
  std::unique_ptr<HttpsServer> server;
  std::thread thread;
};

// A handler that holds every request to /hold until open(), and records the
// body of every request it was given.
class Gate {
 public:
  HttpResponse handle(const HttpRequest& r) {
    std::unique_lock lock(mutex_);
    seen_.push_back(r.body);
    changed_.notify_all();
    if (r.path == "/hold") changed_.wait(lock, [&] { return open_; });
    return echo(r);
  }
  Handler handler() {
    return [this](const HttpRequest& r) { return handle(r); };
  }
  bool waitSeen(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 5s, [&] { return seen_.size() >= n; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  std::vector<std::string> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  std::vector<std::string> seen_;
};

// Opens the gate when the test ends, before the server (declared earlier) is
// destroyed, also when an assertion returns early.
struct OpenAtEnd {
  Gate& gate;
  ~OpenAtEnd() { gate.open(); }
};

// 50 POSTs (/p0 to /p49, body "0" to "49") and a GET /last that asks to
// close, in one write: each is answered in order with its body echoed, the
// last with Connection: close, and then the server closes.
inline void expectBurstAnsweredInOrderThenClosed(tls::TlsClient& c) {
  std::string burst;
  for (int i = 0; i < 50; ++i) burst += tls::buildRequest("POST", "/p" + std::to_string(i), std::to_string(i));
  burst += tls::buildRequest("GET", "/last", "", {{"Connection", "close"}});
  ASSERT_TRUE(c.write(burst));
  for (int i = 0; i < 50; ++i) {
    auto r = c.readResponse();
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->body, std::to_string(i));
  }
  auto last = c.readResponse();
  ASSERT_TRUE(last);
  EXPECT_EQ(*last->header("x-path"), "/last");
  EXPECT_EQ(*last->header("connection"), "close");
  EXPECT_TRUE(c.peerClosed());
}

// Waits up to `timeout` for the server to send something (or close).
inline bool readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0;
}

// The client options of `o` presenting `client`'s certificate.
inline tls::ClientOptions withCertificate(tls::ClientOptions o, const tls::KeyPair& client) {
  o.certPem = client.certPem;
  o.keyPem = client.keyPem;
  return o;
}

}  // namespace gpuguard::webhook::https_test
