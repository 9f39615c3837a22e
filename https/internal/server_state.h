// Internals of HttpsServer, shared by its source files and by nothing else:
//   https/server.cpp             setup, teardown and the public API;
//   https/internal/event_loop.cpp  one event loop: accepting, adopting, timers, stopping;
//   https/internal/connection.cpp  one connection: handshake, reading, dispatch, writing, closing;
//   https/internal/judge_pool.cpp  the judging pool for large requests.
//
// The event loops of HttpsServer. One loop per thread, each with its own
// epoll set (level-triggered). All loops wait on the one listening socket
// with EPOLLEXCLUSIVE; whoever accepts hands the connection to the loop with
// the fewest connections, which then owns it for life (handshake, requests,
// handler calls, close). A connection is in exactly one of four phases, each
// with a fixed timeout, and sits in that phase's FIFO list: deadlines in one
// list are therefore sorted, and expiring them is O(expired).
#pragma once

#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <openssl/ssl.h>

#include "https/internal/certificate_store.h"
#include "https/internal/http1.h"
#include "https/server.h"

namespace gpuguard::webhook::https_detail {

using Clock = std::chrono::steady_clock;

inline constexpr std::size_t kReadChunk = 16 * 1024 + 256;  // one full TLS record's plaintext fits
inline constexpr std::size_t kMaxHeaders = 128;
inline constexpr std::size_t kAcceptBatch = 64;
inline constexpr std::size_t kMaxReadsPerEvent = 16;
inline constexpr std::size_t kLingerMaxBytes = 1 << 20;
inline constexpr std::size_t kKeepBufferCapacity = 64 * 1024;  // larger buffers are released between requests
inline constexpr auto kTick = std::chrono::milliseconds(100);
inline constexpr auto kLingerTimeout = std::chrono::milliseconds(1000);

// TLS 1.2: forward secrecy and AEAD only. TLS 1.3 suites are all AEAD.
inline constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
inline constexpr const char* kTls13Suites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

#define GPUGUARD_PLAIN_HTTP_BODY "{\"error\": \"client sent an HTTP request to an HTTPS server\"}\n"
inline constexpr char kPlainHttpAnswer[] =
    "HTTP/1.1 400 Bad Request\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 60\r\n"
    "Connection: close\r\n"
    "\r\n" GPUGUARD_PLAIN_HTTP_BODY;
static_assert(sizeof(GPUGUARD_PLAIN_HTTP_BODY) - 1 == 60);
#undef GPUGUARD_PLAIN_HTTP_BODY

// Phases double as indices of the per-loop timer lists.
enum Phase : std::uint8_t {
  kHello,      // accepted; the first record of the ClientHello is not all here yet, and no
               // OpenSSL state exists; handshakeTimeout from the accept
  kHandshake,  // TLS handshake; handshakeTimeout from the accept
  kRequest,    // a request is being received or its response sent; requestTimeout
  kIdle,       // keep-alive, nothing buffered; idleTimeout
  kLinger,     // we sent our last bytes and a FIN; drain until the peer closes
  kJudging,    // the request is with the judging pool; until its deadline (the API server's timeout)
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

struct Job;

struct Connection : TimerNode {
  int fd = -1;
  SSL* ssl = nullptr;
  Phase phase = kHello;
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
  // OpenSSL's last call on this connection stopped for a writable socket
  // (WANT_WRITE): wait for EPOLLOUT instead of EPOLLIN (see updateInterest).
  bool waitWritable = false;
  bool closed = false;
  bool clientVerified = false;  // a client certificate was presented and verified
  // The body of the request whose head is parsed is refused (see
  // EventLoop::admitBody): its bytes are dropped as they come, and the answer
  // goes out once the last of them (discardLeft) is in.
  enum class Refusal : std::uint8_t { None, OverLimit, OverBudget, BudgetInUse, ClientCertificate } refusal = Refusal::None;
  std::size_t discardLeft = 0;
  std::size_t reservedBody = 0;  // of the server's body budget, for the request being received or judged
  // The body being received counts against the budget as its bytes arrive
  // (EventLoop::chargeReceivedBody), not as its head announces them.
  bool bodyBudgeted = false;
  // The judging pool has its request: the loop neither reads nor frees the
  // connection until the answer is back (closeNow only marks it closed).
  bool judging = false;
  Job* job = nullptr;  // while judging: the job, to abandon it when the client goes
  Clock::time_point requestBegan;  // first byte of the request being received
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
  std::atomic<std::uint64_t> wakeups{0};  // epoll_wait returns
  std::atomic<std::uint64_t> acceptFailures{0};  // out of descriptors or memory (EMFILE...)
  std::atomic<std::uint64_t> handshakesEvicted{0};  // closed in their handshake to make room
  std::atomic<std::uint64_t> unverifiedEvicted{0};  // mutual TLS: closed without a client certificate, to make room
  std::atomic<std::uint64_t> judgingRejected{0};  // queue full: 503
  std::atomic<std::uint64_t> bodyBudgetRejected{0};  // body budget in use: 503
  // Answers of the judging pool not wanted any more, by reason (Abandon - 1):
  // never judged, or judged and thrown away.
  std::atomic<std::uint64_t> judgingDropped[3] = {};
  std::atomic<std::uint64_t> judgingDiscarded[3] = {};
  void bump(std::atomic<std::uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
};

std::string formatPeer(const sockaddr_storage& ss);
unsigned usableCpus();  // see https/server.cpp

class EventLoop;
struct Connection;

// Runs the handler; an exception becomes `failure` ("handler failed: ...").
bool callHandler(const Handler& handler, const HttpRequest& request, HttpResponse& response, std::string& failure);

// Why a job's answer is not wanted any more (JudgeStats counts them by reason).
enum class Abandon : std::uint8_t {
  None,
  ClientGone,  // the client closed or reset the connection
  Deadline,    // the API server's timeout for the request has passed
  Shutdown,    // --shutdown-timeout ran out
  kCount
};
inline constexpr int kAbandonReasons = static_cast<int>(Abandon::kCount) - 1;
inline constexpr int reasonIndex(Abandon why) { return static_cast<int>(why) - 1; }
static_assert(kAbandonReasons == 3, "LoopCounters and ServerStats hold one counter per reason");

// A request handed to the judging pool, and its answer on the way back to
// the loop that owns the connection.
struct Job {
  EventLoop* loop = nullptr;
  Connection* connection = nullptr;
  bool moreReceived = false;  // a pipelined request was already buffered behind it
  Clock::time_point deadline;  // the API server gives up then (requestDeadline)
  HttpRequest request;
  HttpResponse response;
  bool ok = false;
  bool judged = false;  // the handler ran (false: dropped before judging)
  std::string failure;
  // Set by the loop, read by the judging thread: the answer is not wanted.
  std::atomic<Abandon> abandoned{Abandon::None};

  void abandon(Abandon why) {
    Abandon none = Abandon::None;
    abandoned.compare_exchange_strong(none, why, std::memory_order_relaxed);
  }
  // Why the answer is not wanted at `now`, or None.
  Abandon unwanted(Clock::time_point now) const {
    const Abandon why = abandoned.load(std::memory_order_relaxed);
    if (why != Abandon::None) return why;
    return now >= deadline ? Abandon::Deadline : Abandon::None;
  }
};

struct JudgeStats {
  std::uint64_t queued = 0;   // waiting for a judging thread now
  std::uint64_t judging = 0;  // being judged now
};

// Threads that run the handler for requests too large to judge on an event
// loop (see ServerConfig::judgeOffLoopBytes): while one of them spends
// 0.2-0.5 s on a 3 MiB object, the loop keeps serving its other connections.
// The queue is bounded (maxQueued waiting jobs): beyond it the loop answers
// 503 at once, and the API server retries after Retry-After within its own
// timeout, instead of the request waiting behind work it would time out on.
// A job whose client has gone or whose deadline has passed is not judged;
// one that becomes so while judged has its answer discarded.
class JudgePool {
 public:
  JudgePool(const Handler& handler, unsigned threads, std::size_t maxQueued);
  ~JudgePool();  // drops the queued jobs (their connections are closed by now), waits for the running ones
  JudgePool(const JudgePool&) = delete;
  JudgePool& operator=(const JudgePool&) = delete;
  // False when the queue is full; `job` then stays with the caller.
  bool trySubmit(std::unique_ptr<Job>& job);
  JudgeStats stats() const;

 private:
  void work();
  void finish(std::unique_ptr<Job> job);

  const Handler& handler_;
  const std::size_t maxQueued_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::atomic<std::uint64_t> judging_{0};
};

// When the API server gives up on a request: it sends its webhook timeout as
// the `timeout` query parameter of the webhook URL (client-go's
// Request.Timeout, a Go duration such as "10s" or "9.5s"; see
// request_deadline.h). Counted from the request's first byte.
Clock::time_point requestDeadline(const HttpRequest& request, Clock::time_point began,
                                  std::chrono::milliseconds fallback);

// Tags for the non-connection entries of an epoll set.
extern char gListenTag, gWakeTag, gStopTag;

class EventLoop;

// Everything the loops share. (HttpsServer::Impl is this; it is private.)

struct ServerState {
  ServerConfig config;
  http1::FramingLimits framing;  // from config
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
  std::atomic<bool> outOfDescriptors{false};
  std::size_t handshakesPerLoop = SIZE_MAX;  // config.maxHandshakes shared out among the loops
  // Connections the loops closed at shutdownTimeout, and how many of them were being judged.
  std::atomic<std::size_t> shutdownCut{0}, shutdownCutJudging{0};  // accept failed with EMFILE and friends; logged once per burst
  std::vector<std::unique_ptr<EventLoop>> loops;
  std::unique_ptr<JudgePool> pool;  // destroyed before the loops: its answers go to them

  std::atomic<std::uint64_t> connectionsAccepted{0};
  std::atomic<std::uint64_t> connectionsRefused{0};
  std::atomic<std::uint64_t> connectionsOpen{0};
  // Of config.bodyBudgetBytes: the bodies of kBudgetedBodyBytes or more held now.
  std::atomic<std::size_t> bodyBytesReserved{0};

  // A body's bytes out of the budget, or false (nothing reserved) when
  // they are not left.
  bool reserveBody(std::size_t bytes) {
    std::size_t held = bodyBytesReserved.load(std::memory_order_relaxed);
    do {
      if (bytes > config.bodyBudgetBytes || held > config.bodyBudgetBytes - bytes) return false;
    } while (!bodyBytesReserved.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return true;
  }
  void releaseBody(std::size_t bytes) { bodyBytesReserved.fetch_sub(bytes, std::memory_order_relaxed); }
  // Whether `bytes` more would fit now (nothing reserved).
  bool budgetHasRoomFor(std::size_t bytes) const {
    const std::size_t held = bodyBytesReserved.load(std::memory_order_relaxed);
    return bytes <= config.bodyBudgetBytes && held <= config.bodyBudgetBytes - bytes;
  }

  // A body over maxBodyBytes is read and dropped before its 413 (so the
  // client reads a status, not a reset), up to twice that; a Content-Length
  // beyond is answered at once.
  static std::size_t discardBound(std::size_t maxBodyBytes) {
    return maxBodyBytes > SIZE_MAX / 2 ? SIZE_MAX : 2 * maxBodyBytes;
  }

  ServerState(ServerConfig c, Handler h)
      : config(std::move(c)),
        framing{config.maxHeaderBytes, kMaxHeaders, discardBound(config.maxBodyBytes)},
        handler(std::move(h)),
        certificates(config.certFile, config.keyFile) {
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
  void checkCertificateExpiry(std::int64_t nowSeconds);
  std::mutex expiryMutex;  // the last expiry state logged, per certificate
  std::string expiryLoggedFingerprint;
  int expiryLoggedState = 0;
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
  // From a judging-pool thread: the answer to a job this loop submitted.
  void complete(std::unique_ptr<Job> job);
  // After run() returned: close whatever is left.
  void closeAll();
  std::size_t inPhase(Phase p) const { return phaseCount_[p].load(std::memory_order_relaxed); }
  LoopCounters counters;

 private:
  // Accepting and adopting.
  void acceptMany(bool untilEmpty = false);
  void pauseListener(int error);
  // Closes the oldest connection still in its handshake (kHello first, then
  // kHandshake; `tlsOnly`: kHandshake only) to make room for a new one.
  bool evictOldestHandshake(bool tlsOnly);
  bool evictOldestUnverified();
  void adopt(int fd, const sockaddr_storage& peer);
  void drainInbox();
  void drainAnswers();
  void countUnwanted(const Job& job, Abandon why);
  void beginStop();
  void drainOnStop(Connection* c);
  void closeEverything();

  // Per-connection work.
  void onEvent(Connection* c, std::uint32_t events);
  void handshake(Connection* c);
  bool clientHelloArrived(Connection* c);
  bool startTls(Connection* c);
  void readable(Connection* c);
  void processInput(Connection* c);
  bool admitBody(Connection* c, bool expectContinue);
  bool discardBody(Connection* c);
  bool chargeReceivedBody(Connection* c);
  void releaseBody(Connection* c);
  void dispatch(Connection* c);
  void judgeOffLoop(Connection* c, std::unique_ptr<Job> job, bool moreReceived);
  void answer(Connection* c, bool ok, const HttpResponse& response, const std::string& failure, bool moreReceived);
  void resume(Connection* c);
  void reject(Connection* c, int status, std::string_view message);
  bool flush(Connection* c);
  void settle(Connection* c);
  void drainLinger(Connection* c);
  void onTimeout(Connection* c);
  void closeGracefully(Connection* c, bool linger = true);
  void closeNow(Connection* c);
  void release(Connection* c);

  void setPhase(Connection* c, Phase p, Clock::time_point deadline);
  // The one place a connection's epoll interest is decided, from its state:
  // called after every piece of work on a connection (event, adoption,
  // answer, timeout, stop), never in the middle of one.
  void updateInterest(Connection* c);
  // A judged connection's client is gone (or its deadline passed, or the
  // shutdown timeout): the job is abandoned and the connection closed.
  void abandonJudging(Connection* c, Abandon why);
  void expireTimers();
  void tick();

  ServerState& server_;
  const unsigned index_;
  int epfd_ = -1;
  int wakeFd_ = -1;
  bool listening_ = false;
  bool listenerPaused_ = false;  // after EMFILE and friends, until the next tick
  bool stopping_ = false;
  bool stopDeadlinePassed_ = false;  // everything was closed at shutdownTimeout: leave without waiting
  Clock::time_point stopDeadline_;
  Clock::time_point now_;
  Clock::time_point nextCertPoll_;
  TimerNode lists_[kPhases];
  // Connections in each list; written by this loop only, read by stats().
  std::atomic<std::size_t> phaseCount_[kPhases] = {};
  std::atomic<std::size_t> open_{0};
  std::vector<std::unique_ptr<Connection>> graveyard_;  // freed after each batch of events
  std::vector<char> readBuf_;
  HttpRequest request_;  // reused for every request this loop dispatches

  std::mutex inboxMutex_;
  std::vector<std::pair<int, sockaddr_storage>> inbox_;
  std::vector<std::unique_ptr<Job>> answers_;  // under inboxMutex_ too
};

}  // namespace gpuguard::webhook::https_detail
