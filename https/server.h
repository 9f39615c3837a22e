// A small HTTPS/1.1 server built for one job: answering admission reviews
// from kube-apiserver, fast, under hostile clients. Event-driven (one epoll
// loop per thread, non-blocking OpenSSL), so idle or slow connections cost a
// file descriptor and a few KiB, never a thread. The handler runs inline on
// the loop thread that read the request when its body is small (admission
// handling of a typical pod takes ~50 µs: a hand-over would cost as much), and
// on a judging pool when it is large (judgeOffLoopBytes), so that one big
// object does not hold the other connections of its loop. Never block in it
// for long.
//
// It knows nothing of admission: it parses requests, enforces limits and
// timeouts, calls the handler, and writes the response.
//
// What it does with hostile or broken clients:
//  - request line + headers over maxHeaderBytes: 431; Transfer-Encoding
//    (chunked): 411; malformed request: 400; not HTTP/1.0 or 1.1: 505.
//    Each carries {"error": "..."} and closes.
//  - a declared Content-Length over maxBodyBytes or over the whole body
//    budget (bodyBudgetBytes: the bodies of kBudgetedBodyBytes or more
//    held at once): 413; a body the budget cannot take as its bytes arrive
//    (others hold it): 503 with Retry-After. Each is answered only once the
//    body has been read (and dropped as it comes, never buffered), so the
//    client's write completes and it reads a status, not a reset; the
//    connection then stays open unless the request said to close. Only a
//    Content-Length over twice maxBodyBytes, which no client of this server
//    sends, is answered 413 at once, and the connection closed.
//  - requestTimeout runs from the first byte of a request to its last
//    (slowloris, bodies that never finish): 408 and close. handshakeTimeout
//    bounds the TLS handshake, idleTimeout the wait between keep-alive
//    requests (closed silently).
//  - plain HTTP on the TLS port: a plaintext 400 and close.
//  - TLS 1.2 minimum; TLS 1.2 suites are ECDHE with AES-GCM or ChaCha20.
//  - at most maxConnections open connections and maxHandshakes TLS handshakes
//    in progress: beyond, the oldest handshake of the loop is closed for the
//    new one (or the new one, when there is none). No OpenSSL state before
//    the ClientHello's first record is all in.
//  - requests judged off the loop wait in a bounded queue (503 with
//    Retry-After beyond it); one whose client has gone, or whose deadline (the
//    API server's ?timeout=) has passed, is not judged, or its answer is
//    discarded. While judged, a connection is watched only for its client
//    leaving (EPOLLRDHUP), which abandons the job.
//
// With clientCaFile (mutual TLS), a client certificate is requested but not
// required at the handshake: one that is presented must verify, or the
// handshake fails; without one, only the paths of
// pathsWithoutClientCertificate (the probes: the kubelet presents none) are
// served and every other request gets 403 and closes. The CA file is
// watched and reloaded like the serving certificate.
//
// Shutdown (stop()): the accept queue is drained and the listener closed;
// every request already received, or already in the socket buffers, is
// answered with "Connection: close"; idle keep-alive connections are closed
// with close_notify and a FIN (never a reset); run() returns when the last
// connection is gone, or after shutdownTimeout at the latest: then every
// connection still open is closed, judging included (a running handler cannot
// be interrupted: its answer is discarded, and the destructor waits for it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuguard::webhook {

struct HttpRequest {
  std::string method;  // "POST"
  std::string target;  // "/validate?timeout=10s"
  std::string path;    // "/validate" (not percent-decoded)
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string peer;  // "127.0.0.1:53422"
  // The client presented a certificate that verified against clientCaFile.
  bool clientCertificateVerified = false;

  // The first header of that name (give it lower-case), or null.
  const std::string* header(std::string_view lowerCaseName) const;
};

struct HttpResponse {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
  // Extra headers. Content-Length and Connection are the server's; a header
  // whose name or value holds CR, LF or NUL is dropped.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Called on an event-loop or judging-pool thread, possibly on several threads
// at once. An exception becomes a 500 and closes the connection.
using Handler = std::function<HttpResponse(const HttpRequest&)>;

// Request bodies of at least this many bytes count against
// ServerConfig::bodyBudgetBytes. Smaller ones (a pod's review is 3-10 KB)
// are bounded by the connection cap: the cost of a connection
// (kConnectionCostBytes) leaves room for one, and a client cannot hold
// them back from honest requests by announcing large bodies.
inline constexpr std::size_t kBudgetedBodyBytes = 16 * 1024;

struct ServerConfig {
  std::string bindAddress = "0.0.0.0";  // IPv4 or IPv6 literal ("::" for all)
  std::uint16_t port = 8443;            // 0: any free port, see boundPort()
  std::string certFile;                 // PEM: leaf first, then intermediates
  std::string keyFile;                  // PEM private key of the leaf
  std::optional<std::string> clientCaFile;  // request and verify client certificates (see above)
  // Served without a verified client certificate under clientCaFile. Exact
  // paths (the query is ignored).
  std::vector<std::string> pathsWithoutClientCertificate{"/healthz", "/livez", "/readyz"};
  std::size_t maxHeaderBytes = 16 * 1024;     // 431 beyond
  // 413 beyond. The API server's reviews reach 18 MiB: an UPDATE carries
  // two objects of up to etcd's 1.5 MiB each, whose strings Go's JSON
  // encoder may escape to six times their stored size (docs/webhook.md).
  std::size_t maxBodyBytes = 20 * 1024 * 1024;
  // Bytes of request bodies of kBudgetedBodyBytes or more that may be held
  // at once (received, waiting for a judging thread, judged), charged as
  // their bytes arrive (not as a head announces them) and freed when the
  // request ends (answered, client gone, timed out). Beyond, 503 with Retry-After
  // (the API server retries within its timeout); a body larger than the
  // whole budget, 413. SIZE_MAX: no budget. See bodyBudgetFor
  // (https/memory_budget.h) for one that fits a memory limit.
  std::size_t bodyBudgetBytes = SIZE_MAX;
  // Open connections. Beyond, a new connection closes the oldest one of its
  // loop still in its handshake (those cost the least to redo, and a client
  // that stalls its handshake is the one to go); when there is none, it is
  // closed at accept. See connectionLimitsFor (https/memory_budget.h) for
  // caps that fit a memory limit.
  std::size_t maxConnections = 10000;
  // TLS handshakes in progress (OpenSSL state allocated, tens of KiB each);
  // beyond, the oldest is closed. 0: no cap but maxConnections. A connection
  // holds no OpenSSL state until the first record of its ClientHello is all
  // in (a client that sends a few bytes and stops costs a socket, not a TLS
  // session), and handshakeTimeout runs from the accept.
  std::size_t maxHandshakes = 0;
  std::chrono::milliseconds handshakeTimeout{5000};
  std::chrono::milliseconds requestTimeout{10000};  // first byte to last byte of one request
  // Keep-alive between requests. Longer than the clients' own idle timeout
  // (Go's transport, so kube-apiserver's: 90 s), so that the client, not the
  // server, closes an idle connection: a POST racing a server-side close
  // fails instead of being retried.
  std::chrono::milliseconds idleTimeout{120000};
  std::chrono::milliseconds certificatePollInterval{2000};  // 0: never poll (certificate and client CA)
  // After stop(): connections still open this long after it are closed and
  // run() returns. Keep it below the pod's terminationGracePeriodSeconds
  // minus its preStop time.
  std::chrono::milliseconds shutdownTimeout{20000};
  unsigned workerThreads = 0;  // event-loop threads; 0: two per usable CPU (affinity, cgroup quota)
  // Requests whose body has at least this many bytes are handled on the
  // judging pool instead of the loop that read them. 0: every request;
  // SIZE_MAX: none (no pool threads are started).
  std::size_t judgeOffLoopBytes = 64 * 1024;
  unsigned judgeThreads = 0;  // threads of the judging pool; 0: one per usable CPU
  // Requests waiting for a judging thread; beyond, 503 with Retry-After. 0:
  // four per judging thread.
  std::size_t maxQueuedJudgements = 0;
  // How long the client waits for an answer when its request does not say
  // (?timeout=, as the API server sends its webhook's timeoutSeconds): the
  // API server's default timeoutSeconds. Work past it is dropped.
  std::chrono::milliseconds defaultAdmissionTimeout{10000};
  // Told about certificate reloads (and their failures) and fatal loop
  // errors, from whichever thread noticed. Null: silent.
  std::function<void(const std::string& message)> log;
};

// Counters the server exposes for /metrics.
struct ServerStats {
  std::uint64_t connectionsAccepted = 0;
  std::uint64_t connectionsOpen = 0;
  std::uint64_t connectionsRefused = 0;  // over maxConnections
  std::uint64_t handshakeFailures = 0;   // includes plain HTTP and old TLS versions
  std::uint64_t timeouts = 0;            // handshake and request timeouts (not idle ones)
  std::uint64_t requestsHandled = 0;     // requests given to the handler
  std::uint64_t requestsRejected = 0;    // 400/408/411/413/431/505 answered by the server itself
  std::uint64_t certificateReloads = 0;  // successful reloads after the first load
  std::uint64_t certificateReloadFailures = 0;
  std::uint64_t clientCaReloads = 0;  // successful reloads of clientCaFile after the first load
  std::uint64_t clientCaReloadFailures = 0;
  std::uint64_t clientCertificateRequired = 0;  // requests answered 403: no verified client certificate
  std::uint64_t shutdownClosedConnections = 0;  // connections still open at shutdownTimeout
  // accept() failures for want of file descriptors or memory (EMFILE,
  // ENFILE, ENOBUFS, ENOMEM); each pauses that loop's listener for 100 ms.
  std::uint64_t acceptDescriptorExhaustion = 0;
  // Connections closed in their handshake to make room for a newer one
  // (maxConnections or maxHandshakes reached).
  std::uint64_t handshakesEvicted = 0;
  std::uint64_t unverifiedEvicted = 0;    // mutual TLS: closed at the cap, having no verified certificate
  std::uint64_t connectionsAwaitingClientHello = 0;  // accepted, no OpenSSL state yet (gauge)
  std::uint64_t tlsHandshakesInProgress = 0;         // OpenSSL handshakes under way (gauge)
  std::uint64_t eventLoopWakeups = 0;  // epoll_wait returns, all loops (a spinning loop shows here)
  // The judging pool. Reasons: [0] client gone, [1] deadline passed, [2] shutdown timeout.
  std::uint64_t judgingQueued = 0;      // waiting for a judging thread now
  std::uint64_t judgingInProgress = 0;  // being judged now
  std::uint64_t judgingRejected = 0;    // queue full: answered 503 with Retry-After
  std::uint64_t judgingDropped[3] = {};    // never judged: the answer was not wanted any more
  std::uint64_t bodyBytesReserved = 0;     // of bodyBudgetBytes, now (gauge)
  std::uint64_t bodyBudgetRejected = 0;    // budget exhausted: answered 503 with Retry-After
  std::uint64_t judgingDiscarded[3] = {};  // judged, then the answer thrown away
};

class HttpsServer {
 public:
  HttpsServer(ServerConfig config, Handler handler);
  ~HttpsServer();  // stops and joins if still running
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Loads the certificate and binds the port. False with `error` on failure.
  bool start(std::string& error);
  // Serves until stop(); returns after in-flight requests are answered.
  // Runs one event loop on the calling thread and workerThreads-1 others.
  void run();
  // Thread- and async-signal-safe (an atomic store and a write to an
  // eventfd): drain the accept queue and stop accepting, answer every request
  // already received, close idle connections, make run() return (within
  // shutdownTimeout). Callable before run(), then run() returns at once.
  void stop();

  // Re-reads the certificate and key now (it also happens by itself when the
  // files change). A broken pair is rejected and the old one keeps serving.
  bool reloadCertificate(std::string& error);
  bool certificateLoaded() const;
  // SHA-256 of the DER of the leaf certificate now served, lower-case hex;
  // empty before the first load.
  std::string certificateFingerprint() const;
  // The notAfter of the leaf certificate now served, in seconds since the
  // Unix epoch; nullopt before the first load.
  std::optional<std::int64_t> certificateNotAfter() const;
  // SHA-256 over the DER of the client CAs now trusted, hex; empty without
  // clientCaFile.
  std::string clientCaFingerprint() const;
  std::uint16_t boundPort() const;  // useful with port 0 in tests
  ServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuguard::webhook
