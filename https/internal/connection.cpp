// One connection of an HttpsServer event loop (see server_state.h):
// the TLS handshake, reading, framing and dispatching requests, writing
// responses, and closing without losing a response in flight.
#include <sys/socket.h>
#include <sys/epoll.h>
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

void EventLoop::onEvent(Connection* c, std::uint32_t events) {
  if (c->judging) {
    // Only the client leaving is watched for (updateInterest): a FIN, a reset
    // or an error. Nothing is read meanwhile.
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) abandonJudging(c, Abandon::ClientGone);
    return;
  }
  if (events & EPOLLERR) {
    closeNow(c);
    return;
  }
  switch (c->phase) {
    case kHello:
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

// Looks at what the client sent (without reading it, MSG_PEEK): plain HTTP is
// answered and closed; true once the first TLS record, the ClientHello (or
// its first part), is all here. Until then the connection holds no OpenSSL
// state: a client that sends a few bytes and stops costs a socket and this
// object, not the ~50 KiB of a TLS session in its handshake.
bool EventLoop::clientHelloArrived(Connection* c) {
  constexpr std::size_t kRecordHeader = 5;
  const ssize_t r = ::recv(c->fd, readBuf_.data(), readBuf_.size(), MSG_PEEK);
  if (r == 0) {
    closeNow(c);  // connected and left (a TCP probe)
    return false;
  }
  if (r < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) closeNow(c);
    return false;
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(readBuf_.data());
  if (!c->plainChecked) {
    c->plainChecked = true;
    if (bytes[0] != 0x16) {  // not a TLS handshake record
      counters.bump(counters.handshakeFailures);
      if (bytes[0] >= 'A' && bytes[0] <= 'Z') {  // looks like an HTTP method
        [[maybe_unused]] ssize_t w =
            ::send(c->fd, kPlainHttpAnswer, sizeof kPlainHttpAnswer - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        closeGracefully(c);
      } else {
        closeNow(c);
      }
      return false;
    }
  }
  if (static_cast<std::size_t>(r) < kRecordHeader) return false;
  const std::size_t record = kRecordHeader + (std::size_t{bytes[3]} << 8 | bytes[4]);
  // A record longer than the buffer is no valid one: OpenSSL refuses it.
  return static_cast<std::size_t>(r) >= record || record > readBuf_.size();
}

// The ClientHello is here: now the OpenSSL state. When this loop's share of
// maxHandshakes is taken, its oldest handshake makes room.
bool EventLoop::startTls(Connection* c) {
  if (inPhase(kHandshake) >= server_.handshakesPerLoop) evictOldestHandshake(/*tlsOnly=*/true);
  c->ssl = SSL_new(server_.ctx);
  if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1) {
    ERR_clear_error();
    closeNow(c);
    return false;
  }
  SSL_set_accept_state(c->ssl);
  setPhase(c, kHandshake, c->deadline);  // the handshake timeout runs from the accept
  return true;
}

void EventLoop::handshake(Connection* c) {
  if (!c->ssl && (!clientHelloArrived(c) || !startTls(c))) return;
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
    c->waitWritable = false;
    setPhase(c, kRequest, now_ + server_.config.requestTimeout);
    readable(c);  // the request may have come with the client's Finished
    return;
  }
  switch (const int err = SSL_get_error(c->ssl, r)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      c->waitWritable = err == SSL_ERROR_WANT_WRITE;
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
      if (c->buffered() == 0 && !c->headReady) c->requestBegan = now_;  // a new request starts here
      c->in.append(readBuf_.data(), static_cast<std::size_t>(n));
      processInput(c);
      // Judging: nothing more is read until the answer is back (the client's
      // next bytes stay in the socket, where they belong to the next request).
      if (c->closed || c->phase == kLinger || c->outPending() || c->closeAfterWrite || c->judging) return;
      continue;
    }
    switch (SSL_get_error(c->ssl, n)) {
      case SSL_ERROR_WANT_READ:
        c->waitWritable = false;
        return;
      case SSL_ERROR_WANT_WRITE:
        c->waitWritable = true;
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
  while (!c->closeAfterWrite && !c->writeBlocked && !c->judging) {
    if (c->refusal != Connection::Refusal::None) {
      if (!discardBody(c)) break;  // more of the refused body to come
      continue;
    }
    if (!c->headReady) {
      std::size_t resume = c->scanPos - c->inPos;
      const http1::HeadScan scan =
          http1::scanHead(std::string_view(c->in.data() + c->inPos, c->buffered()), resume, server_.framing);
      c->scanPos = c->inPos + resume;
      c->inPos += scan.skipped;
      if (scan.outcome == http1::HeadScan::Outcome::Rejected) {
        reject(c, scan.status, scan.error);
        break;
      }
      if (scan.outcome == http1::HeadScan::Outcome::NeedMore) break;
      const http1::Head& head = scan.head;
      const std::size_t avail = c->buffered();
      const std::size_t end = scan.headLen;
      c->headReady = true;
      c->headLen = end;
      c->bodyLen = static_cast<std::size_t>(head.contentLength);
      c->keepAlive = head.keepAlive;
      c->keepAlive10 = head.http10 && head.keepAlive;
      c->headMethod = head.headMethod;
      if (!admitBody(c, head.expectContinue && !head.http10)) continue;
      // The head says how much is coming: room for all of it at once, now and
      // not before (grown by doubling, a 3 MiB body would peak near twice that).
      if (c->bodyLen > 0) c->in.reserve(c->inPos + end + c->bodyLen);
      if (head.expectContinue && !head.http10 && c->bodyLen > 0 && avail < end + c->bodyLen) {
        c->out.append("HTTP/1.1 100 Continue\r\n\r\n");
        if (!flush(c)) return;
      }
    }
    if (!chargeReceivedBody(c)) continue;  // refused: its bytes are dropped as they come
    if (c->buffered() < c->headLen + c->bodyLen) break;
    c->bodyBudgeted = false;  // all of it charged
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
  // Judging: the pool's answer resumes the connection (drainAnswers), and
  // responses to requests pipelined before it go out with that answer.
  if (c->phase == kLinger || c->judging) return;
  if (c->outPending() && !flush(c)) return;
  settle(c);
}

// Whether the body the head just parsed announces may be received. One over
// maxBodyBytes or larger than the whole body budget is refused (413), as is
// one the budget cannot take as it arrives (503, chargeReceivedBody); a
// client that waits for "100 Continue" is answered at once (it sends no
// body), any other has its body read and dropped as it comes (discardBody),
// then the answer: a status reaches it, never a reset on its write.
bool EventLoop::admitBody(Connection* c, bool expectContinue) {
  using Refusal = Connection::Refusal;
  const ServerConfig& config = server_.config;
  Refusal refusal = Refusal::None;
  if (c->bodyLen > config.maxBodyBytes) {
    refusal = Refusal::OverLimit;
  } else if (c->bodyLen >= kBudgetedBodyBytes) {
    // Under mutual TLS a client without a verified certificate is served the
    // probes alone, which take no body: its large body is refused before it
    // can hold the budget the API server's reviews need.
    if (server_.clientCas && !c->clientVerified) refusal = Refusal::ClientCertificate;
    else if (c->bodyLen > config.bodyBudgetBytes) refusal = Refusal::OverBudget;
    // A client waiting for "100 Continue" is told at once when the body would not fit now.
    else if (expectContinue && !server_.budgetHasRoomFor(c->bodyLen)) refusal = Refusal::BudgetInUse;
    else c->bodyBudgeted = true;
  }
  if (refusal == Refusal::None) return true;
  c->inPos += c->headLen;  // the head is done with; the body is dropped
  c->scanPos = c->inPos;
  c->headReady = false;
  c->refusal = refusal;
  c->discardLeft = c->bodyLen;
  if (expectContinue && c->buffered() < c->bodyLen) {
    c->discardLeft = 0;
    c->keepAlive = false;  // the client may send the body anyway: framing is lost
    discardBody(c);
  }
  return false;
}

// Drops what has come of a refused body; once the last of it is in, answers
// (413, or 503 with Retry-After) and goes on with the connection as its
// request said (keep-alive or close). False while more is to come.
bool EventLoop::discardBody(Connection* c) {
  using Refusal = Connection::Refusal;
  const std::size_t dropped = std::min(c->buffered(), c->discardLeft);
  c->inPos += dropped;
  c->scanPos = c->inPos;
  c->discardLeft -= dropped;
  if (c->discardLeft > 0) return false;
  const ServerConfig& config = server_.config;
  HttpResponse refused;
  std::string error;
  bool close = false;
  if (c->refusal == Refusal::BudgetInUse) {
    counters.bump(counters.bodyBudgetRejected);
    refused.status = 503;
    refused.headers.emplace_back("Retry-After", "1");
    error = "the webhook's memory for request bodies is in use by other large requests; retry after 1 s";
  } else if (c->refusal == Refusal::ClientCertificate) {
    counters.bump(counters.clientCertificateRequired);
    refused.status = 403;
    error = "a verified client certificate is required for a request with a body (only the health probes are served "
            "without one)";
    close = true;
  } else {
    counters.bump(counters.requestsRejected);
    refused.status = 413;
    error = "request body of " + std::to_string(c->bodyLen) + " bytes is larger than " +
            (c->refusal == Refusal::OverLimit
                 ? "the limit of " + std::to_string(config.maxBodyBytes) + " bytes"
                 : "the webhook's memory for request bodies (" + std::to_string(config.bodyBudgetBytes) + " bytes)");
  }
  refused.body = http1::errorBody(error);
  c->refusal = Refusal::None;
  c->inRequest = false;
  c->requestBegan = now_;
  if (close) c->keepAlive = false;
  answer(c, true, refused, "", c->buffered() > 0 || SSL_has_pending(c->ssl));
  return true;
}

// A budgeted body is charged as its bytes arrive: charged on the length its
// head announced, four connections that sent a head and one byte held the
// whole budget for the request timeout, and every large review got 503 (red
// team 35 D1). Now holding budget costs a client the bytes it holds. False,
// the body turned into a refusal (503 once its bytes are in), when the
// budget cannot take what has come.
bool EventLoop::chargeReceivedBody(Connection* c) {
  if (!c->bodyBudgeted) return true;
  const std::size_t received = std::min(c->buffered() - c->headLen, c->bodyLen);
  if (received <= c->reservedBody) return true;
  const std::size_t more = received - c->reservedBody;
  if (server_.reserveBody(more)) {
    c->reservedBody += more;
    return true;
  }
  releaseBody(c);
  c->inPos += c->headLen;  // the head is done with; the body is dropped
  c->scanPos = c->inPos;
  c->headReady = false;
  c->refusal = Connection::Refusal::BudgetInUse;
  c->discardLeft = c->bodyLen;
  return false;
}

void EventLoop::releaseBody(Connection* c) {
  c->bodyBudgeted = false;
  if (c->reservedBody == 0) return;
  server_.releaseBody(c->reservedBody);
  c->reservedBody = 0;
}

void EventLoop::dispatch(Connection* c) {
  std::unique_ptr<Job> job;
  if (server_.pool && c->bodyLen >= server_.config.judgeOffLoopBytes) job = std::make_unique<Job>();
  HttpRequest& req = job ? job->request : request_;
  std::string_view whole(c->in.data() + c->inPos, c->headLen + c->bodyLen);
  http1::parseHead(whole.substr(0, c->headLen), kMaxHeaders, &req);
  req.body.assign(whole.substr(c->headLen));
  req.peer = c->peer;
  req.clientCertificateVerified = c->clientVerified;
  c->inPos += c->headLen + c->bodyLen;
  c->scanPos = c->inPos;
  c->headReady = false;
  c->inRequest = false;
  const Clock::time_point began = c->requestBegan;
  c->requestBegan = now_;  // a pipelined request already here began by now
  if (server_.requiresClientCertificate(*c, req.path)) {
    releaseBody(c);
    counters.bump(counters.clientCertificateRequired);
    http1::appendError(c->out, 403, "a verified client certificate is required for " + req.path +
                                        " (only the health probes are served without one)");
    c->closeAfterWrite = true;
    return;
  }
  const bool moreReceived = c->buffered() > 0 || SSL_has_pending(c->ssl);

  if (job) {
    job->deadline = requestDeadline(job->request, began, server_.config.defaultAdmissionTimeout);
    judgeOffLoop(c, std::move(job), moreReceived);
    return;
  }
  counters.bump(counters.requestsHandled);
  HttpResponse response;
  std::string failure;
  const bool ok = callHandler(server_.handler, req, response, failure);
  if (req.body.capacity() > kKeepBufferCapacity) std::string().swap(req.body);  // the loop's request is reused
  releaseBody(c);
  answer(c, ok, response, failure, moreReceived);
}

// The connection waits, unread, until the pool answers or its deadline
// passes; the loop goes on with its other connections. A full queue is
// answered at once: 503 with Retry-After, which client-go (so the API server)
// honours by retrying within its own timeout.
void EventLoop::judgeOffLoop(Connection* c, std::unique_ptr<Job> job, bool moreReceived) {
  job->loop = this;
  job->connection = c;
  job->moreReceived = moreReceived;
  Job* submitted = job.get();
  if (!server_.pool->trySubmit(job)) {
    releaseBody(c);
    counters.bump(counters.judgingRejected);
    HttpResponse busy;
    busy.status = 503;
    busy.body = "{\"error\": \"the webhook is busy judging other large requests; retry after 1 s\"}\n";
    busy.headers.emplace_back("Retry-After", "1");
    answer(c, true, busy, "", moreReceived);
    return;
  }
  counters.bump(counters.requestsHandled);
  c->judging = true;
  c->job = submitted;  // valid until drainAnswers takes the answer back
  setPhase(c, kJudging, submitted->deadline);
}

void EventLoop::answer(Connection* c, bool ok, const HttpResponse& response, const std::string& failure,
                       bool moreReceived) {
  if (!ok) http1::appendError(c->out, 500, failure);
  // Once a stop is requested (perhaps while the handler ran), the last
  // request received says "Connection: close"; one pipelined behind it
  // (already here) is answered first.
  const bool stopRequested = stopping_ || server_.stopRequested.load(std::memory_order_relaxed);
  const bool close = !c->keepAlive || (stopRequested && !moreReceived);
  if (ok) http1::appendResponse(c->out, response, close, c->keepAlive10 && !close, c->headMethod);
  if (close || !ok) c->closeAfterWrite = true;
}

// After the pool's answer: write it, then go on with what the client sent
// meanwhile. OpenSSL may hold bytes that epoll cannot see, hence the read.
void EventLoop::resume(Connection* c) {
  processInput(c);
  if (!c->closed && c->phase != kLinger && !c->outPending() && !c->judging) readable(c);
}

void EventLoop::reject(Connection* c, int status, std::string_view message) {
  counters.bump(counters.requestsRejected);
  http1::appendError(c->out, status, message);
  c->closeAfterWrite = true;
  c->headReady = false;
  c->refusal = Connection::Refusal::None;
  std::string().swap(c->in);  // whatever else came is dropped
  c->inPos = c->scanPos = 0;
  releaseBody(c);
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
      c->waitWritable = err == SSL_ERROR_WANT_WRITE;
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
  c->waitWritable = false;
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
  c->waitWritable = false;
  setPhase(c, kLinger, now_ + kLingerTimeout);
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
  if (c->next != c) phaseCount_[c->phase].fetch_sub(1, std::memory_order_relaxed);
  c->unlink();
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c->fd, nullptr);
  SSL_free(c->ssl);
  c->ssl = nullptr;
  ::close(c->fd);
  c->fd = -1;
  if (c->judging) {  // still counted; released when its answer comes back
    c->job->abandon(Abandon::Shutdown);  // unless a reason was given before
    return;
  }
  release(c);
}

void EventLoop::abandonJudging(Connection* c, Abandon why) {
  c->job->abandon(why);
  closeNow(c);
}

void EventLoop::updateInterest(Connection* c) {
  if (c->closed) return;
  // While judged only the client leaving matters: with EPOLLIN the unread
  // bytes (or EOF) of the socket would wake a level-triggered loop again and
  // again until the answer is back.
  std::uint32_t events = EPOLLIN;
  // Before the ClientHello is in, the bytes are only looked at (MSG_PEEK):
  // level-triggered, they would wake the loop until the rest comes.
  if (c->phase == kHello) events = EPOLLIN | EPOLLET;
  else if (c->judging) events = EPOLLRDHUP;
  else if (c->waitWritable) events = EPOLLOUT;
  if (c->interest == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = c;
  ::epoll_ctl(epfd_, EPOLL_CTL_MOD, c->fd, &ev);
  c->interest = events;
}

void EventLoop::release(Connection* c) {
  releaseBody(c);
  open_.fetch_sub(1, std::memory_order_relaxed);
  server_.connectionsOpen.fetch_sub(1, std::memory_order_relaxed);
  graveyard_.emplace_back(c);
}
}  // namespace gpuguard::webhook::https_detail
