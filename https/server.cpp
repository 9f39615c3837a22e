// HttpsServer: setup, teardown and the public API. The event loops are in
// internal/event_loop.cpp, the work on one connection in internal/connection.cpp;
// what they share is in internal/server_state.h.
#include "https/server.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "https/internal/server_state.h"

namespace gpuguard::webhook {

const std::string* HttpRequest::header(std::string_view lowerCaseName) const {
  for (const auto& [name, value] : headers) {
    if (name == lowerCaseName) return &value;
  }
  return nullptr;
}

namespace https_detail {

std::string formatPeer(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  return "?";
}

// Two event loops per usable CPU. A loop serves its connections one after the
// other, so when the kernel takes its CPU away (the API server, a sidecar, the
// load generator in a benchmark share the cores) every request of that loop
// waits. With twice as many loops the scheduler can run the other loop on that
// core in the meantime: measured at 32 keep-alive connections on 2 cores, p99
// 0.96-1.20x nginx's against 1.46-1.71x with one loop per CPU, at the same CPU
// per request and slightly more throughput (docs/performance.md).
constexpr unsigned kDefaultLoopsPerCpu = 2;

// CPUs this process may use: the affinity mask, capped by a cgroup v2 CPU
// quota (a container limited to 2 CPUs on a 64-core node counts 2).
unsigned usableCpus() {
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) n = std::min(n, static_cast<unsigned>(std::max(1, CPU_COUNT(&set))));
  if (FILE* f = std::fopen("/sys/fs/cgroup/cpu.max", "r")) {
    char quota[32] = {0};
    unsigned long period = 0;
    if (std::fscanf(f, "%31s %lu", quota, &period) == 2 && std::strcmp(quota, "max") != 0 && period > 0) {
      const unsigned long q = std::strtoul(quota, nullptr, 10);
      if (q > 0) n = std::min(n, static_cast<unsigned>(std::max(1UL, (q + period - 1) / period)));
    }
    std::fclose(f);
  }
  return n;
}

char gListenTag, gWakeTag, gStopTag;

}  // namespace https_detail

using namespace https_detail;

struct HttpsServer::Impl : ServerState {
  using ServerState::ServerState;
};

// ---------------------------------------------------------------------------
// Server setup and teardown.

ServerState::~ServerState() {
  pool.reset();  // its last answers go to the loops, which free them
  loops.clear();
  if (listenFd >= 0) ::close(listenFd);
  if (stopFd >= 0) ::close(stopFd);
  SSL_CTX_free(ctx);
}

bool ServerState::makeContext(std::string& error) {
  ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) {
    error = "SSL_CTX_new failed: " + opensslErrors();
    return false;
  }
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 || SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1 ||
      SSL_CTX_set_ciphersuites(ctx, kTls13Suites) != 1 || SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384") != 1) {
    error = "cannot configure TLS: " + opensslErrors();
    return false;
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION |
                               SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_clear_options(ctx, SSL_OP_NO_TICKET);  // session tickets on (stateless resumption)
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  // Read whole socket buffers, not a 5-byte record header and then the rest:
  // half the read() calls. What OpenSSL buffers beyond the record it returns
  // is drained because reads always continue until WANT_READ (or while
  // SSL_has_pending), and paused reads are resumed explicitly.
  SSL_CTX_set_read_ahead(ctx, 1);
  // No server-side session cache: tickets need none, and the cache would grow.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  static const unsigned char kSessionContext[] = "gpuguard-webhook";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  SSL_CTX_set_num_tickets(ctx, 1);
  SSL_CTX_set_cert_cb(ctx, &CertificateStore::certCallback, &certificates);

  if (clientCas) {
    if (!clientCas->reload(error)) return false;
    // Each handshake takes the CAs current at its ClientHello (they are
    // reloaded when the file changes). VERIFY_PEER without
    // FAIL_IF_NO_PEER_CERT: the kubelet's probes present no certificate and
    // are let through to the HTTP layer, which serves them nothing but the
    // probe paths; a certificate that is presented and does not verify still
    // fails the handshake.
    SSL_CTX_set_client_hello_cb(ctx, &ClientCaStore::clientHelloCallback, clientCas.get());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return true;
}

bool ServerState::makeListener(std::string& error) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, config.bindAddress.c_str(), &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons(config.port);
    len = sizeof *a4;
  } else if (inet_pton(AF_INET6, config.bindAddress.c_str(), &a6->sin6_addr) == 1) {
    family = AF_INET6;
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(config.port);
    len = sizeof *a6;
  } else {
    error = "bind address is not an IP address: " + config.bindAddress;
    return false;
  }
  listenFd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listenFd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  int one = 1, zero = 0;
  // SO_REUSEADDR: rebind while old connections sit in TIME_WAIT. No
  // SO_REUSEPORT: a second instance must fail loudly, not share the port.
  ::setsockopt(listenFd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(listenFd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (family == AF_INET6) ::setsockopt(listenFd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(listenFd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    error = "bind " + config.bindAddress + ":" + std::to_string(config.port) + ": " + std::strerror(errno);
    return false;
  }
  if (::listen(listenFd, SOMAXCONN) != 0) {
    error = std::string("listen: ") + std::strerror(errno);
    return false;
  }
  sockaddr_storage bound{};
  socklen_t boundLen = sizeof bound;
  ::getsockname(listenFd, reinterpret_cast<sockaddr*>(&bound), &boundLen);
  port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return true;
}

// The first loop to stop, after accepting what the backlog holds, shuts the
// listening socket down: the kernel then refuses new connections even while
// another loop is busy in a handler. The descriptor itself stays valid, so no
// other loop can race with its number being reused; run() closes it at the end.
void ServerState::releaseListener() {
  if (!listenerShut.exchange(true)) ::shutdown(listenFd, SHUT_RDWR);
}

bool ServerState::requiresClientCertificate(const Connection& c, const std::string& path) const {
  if (!clientCas || c.clientVerified) return false;
  const auto& open = config.pathsWithoutClientCertificate;
  return std::find(open.begin(), open.end(), path) == open.end();
}

// Runs on loop 0's tick: the serving pair and the client CAs.
void ServerState::pollCertificateFiles() {
  checkCertificateExpiry(static_cast<std::int64_t>(std::time(nullptr)));
  bool ok = false;
  std::string error;
  if (certificates.reloadIfChanged(ok, error)) {
    if (ok) {
      auto ck = certificates.current();
      log("certificate files changed; reloaded " + ck->subject() + " sha256 " + ck->fingerprint());
    } else {
      log("certificate files changed but the new pair is rejected; the old one keeps serving: " + error);
    }
    checkCertificateExpiry(static_cast<std::int64_t>(std::time(nullptr)));
  }
  if (clientCas && clientCas->reloadIfChanged(ok, error)) {
    if (ok) {
      auto cas = clientCas->current();
      log("client CA file changed; reloaded " + std::to_string(cas->size()) + " CA certificate(s) (" +
          cas->subjects() + ") sha256 " + cas->fingerprint());
    } else {
      log("client CA file changed but the new file is rejected; the old CAs stay trusted: " + error);
    }
  }
}

// An expired serving certificate is still served (OpenSSL does not look), and
// every API server that verifies it refuses the webhook: with failurePolicy
// Fail, admission stops. Said once per certificate and state (valid, expiring
// within kCertificateWarningWindow, expired), at load and as time passes.
void ServerState::checkCertificateExpiry(std::int64_t nowSeconds) {
  constexpr std::int64_t kCertificateWarningWindow = 7 * 24 * 3600;
  auto ck = certificates.current();
  if (!ck) return;
  const std::int64_t left = ck->notAfter() - nowSeconds;
  const int state = left <= 0 ? 2 : left < kCertificateWarningWindow ? 1 : 0;
  std::lock_guard lock(expiryMutex);
  if (ck->fingerprint() == expiryLoggedFingerprint && state == expiryLoggedState) return;
  expiryLoggedFingerprint = ck->fingerprint();
  expiryLoggedState = state;
  if (state == 0) return;
  char when[32] = "?";
  const std::time_t notAfter = static_cast<std::time_t>(ck->notAfter());
  std::tm tm{};
  if (::gmtime_r(&notAfter, &tm)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string which = ck->subject() + " sha256 " + ck->fingerprint();
  if (state == 2) {
    log("serving certificate has expired (notAfter " + std::string(when) + "): " + which +
        "; API servers refuse it until it is renewed");
  } else {
    log("serving certificate expires in " + std::to_string(left / 3600) + " hour(s) (notAfter " + when + "): " + which +
        "; renew it");
  }
}

EventLoop* ServerState::pickLoop(EventLoop* self) {
  EventLoop* best = self;
  std::size_t bestLoad = self->load();
  for (auto& l : loops) {
    if (l->load() < bestLoad) {
      best = l.get();
      bestLoad = l->load();
    }
  }
  return best;
}

HttpsServer::HttpsServer(ServerConfig config, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(handler))) {}

HttpsServer::~HttpsServer() {
  stop();
  std::unique_lock lock(impl_->runMutex);
  impl_->runDone.wait(lock, [&] { return !impl_->running.load(); });
}

bool HttpsServer::start(std::string& error) {
  Impl& s = *impl_;
  if (s.started || !s.loops.empty() || s.ctx) {
    error = "a server starts once";
    return false;
  }
  if (s.stopFd < 0) {
    error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  if (!s.handler) {
    error = "no handler";
    return false;
  }
  if (s.config.certFile.empty() || s.config.keyFile.empty()) {
    error = "a certificate file and a key file are required";
    return false;
  }
  if (!s.certificates.reload(error)) return false;
  s.checkCertificateExpiry(static_cast<std::int64_t>(std::time(nullptr)));
  if (!s.makeContext(error)) return false;

  // Writes to a closed connection must fail with EPIPE, not kill the process.
  struct sigaction old {};
  if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  // Room for maxConnections sockets, if the hard limit allows.
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    const rlim_t want = static_cast<rlim_t>(s.config.maxConnections) + 256;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
      rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY) ? want : std::min(want, rl.rlim_max);
      ::setrlimit(RLIMIT_NOFILE, &rl);
    }
  }

  if (!s.makeListener(error)) return false;
  unsigned n = s.config.workerThreads;
  if (n == 0) n = kDefaultLoopsPerCpu * usableCpus();
  if (s.config.maxHandshakes > 0) s.handshakesPerLoop = std::max<std::size_t>(1, (s.config.maxHandshakes + n - 1) / n);
  for (unsigned i = 0; i < n; ++i) {
    auto loop = std::make_unique<EventLoop>(s, i);
    if (!loop->init(error)) {
      s.loops.clear();
      return false;
    }
    s.loops.push_back(std::move(loop));
  }
  if (s.config.judgeOffLoopBytes != SIZE_MAX) {
    const unsigned judges = s.config.judgeThreads ? s.config.judgeThreads : usableCpus();
    s.pool = std::make_unique<JudgePool>(s.handler, judges, s.config.maxQueuedJudgements);
  }
  s.started = true;
  return true;
}

void HttpsServer::run() {
  Impl& s = *impl_;
  if (!s.started || s.running.exchange(true)) return;
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < s.loops.size(); ++i) threads.emplace_back([&s, i] { s.loops[i]->run(); });
  s.loops[0]->run();
  for (auto& t : threads) t.join();
  if (const std::size_t cut = s.shutdownCut.load(); cut > 0) {
    const std::size_t judged = s.shutdownCutJudging.load();
    s.log("shutdown timeout reached; closed " + std::to_string(cut) + " connection(s) still open" +
          (judged ? " (" + std::to_string(judged) + " with the judging pool: their answers are discarded)" : ""));
  }
  // Connections handed over after their loop had stopped, if any.
  for (auto& l : s.loops) l->closeAll();
  if (s.listenFd >= 0) {
    ::close(s.listenFd);
    s.listenFd = -1;
  }
  {
    std::lock_guard lock(s.runMutex);
    s.running = false;
    s.started = false;  // run() serves once
  }
  s.runDone.notify_all();
}

void HttpsServer::stop() {
  const int savedErrno = errno;
  impl_->stopRequested.store(true);
  if (impl_->stopFd >= 0) {
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t r = ::write(impl_->stopFd, &one, sizeof one);
  }
  errno = savedErrno;
}

bool HttpsServer::reloadCertificate(std::string& error) {
  bool ok = impl_->certificates.reload(error);
  impl_->log(ok ? "certificate reloaded: " + certificateFingerprint() : "certificate reload failed: " + error);
  impl_->checkCertificateExpiry(static_cast<std::int64_t>(std::time(nullptr)));
  return ok;
}

bool HttpsServer::certificateLoaded() const { return impl_->certificates.current() != nullptr; }

std::string HttpsServer::certificateFingerprint() const {
  auto ck = impl_->certificates.current();
  return ck ? ck->fingerprint() : std::string();
}

std::optional<std::int64_t> HttpsServer::certificateNotAfter() const {
  auto ck = impl_->certificates.current();
  return ck ? std::optional<std::int64_t>(ck->notAfter()) : std::nullopt;
}

std::string HttpsServer::clientCaFingerprint() const {
  if (!impl_->clientCas) return {};
  auto cas = impl_->clientCas->current();
  return cas ? cas->fingerprint() : std::string();
}

std::uint16_t HttpsServer::boundPort() const { return impl_->port; }

ServerStats HttpsServer::stats() const {
  const Impl& s = *impl_;
  ServerStats st;
  st.connectionsAccepted = s.connectionsAccepted.load(std::memory_order_relaxed);
  st.connectionsRefused = s.connectionsRefused.load(std::memory_order_relaxed);
  st.connectionsOpen = s.connectionsOpen.load(std::memory_order_relaxed);
  st.bodyBytesReserved = s.bodyBytesReserved.load(std::memory_order_relaxed);
  for (const auto& l : s.loops) {
    st.handshakeFailures += l->counters.handshakeFailures.load(std::memory_order_relaxed);
    st.timeouts += l->counters.timeouts.load(std::memory_order_relaxed);
    st.requestsHandled += l->counters.requestsHandled.load(std::memory_order_relaxed);
    st.requestsRejected += l->counters.requestsRejected.load(std::memory_order_relaxed);
    st.clientCertificateRequired += l->counters.clientCertificateRequired.load(std::memory_order_relaxed);
    st.shutdownClosedConnections += l->counters.shutdownClosed.load(std::memory_order_relaxed);
    st.eventLoopWakeups += l->counters.wakeups.load(std::memory_order_relaxed);
    st.acceptDescriptorExhaustion += l->counters.acceptFailures.load(std::memory_order_relaxed);
    st.handshakesEvicted += l->counters.handshakesEvicted.load(std::memory_order_relaxed);
    st.unverifiedEvicted += l->counters.unverifiedEvicted.load(std::memory_order_relaxed);
    st.connectionsAwaitingClientHello += l->inPhase(kHello);
    st.tlsHandshakesInProgress += l->inPhase(kHandshake);
    st.judgingRejected += l->counters.judgingRejected.load(std::memory_order_relaxed);
    st.bodyBudgetRejected += l->counters.bodyBudgetRejected.load(std::memory_order_relaxed);
    for (int i = 0; i < kAbandonReasons; ++i) {
      st.judgingDropped[i] += l->counters.judgingDropped[i].load(std::memory_order_relaxed);
      st.judgingDiscarded[i] += l->counters.judgingDiscarded[i].load(std::memory_order_relaxed);
    }
  }
  if (s.pool) {
    const JudgeStats judge = s.pool->stats();
    st.judgingQueued = judge.queued;
    st.judgingInProgress = judge.judging;
  }
  if (s.clientCas) {
    st.clientCaReloads = s.clientCas->reloads();
    st.clientCaReloadFailures = s.clientCas->failures();
  }
  st.certificateReloads = s.certificates.reloads();
  st.certificateReloadFailures = s.certificates.failures();
  return st;
}

}  // namespace gpuguard::webhook
