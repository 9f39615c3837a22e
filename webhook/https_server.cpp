// The event loops of HttpsServer. One loop per thread, each with its own
// epoll set (level-triggered). All loops wait on the one listening socket
// with EPOLLEXCLUSIVE; whoever accepts hands the connection to the loop with
// the fewest connections, which then owns it for life (handshake, requests,
// handler calls, close). A connection is in exactly one of four phases, each
// with a fixed timeout, and sits in that phase's FIFO list: deadlines in one
// list are therefore sorted, and expiring them is O(expired).
#include "webhook/https_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "webhook/certificate_store.h"
#include "webhook/https_http1.h"

namespace gpuguard::webhook {

const std::string* HttpRequest::header(std::string_view lowerCaseName) const {
  for (const auto& [name, value] : headers) {
    if (name == lowerCaseName) return &value;
  }
  return nullptr;
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadChunk = 16 * 1024 + 256;  // one full TLS record's plaintext fits
constexpr std::size_t kMaxHeaders = 128;
constexpr std::size_t kAcceptBatch = 64;
constexpr std::size_t kMaxReadsPerEvent = 16;
constexpr std::size_t kLingerMaxBytes = 1 << 20;
constexpr std::size_t kKeepBufferCapacity = 64 * 1024;  // larger buffers are released between requests
constexpr auto kTick = std::chrono::milliseconds(100);
constexpr auto kLingerTimeout = std::chrono::milliseconds(1000);

// TLS 1.2: forward secrecy and AEAD only. TLS 1.3 suites are all AEAD.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* kTls13Suites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

#define GPUGUARD_PLAIN_HTTP_BODY "{\"error\": \"client sent an HTTP request to an HTTPS server\"}\n"
constexpr char kPlainHttpAnswer[] =
    "HTTP/1.1 400 Bad Request\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 60\r\n"
    "Connection: close\r\n"
    "\r\n" GPUGUARD_PLAIN_HTTP_BODY;
static_assert(sizeof(GPUGUARD_PLAIN_HTTP_BODY) - 1 == 60);
#undef GPUGUARD_PLAIN_HTTP_BODY

// Phases double as indices of the per-loop timer lists.
enum Phase : std::uint8_t {
  kHandshake,  // TLS handshake; handshakeTimeout
  kRequest,    // a request is being received or its response sent; requestTimeout
  kIdle,       // keep-alive, nothing buffered; idleTimeout
  kLinger,     // we sent our last bytes and a FIN; drain until the peer closes
  kPhases
};

struct TimerNode {
  TimerNode* prev = this;
  TimerNode* next = this;
  void unlink() {
    prev->next = next;
    next->prev = prev;
    prev = next = this;
  }
  void pushBack(TimerNode& list) {  // `list` is a sentinel
    prev = list.prev;
    next = &list;
    list.prev->next = this;
    list.prev = this;
  }
};

struct Connection : TimerNode {
  int fd = -1;
  SSL* ssl = nullptr;
  Phase phase = kHandshake;
  Clock::time_point deadline;
  std::uint32_t interest = 0;
  bool plainChecked = false;   // first byte looked at (TLS or plain HTTP?)
  bool tlsUp = false;          // handshake done
  bool inRequest = false;      // the request timer runs
  bool headReady = false;      // head parsed, waiting for the body
  bool keepAlive = true;       // of the request whose head is parsed
  bool keepAlive10 = false;
  bool headMethod = false;
  bool closeAfterWrite = false;
  bool writeBlocked = false;
  bool closed = false;
  bool clientVerified = false;  // a client certificate was presented and verified
  std::size_t headLen = 0;
  std::size_t bodyLen = 0;
  std::size_t scanPos = 0;  // where the head-end scan resumes
  std::size_t lingerBytes = 0;
  std::string in;
  std::size_t inPos = 0;  // first unconsumed byte of `in`
  std::string out;
  std::size_t outPos = 0;  // first unsent byte of `out`
  std::string peer;

  std::size_t buffered() const { return in.size() - inPos; }
  bool outPending() const { return outPos < out.size(); }
};

// Per-loop counters, summed by stats(). Only the owning loop writes them.
struct alignas(64) LoopCounters {
  std::atomic<std::uint64_t> handshakeFailures{0};
  std::atomic<std::uint64_t> timeouts{0};
  std::atomic<std::uint64_t> requestsHandled{0};
  std::atomic<std::uint64_t> requestsRejected{0};
  std::atomic<std::uint64_t> clientCertificateRequired{0};
  std::atomic<std::uint64_t> shutdownClosed{0};
  void bump(std::atomic<std::uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
};

std::string opensslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

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

// CPUs this process may use: the affinity mask, capped by a cgroup v2 CPU
// quota (a container limited to 2 CPUs on a 64-core node gets 2 loops).
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

// Tags for the non-connection entries of an epoll set.
char gListenTag, gWakeTag, gStopTag;

}  // namespace

class EventLoop;

// Everything the loops share. (HttpsServer::Impl is this; it is private.)

struct ServerState {
  ServerConfig config;
  Handler handler;
  CertificateStore certificates;
  std::unique_ptr<ClientCaStore> clientCas;  // with config.clientCaFile
  SSL_CTX* ctx = nullptr;
  int listenFd = -1;
  int stopFd = -1;  // eventfd, made readable once by stop() and never drained
  std::uint16_t port = 0;
  bool started = false;
  std::atomic<bool> stopRequested{false};
  std::atomic<bool> running{false};
  std::mutex runMutex;
  std::condition_variable runDone;
  std::atomic<bool> listenerShut{false};
  std::vector<std::unique_ptr<EventLoop>> loops;

  std::atomic<std::uint64_t> connectionsAccepted{0};
  std::atomic<std::uint64_t> connectionsRefused{0};
  std::atomic<std::uint64_t> connectionsOpen{0};

  ServerState(ServerConfig c, Handler h)
      : config(std::move(c)), handler(std::move(h)), certificates(config.certFile, config.keyFile) {
    if (config.clientCaFile) clientCas = std::make_unique<ClientCaStore>(*config.clientCaFile);
    stopFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  }
  ~ServerState();

  void log(const std::string& message) const {
    if (config.log) config.log(message);
  }
  bool makeContext(std::string& error);
  bool makeListener(std::string& error);
  void releaseListener();
  void pollCertificateFiles();
  bool requiresClientCertificate(const Connection& c, const std::string& path) const;
  EventLoop* pickLoop(EventLoop* self);
};

class EventLoop {
 public:
  EventLoop(ServerState& server, unsigned index) : server_(server), index_(index), readBuf_(kReadChunk) {}
  ~EventLoop();

  bool init(std::string& error);
  void run();
  // From another loop: take over an accepted socket.
  void post(int fd, const sockaddr_storage& peer);
  std::size_t load() const { return open_.load(std::memory_order_relaxed); }
  // After run() returned: close whatever is left.
  void closeAll();
  LoopCounters counters;

 private:
  // Accepting and adopting.
  void acceptMany(bool untilEmpty = false);
  void adopt(int fd, const sockaddr_storage& peer);
  void drainInbox();
  void beginStop();
  void drainOnStop(Connection* c);
  void closeEverything();

  // Per-connection work.
  void onEvent(Connection* c, std::uint32_t events);
  void handshake(Connection* c);
  void readable(Connection* c);
  void processInput(Connection* c);
  void dispatch(Connection* c);
  void reject(Connection* c, int status, std::string_view message);
  bool flush(Connection* c);
  void settle(Connection* c);
  void drainLinger(Connection* c);
  void onTimeout(Connection* c);
  void closeGracefully(Connection* c, bool linger = true);
  void closeNow(Connection* c);

  void setPhase(Connection* c, Phase p, Clock::time_point deadline);
  void setInterest(Connection* c, std::uint32_t events);
  void expireTimers();
  void tick();

  ServerState& server_;
  const unsigned index_;
  int epfd_ = -1;
  int wakeFd_ = -1;
  bool listening_ = false;
  bool listenerPaused_ = false;  // after EMFILE and friends, until the next tick
  bool stopping_ = false;
  Clock::time_point stopDeadline_;
  Clock::time_point now_;
  Clock::time_point nextCertPoll_;
  TimerNode lists_[kPhases];
  std::atomic<std::size_t> open_{0};
  std::vector<std::unique_ptr<Connection>> graveyard_;  // freed after each batch of events
  std::vector<char> readBuf_;
  HttpRequest request_;  // reused for every request this loop dispatches

  std::mutex inboxMutex_;
  std::vector<std::pair<int, sockaddr_storage>> inbox_;
};

struct HttpsServer::Impl : ServerState {
  using ServerState::ServerState;
};

// ---------------------------------------------------------------------------
// Server setup and teardown.

ServerState::~ServerState() {
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
  bool ok = false;
  std::string error;
  if (certificates.reloadIfChanged(ok, error)) {
    if (ok) {
      auto ck = certificates.current();
      log("certificate files changed; reloaded " + ck->subject() + " sha256 " + ck->fingerprint());
    } else {
      log("certificate files changed but the new pair is rejected; the old one keeps serving: " + error);
    }
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
  if (n == 0) n = usableCpus();
  for (unsigned i = 0; i < n; ++i) {
    auto loop = std::make_unique<EventLoop>(s, i);
    if (!loop->init(error)) {
      s.loops.clear();
      return false;
    }
    s.loops.push_back(std::move(loop));
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
  for (const auto& l : s.loops) {
    st.handshakeFailures += l->counters.handshakeFailures.load(std::memory_order_relaxed);
    st.timeouts += l->counters.timeouts.load(std::memory_order_relaxed);
    st.requestsHandled += l->counters.requestsHandled.load(std::memory_order_relaxed);
    st.requestsRejected += l->counters.requestsRejected.load(std::memory_order_relaxed);
    st.clientCertificateRequired += l->counters.clientCertificateRequired.load(std::memory_order_relaxed);
    st.shutdownClosedConnections += l->counters.shutdownClosed.load(std::memory_order_relaxed);
  }
  if (s.clientCas) {
    st.clientCaReloads = s.clientCas->reloads();
    st.clientCaReloadFailures = s.clientCas->failures();
  }
  st.certificateReloads = s.certificates.reloads();
  st.certificateReloadFailures = s.certificates.failures();
  return st;
}

// ---------------------------------------------------------------------------
// The event loop.

EventLoop::~EventLoop() {
  closeAll();
  if (epfd_ >= 0) ::close(epfd_);
  if (wakeFd_ >= 0) ::close(wakeFd_);
}

void EventLoop::closeAll() {
  for (auto& list : lists_) {
    while (list.next != &list) closeNow(static_cast<Connection*>(list.next));
  }
  graveyard_.clear();
  std::lock_guard lock(inboxMutex_);
  for (auto& [fd, peer] : inbox_) {
    ::close(fd);
    server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
  }
  inbox_.clear();
}

bool EventLoop::init(std::string& error) {
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wakeFd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epfd_ < 0 || wakeFd_ < 0) {
    error = std::string("epoll/eventfd: ") + std::strerror(errno);
    return false;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &gWakeTag;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, wakeFd_, &ev) != 0) {
    error = std::string("epoll_ctl: ") + std::strerror(errno);
    return false;
  }
  ev.data.ptr = &gStopTag;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, server_.stopFd, &ev) != 0) {
    error = std::string("epoll_ctl: ") + std::strerror(errno);
    return false;
  }
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.ptr = &gListenTag;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, server_.listenFd, &ev) != 0) {
    error = std::string("epoll_ctl: ") + std::strerror(errno);
    return false;
  }
  listening_ = true;
  return true;
}

void EventLoop::post(int fd, const sockaddr_storage& peer) {
  {
    std::lock_guard lock(inboxMutex_);
    inbox_.emplace_back(fd, peer);
  }
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t r = ::write(wakeFd_, &one, sizeof one);
}

void EventLoop::run() {
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  now_ = Clock::now();
  nextCertPoll_ = now_ + server_.config.certificatePollInterval;
  Clock::time_point nextTick = now_ + kTick;
  for (;;) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(nextTick - now_).count();
    const int n = ::epoll_wait(epfd_, events, kMaxEvents, static_cast<int>(std::clamp<long long>(wait, 0, 1000)));
    if (n < 0 && errno != EINTR) {
      server_.log(std::string("epoll_wait failed: ") + std::strerror(errno));
      beginStop();
      break;
    }
    now_ = Clock::now();
    for (int i = 0; i < n; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == &gListenTag) {
        acceptMany();
      } else if (tag == &gWakeTag) {
        std::uint64_t v;
        [[maybe_unused]] ssize_t r = ::read(wakeFd_, &v, sizeof v);
        drainInbox();
      } else if (tag == &gStopTag) {
        beginStop();
      } else {
        auto* c = static_cast<Connection*>(tag);
        if (!c->closed) onEvent(c, events[i].events);
      }
    }
    graveyard_.clear();
    if (now_ >= nextTick) {
      tick();
      graveyard_.clear();
      nextTick = now_ + kTick;
    }
    // Every loop waits for the last connection of all loops: a loop that
    // accepted just before the stop may still hand one over (see acceptMany).
    if (stopping_ && server_.connectionsOpen.load() == 0) break;
  }
  // Whatever is left (only after an epoll failure) is closed by the destructor.
}

void EventLoop::tick() {
  expireTimers();
  if (listenerPaused_ && !stopping_) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.ptr = &gListenTag;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, server_.listenFd, &ev) == 0) {
      listenerPaused_ = false;
      listening_ = true;
    }
  }
  if (index_ == 0 && !stopping_ && server_.config.certificatePollInterval.count() > 0 && now_ >= nextCertPoll_) {
    nextCertPoll_ = now_ + server_.config.certificatePollInterval;
    server_.pollCertificateFiles();
  }
  if (stopping_ && now_ >= stopDeadline_ && open_.load(std::memory_order_relaxed) > 0) closeEverything();
}

// A batch at a time, so that a flood of connections does not starve the
// connections this loop serves; everything the backlog holds when stopping.
void EventLoop::acceptMany(bool untilEmpty) {
  if (!listening_) return;
  for (std::size_t i = 0; untilEmpty || i < kAcceptBatch; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int fd = ::accept4(server_.listenFd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: stop listening until the next tick instead of
        // spinning on a readable listener.
        ::epoll_ctl(epfd_, EPOLL_CTL_DEL, server_.listenFd, nullptr);
        listening_ = false;
        listenerPaused_ = true;
      }
      return;
    }
    server_.connectionsAccepted.fetch_add(1, std::memory_order_relaxed);
    if (server_.connectionsOpen.fetch_add(1, std::memory_order_relaxed) >= server_.config.maxConnections) {
      server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
      server_.connectionsRefused.fetch_add(1, std::memory_order_relaxed);
      ::close(fd);
      continue;
    }
    // Once stopping, loops may be on their way out: keep the connection. (The
    // count above is made before this load, and a loop leaves only when the
    // count is zero after stopRequested was set, so a loop that could still
    // be picked here has not left.)
    EventLoop* target = server_.stopRequested.load() ? this : server_.pickLoop(this);
    if (target == this) {
      adopt(fd, peer);
    } else {
      target->open_.fetch_add(1, std::memory_order_relaxed);  // counted now, so the next pick sees it
      target->post(fd, peer);
    }
  }
}

void EventLoop::drainInbox() {
  std::vector<std::pair<int, sockaddr_storage>> items;
  {
    std::lock_guard lock(inboxMutex_);
    items.swap(inbox_);
  }
  for (auto& [fd, peer] : items) {
    open_.fetch_sub(1, std::memory_order_relaxed);  // adopt() counts it again
    adopt(fd, peer);
  }
}

// Also while stopping: an accepted client is answered, not reset.
void EventLoop::adopt(int fd, const sockaddr_storage& peer) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto owned = std::make_unique<Connection>();
  Connection* c = owned.get();
  c->fd = fd;
  c->peer = formatPeer(peer);
  c->ssl = SSL_new(server_.ctx);
  if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
    ERR_clear_error();
    if (c->ssl) SSL_free(c->ssl);
    ::close(fd);
    server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  SSL_set_accept_state(c->ssl);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = c;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    SSL_free(c->ssl);
    ::close(fd);
    server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  c->interest = EPOLLIN;
  owned.release();  // owned by the timer lists from here; freed via closeNow()
  open_.fetch_add(1, std::memory_order_relaxed);
  setPhase(c, kHandshake, now_ + server_.config.handshakeTimeout);
  // The ClientHello is usually there already.
  handshake(c);
}

// Graceful shutdown, as Go's http.Server.Shutdown or nginx's graceful quit
// (and more careful about the bytes already received): no client that sent
// a request before the stop sees a reset or a truncated response.
void EventLoop::beginStop() {
  if (stopping_) return;
  stopping_ = true;
  stopDeadline_ = now_ + server_.config.shutdownTimeout;
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, server_.stopFd, nullptr);
  if (listening_) ::epoll_ctl(epfd_, EPOLL_CTL_DEL, server_.listenFd, nullptr);
  // Connections completed by the kernel but not accepted yet are clients
  // about to send a request: closing the listener now would reset them.
  if (!server_.listenerShut.load()) {
    listening_ = true;
    acceptMany(/*untilEmpty=*/true);
    server_.releaseListener();
  }
  listening_ = false;
  listenerPaused_ = false;
  drainInbox();  // handed over before the stop: served like the others

  std::vector<Connection*> all;
  for (auto& list : lists_) {
    for (TimerNode* n = list.next; n != &list; n = n->next) all.push_back(static_cast<Connection*>(n));
  }
  for (Connection* c : all) {
    if (!c->closed) drainOnStop(c);
  }
}

// What one connection does when the server starts stopping. Responses given
// from now on say "Connection: close" (dispatch) and the connection closes
// after them (settle).
void EventLoop::drainOnStop(Connection* c) {
  switch (c->phase) {
    case kHandshake:  // finishes (or times out); then its request is answered
    case kLinger:     // already closing
      return;
    case kIdle:
    case kRequest:
      // A response being written: the connection closes after it.
      if (c->outPending()) return;
      // A request may wait in the kernel's socket buffer or in OpenSSL's,
      // where epoll does not see it: read it now and answer it. A request
      // partly received is completed (requestTimeout) and answered; a
      // connection that finished its handshake but sent nothing yet gets its
      // first request answered too.
      readable(c);
      // Nothing pending on a keep-alive connection: close it with
      // close_notify and a FIN, lingering so that a request racing the close
      // meets a clean EOF, not a reset.
      if (!c->closed && c->phase == kIdle) closeGracefully(c);
      return;
    default:
      return;
  }
}

// shutdownTimeout has passed: whatever is still open goes now.
void EventLoop::closeEverything() {
  std::size_t closed = 0;
  for (auto& list : lists_) {
    while (list.next != &list) {
      closeNow(static_cast<Connection*>(list.next));
      counters.bump(counters.shutdownClosed);
      ++closed;
    }
  }
  server_.log("shutdown timeout reached; closed " + std::to_string(closed) + " connection(s) still open");
}

void EventLoop::setPhase(Connection* c, Phase p, Clock::time_point deadline) {
  c->unlink();
  c->phase = p;
  c->deadline = deadline;
  c->pushBack(lists_[p]);
}

void EventLoop::setInterest(Connection* c, std::uint32_t events) {
  if (c->interest == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = c;
  ::epoll_ctl(epfd_, EPOLL_CTL_MOD, c->fd, &ev);
  c->interest = events;
}

void EventLoop::expireTimers() {
  for (auto& list : lists_) {
    while (list.next != &list) {
      auto* c = static_cast<Connection*>(list.next);
      if (c->deadline > now_) break;
      onTimeout(c);  // closes the connection or moves it to another list
    }
  }
}

void EventLoop::onTimeout(Connection* c) {
  switch (c->phase) {
    case kHandshake:
      counters.bump(counters.timeouts);
      counters.bump(counters.handshakeFailures);
      closeNow(c);
      return;
    case kRequest:
      counters.bump(counters.timeouts);
      if (c->outPending() || !c->tlsUp) {
        closeNow(c);  // the client does not read its response
      } else if (c->buffered() > 0 || c->headReady) {
        reject(c, 408, "request not received in time");  // slowloris, a body that never ends
      } else {
        closeGracefully(c, /*linger=*/false);  // handshake done, no request
      }
      return;
    case kIdle:
      closeGracefully(c, /*linger=*/false);
      return;
    case kLinger:
    default:
      closeNow(c);
      return;
  }
}

void EventLoop::onEvent(Connection* c, std::uint32_t events) {
  if (events & EPOLLERR) {
    closeNow(c);
    return;
  }
  switch (c->phase) {
    case kHandshake:
      handshake(c);
      return;
    case kLinger:
      drainLinger(c);
      return;
    default:
      if (c->outPending()) {
        if (flush(c)) {
          processInput(c);  // pipelined requests held back while we wrote
          if (!c->closed && c->phase != kLinger && !c->outPending()) readable(c);
        }
      } else {
        readable(c);
      }
      return;
  }
}

void EventLoop::handshake(Connection* c) {
  if (!c->plainChecked) {
    unsigned char first = 0;
    ssize_t r = ::recv(c->fd, &first, 1, MSG_PEEK);
    if (r == 0) {
      closeNow(c);  // connected and left (a TCP probe)
      return;
    }
    if (r < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) closeNow(c);
      return;
    }
    c->plainChecked = true;
    if (first != 0x16) {  // not a TLS handshake record
      counters.bump(counters.handshakeFailures);
      if (first >= 'A' && first <= 'Z') {  // looks like an HTTP method
        [[maybe_unused]] ssize_t w =
            ::send(c->fd, kPlainHttpAnswer, sizeof kPlainHttpAnswer - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        closeGracefully(c);
      } else {
        closeNow(c);
      }
      return;
    }
  }
  ERR_clear_error();
  const int r = SSL_do_handshake(c->ssl);
  if (r == 1) {
    c->tlsUp = true;
    // A resumed session carries the certificate (and verify result) of the
    // handshake that created it; sessions from another client CA bundle are
    // not resumed (ClientCaBundle::useOn).
    c->clientVerified = server_.clientCas && SSL_get0_peer_certificate(c->ssl) != nullptr &&
                        SSL_get_verify_result(c->ssl) == X509_V_OK;
    c->inRequest = true;  // the first request must come within requestTimeout
    setPhase(c, kRequest, now_ + server_.config.requestTimeout);
    setInterest(c, EPOLLIN);
    readable(c);  // the request may have come with the client's Finished
    return;
  }
  switch (SSL_get_error(c->ssl, r)) {
    case SSL_ERROR_WANT_READ:
      setInterest(c, EPOLLIN);
      return;
    case SSL_ERROR_WANT_WRITE:
      setInterest(c, EPOLLOUT);
      return;
    default:
      // Wrong version, no shared cipher, no or bad client certificate, or the
      // peer went away. OpenSSL has already sent the alert where it could.
      ERR_clear_error();
      counters.bump(counters.handshakeFailures);
      closeNow(c);
      return;
  }
}

void EventLoop::readable(Connection* c) {
  for (std::size_t reads = 0; reads < kMaxReadsPerEvent || SSL_has_pending(c->ssl); ++reads) {
    ERR_clear_error();
    const int n = SSL_read(c->ssl, readBuf_.data(), static_cast<int>(readBuf_.size()));
    if (n > 0) {
      if (!c->inRequest) {  // the first byte of a request starts its timer
        c->inRequest = true;
        setPhase(c, kRequest, now_ + server_.config.requestTimeout);
      }
      c->in.append(readBuf_.data(), static_cast<std::size_t>(n));
      processInput(c);
      if (c->closed || c->phase == kLinger || c->outPending() || c->closeAfterWrite) return;
      continue;
    }
    switch (SSL_get_error(c->ssl, n)) {
      case SSL_ERROR_WANT_READ:
        setInterest(c, EPOLLIN);
        return;
      case SSL_ERROR_WANT_WRITE:
        setInterest(c, EPOLLOUT);
        return;
      case SSL_ERROR_ZERO_RETURN:
        // close_notify or EOF. Complete requests were answered as they came;
        // a partial one is abandoned (the client went away mid-request).
        closeNow(c);
        return;
      default:
        ERR_clear_error();
        closeNow(c);
        return;
    }
  }
}

void EventLoop::processInput(Connection* c) {
  const ServerConfig& cfg = server_.config;
  while (!c->closeAfterWrite && !c->writeBlocked) {
    if (!c->headReady) {
      // Empty lines before a request line are allowed (RFC 9112 §2.2).
      while (c->inPos < c->in.size() && (c->in[c->inPos] == '\r' || c->in[c->inPos] == '\n')) ++c->inPos;
      c->scanPos = std::max(c->scanPos, c->inPos);
      const std::size_t avail = c->buffered();
      if (avail == 0) break;
      std::string_view view(c->in.data() + c->inPos, avail);
      std::size_t resume = 0;
      const std::size_t end = http1::findHeadEnd(view, c->scanPos - c->inPos, resume);
      if (end == http1::kNotFound) {
        c->scanPos = c->inPos + resume;
        if (avail > cfg.maxHeaderBytes) reject(c, 431, "request header fields too large");
        break;
      }
      if (end > cfg.maxHeaderBytes) {
        reject(c, 431, "request header fields too large");
        break;
      }
      const http1::Head head = http1::parseHead(view.substr(0, end), kMaxHeaders, nullptr);
      if (head.status != 0) {
        reject(c, head.status, head.error);
        break;
      }
      if (head.contentLength > cfg.maxBodyBytes) {
        reject(c, 413, "request body larger than " + std::to_string(cfg.maxBodyBytes) + " bytes");
        break;
      }
      c->headReady = true;
      c->headLen = end;
      c->bodyLen = static_cast<std::size_t>(head.contentLength);
      c->keepAlive = head.keepAlive;
      c->keepAlive10 = head.http10 && head.keepAlive;
      c->headMethod = head.headMethod;
      if (head.expectContinue && !head.http10 && c->bodyLen > 0 && avail < end + c->bodyLen) {
        c->out.append("HTTP/1.1 100 Continue\r\n\r\n");
        if (!flush(c)) return;
      }
    }
    if (c->buffered() < c->headLen + c->bodyLen) break;
    dispatch(c);
  }

  if (c->closed) return;
  if (c->inPos == c->in.size()) {
    c->in.clear();
    c->inPos = c->scanPos = 0;
    if (c->in.capacity() > kKeepBufferCapacity) std::string().swap(c->in);
  } else if (c->inPos > 0 && (c->inPos >= kKeepBufferCapacity || c->inPos * 2 >= c->in.size())) {
    c->in.erase(0, c->inPos);
    c->scanPos -= c->inPos;
    c->inPos = 0;
  }
  if (c->phase == kLinger) return;
  if (c->outPending() && !flush(c)) return;
  settle(c);
}

void EventLoop::dispatch(Connection* c) {
  HttpRequest& req = request_;
  std::string_view whole(c->in.data() + c->inPos, c->headLen + c->bodyLen);
  http1::parseHead(whole.substr(0, c->headLen), kMaxHeaders, &req);
  req.body.assign(whole.substr(c->headLen));
  req.peer = c->peer;
  req.clientCertificateVerified = c->clientVerified;
  c->inPos += c->headLen + c->bodyLen;
  c->scanPos = c->inPos;
  c->headReady = false;
  c->inRequest = false;
  if (server_.requiresClientCertificate(*c, req.path)) {
    counters.bump(counters.clientCertificateRequired);
    http1::appendError(c->out, 403, "a verified client certificate is required for " + req.path +
                                        " (only the health probes are served without one)");
    c->closeAfterWrite = true;
    return;
  }
  const bool moreReceived = c->buffered() > 0 || SSL_has_pending(c->ssl);

  counters.bump(counters.requestsHandled);
  HttpResponse response;
  bool failed = false;
  try {
    response = server_.handler(req);
  } catch (const std::exception& e) {
    failed = true;
    http1::appendError(c->out, 500, std::string("handler failed: ") + e.what());
  } catch (...) {
    failed = true;
    http1::appendError(c->out, 500, "handler failed");
  }
  // Once a stop is requested (perhaps while the handler ran), the last
  // request received says "Connection: close"; one pipelined behind it
  // (already here) is answered first.
  const bool stopRequested = stopping_ || server_.stopRequested.load(std::memory_order_relaxed);
  const bool close = !c->keepAlive || (stopRequested && !moreReceived);
  if (!failed) http1::appendResponse(c->out, response, close, c->keepAlive10 && !close, c->headMethod);
  if (close || failed) c->closeAfterWrite = true;
}

void EventLoop::reject(Connection* c, int status, std::string_view message) {
  counters.bump(counters.requestsRejected);
  http1::appendError(c->out, status, message);
  c->closeAfterWrite = true;
  c->headReady = false;
  c->inPos = c->in.size();  // whatever else came is dropped
  if (flush(c)) settle(c);
}

// Writes what is pending. True when all of it went out; false when the socket
// is full (interest switched to writable) or the connection was closed.
bool EventLoop::flush(Connection* c) {
  while (c->outPending()) {
    ERR_clear_error();
    const std::size_t left = c->out.size() - c->outPos;
    const int n = SSL_write(c->ssl, c->out.data() + c->outPos, static_cast<int>(std::min<std::size_t>(left, INT_MAX)));
    if (n > 0) {
      c->outPos += static_cast<std::size_t>(n);
      continue;
    }
    const int err = SSL_get_error(c->ssl, n);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      setInterest(c, err == SSL_ERROR_WANT_WRITE ? EPOLLOUT : EPOLLIN);
      if (!c->writeBlocked) {  // the client has requestTimeout to take the response
        c->writeBlocked = true;
        setPhase(c, kRequest, now_ + server_.config.requestTimeout);
      }
      return false;
    }
    ERR_clear_error();
    closeNow(c);
    return false;
  }
  c->writeBlocked = false;
  c->out.clear();
  c->outPos = 0;
  if (c->out.capacity() > kKeepBufferCapacity) std::string().swap(c->out);
  return true;
}

// After the output is flushed: close, wait for the next request, or keep the
// running request's timer.
void EventLoop::settle(Connection* c) {
  if (c->closed || c->phase == kLinger) return;
  if (c->closeAfterWrite) {
    closeGracefully(c);
    return;
  }
  setInterest(c, EPOLLIN);
  if (c->buffered() > 0 || c->headReady) {
    if (!c->inRequest || c->phase != kRequest) {  // a pipelined request: its timer starts now
      c->inRequest = true;
      setPhase(c, kRequest, now_ + server_.config.requestTimeout);
    }
    return;
  }
  if (c->inRequest && c->phase == kRequest) return;  // waiting for the first request after the handshake
  if (stopping_) {
    closeGracefully(c);
    return;
  }
  if (c->phase != kIdle) setPhase(c, kIdle, now_ + server_.config.idleTimeout);
}

// Sends close_notify and a FIN. With `linger` (after a response), then reads
// and drops what the client still sends until it closes (or kLingerTimeout),
// so that unread request bytes do not turn our close into a reset that would
// destroy the response in flight. Without (nothing was answered), closes.
void EventLoop::closeGracefully(Connection* c, bool linger) {
  if (c->closed || c->phase == kLinger) return;
  if (c->tlsUp) {
    ERR_clear_error();
    SSL_shutdown(c->ssl);
    ERR_clear_error();
  }
  if (!linger) {
    closeNow(c);
    return;
  }
  ::shutdown(c->fd, SHUT_WR);
  setPhase(c, kLinger, now_ + kLingerTimeout);
  setInterest(c, EPOLLIN);
}

void EventLoop::drainLinger(Connection* c) {
  for (;;) {
    const ssize_t r = ::recv(c->fd, readBuf_.data(), readBuf_.size(), MSG_DONTWAIT);
    if (r > 0) {
      c->lingerBytes += static_cast<std::size_t>(r);
      if (c->lingerBytes > kLingerMaxBytes) break;
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (r < 0 && errno == EINTR) continue;
    break;  // EOF or error
  }
  closeNow(c);
}

void EventLoop::closeNow(Connection* c) {
  if (c->closed) return;
  c->closed = true;
  c->unlink();
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c->fd, nullptr);
  SSL_free(c->ssl);
  c->ssl = nullptr;
  ::close(c->fd);
  c->fd = -1;
  open_.fetch_sub(1, std::memory_order_relaxed);
  server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
  graveyard_.emplace_back(c);
}

}  // namespace gpuguard::webhook
