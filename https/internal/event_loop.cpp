// One event loop of HttpsServer (see server_state.h): its epoll set,
// accepting and handing over connections, the per-phase timer lists, and the
// graceful stop. The work on one connection is in connection.cpp.
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "https/internal/http1.h"
#include "https/internal/server_state.h"

namespace gpuguard::webhook::https_detail {

EventLoop::~EventLoop() {
  closeAll();
  if (epfd_ >= 0) ::close(epfd_);
  if (wakeFd_ >= 0) ::close(wakeFd_);
}

void EventLoop::closeAll() {
  for (auto& list : lists_) {
    while (list.next != &list) closeNow(static_cast<Connection*>(list.next));
  }
  std::lock_guard lock(inboxMutex_);
  for (auto& [fd, peer] : inbox_) {
    ::close(fd);
    server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
  }
  inbox_.clear();
  // Answers that came after the loop stopped (closeNow above left their
  // connections to them).
  for (auto& job : answers_) {
    Connection* c = job->connection;
    countUnwanted(*job, c->closed ? job->abandoned.load() : Abandon::Shutdown);
    c->judging = false;
    c->job = nullptr;
    if (c->closed) release(c);
    else closeNow(c);
  }
  answers_.clear();
  graveyard_.clear();
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

void EventLoop::complete(std::unique_ptr<Job> job) {
  {
    std::lock_guard lock(inboxMutex_);
    answers_.push_back(std::move(job));
  }
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t r = ::write(wakeFd_, &one, sizeof one);
}

void EventLoop::drainAnswers() {
  std::vector<std::unique_ptr<Job>> done;
  {
    std::lock_guard lock(inboxMutex_);
    done.swap(answers_);
  }
  for (auto& job : done) {
    Connection* c = job->connection;
    c->judging = false;
    c->job = nullptr;
    releaseBody(c);  // the pool has freed the request
    // Closed: the client left, the deadline or the shutdown timeout passed
    // while it was judged (the reason is in the job). Open but past its
    // deadline: the API server has given up and closes it anyway.
    const Abandon unwanted = c->closed ? job->abandoned.load() : job->unwanted(now_);
    if (unwanted != Abandon::None) {
      countUnwanted(*job, unwanted);
      if (c->closed) release(c);
      else closeNow(c);
      continue;
    }
    answer(c, job->ok, job->response, job->failure, job->moreReceived);
    resume(c);
    updateInterest(c);
  }
}

void EventLoop::countUnwanted(const Job& job, Abandon why) {
  if (why == Abandon::None) return;
  auto& perReason = job.judged ? counters.judgingDiscarded : counters.judgingDropped;
  counters.bump(perReason[reasonIndex(why)]);
}

void EventLoop::run() {
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  now_ = Clock::now();
  nextCertPoll_ = now_ + server_.config.certificatePollInterval;
  Clock::time_point nextTick = now_ + kTick;
  for (;;) {
    // Rounded up: truncated, the last fraction of a millisecond before each
    // tick became a 0 ms wait, and the loop spun through it (about a thousand
    // epoll_wait calls per tick).
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(nextTick - now_).count();
    const int n = ::epoll_wait(epfd_, events, kMaxEvents, static_cast<int>(std::clamp<long long>(wait, 0, 1000)));
    counters.bump(counters.wakeups);
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
        drainAnswers();
      } else if (tag == &gStopTag) {
        beginStop();
      } else {
        auto* c = static_cast<Connection*>(tag);
        if (c->closed) continue;
        onEvent(c, events[i].events);
        updateInterest(c);
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
    // Past shutdownTimeout, this loop has closed all of its own, and what
    // is still counted is being judged: its answer is not waited for.
    if (stopping_ && (server_.connectionsOpen.load() == 0 || stopDeadlinePassed_)) break;
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
  if (stopping_ && !stopDeadlinePassed_ && now_ >= stopDeadline_) closeEverything();
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
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pauseListener(errno);
      return;
    }
    if (server_.outOfDescriptors.exchange(false)) {
      server_.log("accepting connections again after running out of file descriptors");
    }
    server_.connectionsAccepted.fetch_add(1, std::memory_order_relaxed);
    if (server_.connectionsOpen.fetch_add(1, std::memory_order_relaxed) >= server_.config.maxConnections) {
      // Full: the oldest handshake of this loop makes room (its release
      // uncounts it), and the new connection stays here, where the room is.
      // Connections handed over to this loop but not adopted yet count too.
      if (evictOldestHandshake(/*tlsOnly=*/false) || (drainInbox(), evictOldestHandshake(/*tlsOnly=*/false)) ||
          evictOldestUnverified()) {
        adopt(fd, peer);
        continue;
      }
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

// Out of descriptors (or socket memory): the connection stays in the
// backlog. Stop listening until the next tick instead of spinning on a
// listener that stays readable; the first loop to notice logs it, once per
// burst (until an accept succeeds again).
void EventLoop::pauseListener(int error) {
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, server_.listenFd, nullptr);
  listening_ = false;
  listenerPaused_ = true;
  counters.bump(counters.acceptFailures);
  if (server_.outOfDescriptors.exchange(true)) return;
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  server_.log(std::string("cannot accept connections: ") + std::strerror(error) + " (" +
              (error == EMFILE ? "EMFILE" : error == ENFILE ? "ENFILE" : error == ENOBUFS ? "ENOBUFS" : "ENOMEM") +
              "); " + std::to_string(server_.connectionsOpen.load()) + " connection(s) open, file descriptor limit " +
              std::to_string(limit.rlim_cur) + "; new connections wait in the backlog, retried every 100 ms");
}

bool EventLoop::evictOldestHandshake(bool tlsOnly) {
  for (Phase p : {kHello, kHandshake}) {
    if (tlsOnly && p == kHello) continue;
    if (lists_[p].next == &lists_[p]) continue;
    counters.bump(counters.handshakesEvicted);
    closeNow(static_cast<Connection*>(lists_[p].next));  // the front: accepted first
    return true;
  }
  return false;
}

// Under mutual TLS, at the connection cap with no handshake to close: the
// oldest connection whose handshake ended without a verified certificate and
// that is between requests (it can only ever be answered a probe) makes
// room. 1,706 such connections, re-opened as they timed out, kept the API
// server's new connections out (red team 35 D5).
bool EventLoop::evictOldestUnverified() {
  if (!server_.clientCas) return false;
  for (Phase p : {kIdle, kRequest}) {
    for (TimerNode* n = lists_[p].next; n != &lists_[p]; n = n->next) {
      auto* c = static_cast<Connection*>(n);
      if (c->clientVerified || c->judging || c->buffered() > 0 || c->outPending()) continue;
      counters.bump(counters.unverifiedEvicted);
      closeNow(c);
      return true;
    }
  }
  return false;
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
  // No OpenSSL state yet (startTls): edge-triggered until the ClientHello is in.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.ptr = c;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(fd);
    server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  c->interest = ev.events;
  owned.release();  // owned by the timer lists from here; freed via closeNow()
  open_.fetch_add(1, std::memory_order_relaxed);
  setPhase(c, kHello, now_ + server_.config.handshakeTimeout);
  // The ClientHello is usually there already.
  handshake(c);
  updateInterest(c);
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
    if (c->closed) continue;
    drainOnStop(c);
    updateInterest(c);
  }
}

// What one connection does when the server starts stopping. Responses given
// from now on say "Connection: close" (dispatch) and the connection closes
// after them (settle).
void EventLoop::drainOnStop(Connection* c) {
  switch (c->phase) {
    case kHello:
    case kHandshake:  // finishes (or times out); then its request is answered
    case kLinger:     // already closing
    case kJudging:    // its answer says "Connection: close"; settle() closes it
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

// shutdownTimeout has passed: whatever is still open goes now, once (the
// loop then leaves; run() logs what all loops cut). A request being judged is abandoned: the handler cannot
// be interrupted, its answer is discarded.
void EventLoop::closeEverything() {
  stopDeadlinePassed_ = true;
  std::size_t closed = 0, judged = 0;
  for (auto& list : lists_) {
    while (list.next != &list) {
      auto* c = static_cast<Connection*>(list.next);
      if (c->judging) ++judged;
      closeNow(c);  // abandons the job of a judged connection (Abandon::Shutdown)
      counters.bump(counters.shutdownClosed);
      ++closed;
    }
  }
  // Logged once for all loops, by run().
  server_.shutdownCut.fetch_add(closed, std::memory_order_relaxed);
  server_.shutdownCutJudging.fetch_add(judged, std::memory_order_relaxed);
}

void EventLoop::setPhase(Connection* c, Phase p, Clock::time_point deadline) {
  if (c->next != c) phaseCount_[c->phase].fetch_sub(1, std::memory_order_relaxed);
  c->unlink();
  c->phase = p;
  c->deadline = deadline;
  phaseCount_[p].fetch_add(1, std::memory_order_relaxed);
  // Deadlines in a list are sorted. Most phases have one fixed timeout, so
  // the newest goes last; a handshake keeps its deadline from the accept, and
  // judging deadlines come from each request (?timeout=): found from the back.
  TimerNode* after = lists_[p].prev;
  while (after != &lists_[p] && static_cast<Connection*>(after)->deadline > deadline) after = after->prev;
  c->pushBack(*after->next);
}

void EventLoop::expireTimers() {
  for (auto& list : lists_) {
    while (list.next != &list) {
      auto* c = static_cast<Connection*>(list.next);
      if (c->deadline > now_) break;
      onTimeout(c);  // closes the connection or moves it to another list
      updateInterest(c);
    }
  }
}

void EventLoop::onTimeout(Connection* c) {
  switch (c->phase) {
    case kHello:
    case kHandshake:
      counters.bump(counters.timeouts);
      counters.bump(counters.handshakeFailures);
      closeNow(c);
      return;
    case kRequest:
      counters.bump(counters.timeouts);
      if (c->outPending() || !c->tlsUp) {
        closeNow(c);  // the client does not read its response
      } else if (c->buffered() > 0 || c->headReady || c->refusal != Connection::Refusal::None) {
        reject(c, 408, "request not received in time");  // slowloris, a body that never ends
      } else {
        closeGracefully(c, /*linger=*/false);  // handshake done, no request
      }
      return;
    case kIdle:
      closeGracefully(c, /*linger=*/false);
      return;
    case kJudging:  // the API server has given up on it
      abandonJudging(c, Abandon::Deadline);
      return;
    case kLinger:
    default:
      closeNow(c);
      return;
  }
}

}  // namespace gpuguard::webhook::https_detail
