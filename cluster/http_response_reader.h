// The socket side of HttpClient (http_client.h): a connection, plain or TLS,
// read and written with deadlines and a cancel flag, and the HTTP/1.1 answer
// read from it (status line, headers, Content-Length, chunked or until close).
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "cluster/http_client.h"

namespace gpuguard::cluster {

class Transport {
 public:
  explicit Transport(int fd) : fd_(fd) {}
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  std::chrono::milliseconds cancelCheck{250};  // see HttpRequest::cancelCheck

  // The TLS handshake; "" on success, else why it failed.
  std::string startTls(SSL_CTX* ctx, const std::string& name, bool nameIsIp, bool verify,
                       std::chrono::milliseconds timeout, const std::atomic<bool>* cancel);
  std::string writeAll(std::string_view data, std::chrono::milliseconds timeout);
  // > 0 bytes read, 0 at the end of the stream; < 0 on error (`error` says which).
  long read(char* buffer, std::size_t size, std::chrono::milliseconds idleTimeout, const std::atomic<bool>* cancel,
            std::string& error);
  // An idle keep-alive connection is reusable when nothing is readable on it:
  // readable means the server closed it (or sent bytes nobody asked for).
  bool quietWhileIdle() const;

 private:
  // Waits for the socket (POLLIN or POLLOUT) in `cancelCheck` steps; false on timeout or cancel.
  bool wait(short events, std::chrono::steady_clock::time_point deadline, const std::atomic<bool>* cancel,
            std::string& error);
  int fd_;
  SSL* ssl_ = nullptr;
};

struct ReadOutcome {
  bool reusable = false;        // the answer ended on its own (length or last chunk), no "Connection: close"
  bool nothingReceived = false; // the connection closed (or was reset) before the first byte of an answer
};

// Reads the answer to the request just written.
ReadOutcome readResponse(Transport& transport, const HttpRequest& request, HttpResponse& response);

}  // namespace gpuguard::cluster
