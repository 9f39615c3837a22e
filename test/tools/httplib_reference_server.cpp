// gpuguard-httplib-reference: the webhook's admission decision, review(),
// behind cpp-httplib's SSLServer (Debian 12's libcpp-httplib 0.11.4). It is
// a yardstick, not a product: test/bench/load_vs_nginx.sh measures it in the
// same run as gpuguard-webhook and nginx, and the differential framing test
// (test/http/framing_differential.py) sends it the same malformed
// requests as the webhook. docs/webhook.md says why the admission port stays
// on the project's own server.
//
//   gpuguard-httplib-reference --tls-cert-file=tls.crt --tls-private-key-file=tls.key
//       [--port=0] [--bind-address=127.0.0.1] [--threads=32] [--policy=FILE]
// (the webhook's flag names; --cert, --key and --bind are short aliases)
//
// Prints "listening on <port>" on stdout once bound (--port=0: a free port),
// then serves POST /validate (review() with the policy as the webhook sees
// it) and GET /healthz until SIGTERM or SIGINT.
//
// Tuned as ../shared/reference/perf-baselines.md §3 found it must be, since
// the library's defaults stall every response ~40 ms and starve connections:
//   - TCP_NODELAY: 0.11.4 writes headers and body in two TLS records, and
//     Nagle holds the second until the client's delayed ACK;
//   - a thread pool of --threads (one thread per keep-alive connection: it
//     must be at least the client's concurrency, or extra connections wait);
//   - keep-alive without a request cap (the default closes every 5 requests,
//     a TLS handshake each time) and a 90 s idle timeout like the webhook's;
//   - SO_REUSEADDR, which 0.11.4 does not set (a restart would fail while
//     TIME_WAIT sockets exist), and no SO_REUSEPORT (two instances would
//     silently share a port);
//   - bodies up to 3 MiB, the webhook's (and kube-apiserver's) limit.
// The Debian package is a split build (the .so holds the implementation), so
// CPPHTTPLIB_* macros would change nothing; everything is set at run time.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <httplib.h>

#include "webhook/admission.h"
#include "yaml/policy_file.h"

namespace {

using gpuguard::webhook::AdmissionPolicy;

struct Options {
  std::string cert, key, bind = "127.0.0.1";
  std::optional<std::string> policy;
  int port = 0;
  int threads = 32;
};

constexpr std::size_t kMaxBodyBytes = 3 * 1024 * 1024;
constexpr time_t kIdleTimeoutSeconds = 90;
constexpr time_t kRequestTimeoutSeconds = 10;

bool parseInt(std::string_view text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq), value = eq == arg.npos ? "" : arg.substr(eq + 1);
    bool ok = eq != arg.npos;
    if (name == "--tls-cert-file" || name == "--cert") o.cert = value;
    else if (name == "--tls-private-key-file" || name == "--key") o.key = value;
    else if (name == "--bind-address" || name == "--bind") o.bind = value;
    else if (name == "--policy") o.policy = std::string(value);
    else if (name == "--port") ok = ok && parseInt(value, o.port) && o.port >= 0 && o.port < 65536;
    else if (name == "--threads") ok = ok && parseInt(value, o.threads) && o.threads >= 1 && o.threads <= 1024;
    else ok = false;
    if (!ok) {
      std::cerr << "gpuguard-httplib-reference: bad argument " << arg << "\n";
      return std::nullopt;
    }
  }
  if (o.cert.empty() || o.key.empty()) {
    std::cerr << "usage: gpuguard-httplib-reference --tls-cert-file=FILE --tls-private-key-file=FILE [--port=N] "
                 "[--bind-address=ADDR] [--threads=N] [--policy=FILE]\n";
    return std::nullopt;
  }
  return o;
}

void tune(httplib::Server& server, int threads) {
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(static_cast<std::size_t>(-1));
  server.set_keep_alive_timeout(kIdleTimeoutSeconds);
  server.set_read_timeout(kRequestTimeoutSeconds);
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_socket_options([](socket_t sock) {  // replaces the default (SO_REUSEPORT)
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
}

void route(httplib::Server& server, const AdmissionPolicy& policy) {
  server.Post("/validate", [&policy](const httplib::Request& req, httplib::Response& res) {
    gpuguard::webhook::AdmissionResult result = gpuguard::webhook::review(req.body, policy);
    res.status = result.httpStatus;
    res.set_content(std::move(result.body), "application/json");
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parseOptions(argc, argv);
  if (!options) return 2;
  AdmissionPolicy policy;
  try {
    if (options->policy) policy = AdmissionPolicy::from(gpuguard::yaml::loadPolicyFile(*options->policy));
  } catch (const std::exception& e) {
    std::cerr << "gpuguard-httplib-reference: " << e.what() << "\n";
    return 1;
  }

  // Signals go to one waiter thread, which stops the server.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  httplib::SSLServer server(options->cert.c_str(), options->key.c_str());
  if (!server.is_valid()) {
    std::cerr << "gpuguard-httplib-reference: cannot load " << options->cert << " / " << options->key << "\n";
    return 1;
  }
  tune(server, options->threads);
  route(server, policy);

  int port = options->port;
  if (port == 0) port = server.bind_to_any_port(options->bind);
  else if (!server.bind_to_port(options->bind, port)) port = -1;
  if (port <= 0) {
    std::cerr << "gpuguard-httplib-reference: cannot bind " << options->bind << ":" << options->port << "\n";
    return 1;
  }
  std::cout << "listening on " << port << std::endl;

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  const bool ok = server.listen_after_bind();
  if (!ok && server.is_running()) std::cerr << "gpuguard-httplib-reference: listen failed\n";
  // listen_after_bind returns after stop(); wake the waiter if it did not.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}
