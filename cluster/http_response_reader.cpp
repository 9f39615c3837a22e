#include "cluster/http_response_reader.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

namespace gpuguard::cluster {

namespace {

using Clock = std::chrono::steady_clock;

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

struct Head {
  int status = 0;
  std::optional<std::size_t> contentLength;
  bool chunked = false;
  bool keepAlive = true;  // HTTP/1.1 without "Connection: close"
};

std::string parseHead(std::string_view text, Head& head) {
  const std::size_t lineEnd = text.find("\r\n");
  std::string_view statusLine = text.substr(0, lineEnd);
  if (!statusLine.starts_with("HTTP/1.") || statusLine.size() < 12) {
    return "not an HTTP/1.x answer: " + std::string(statusLine.substr(0, 80));
  }
  auto [p, ec] = std::from_chars(statusLine.data() + 9, statusLine.data() + 12, head.status);
  if (ec != std::errc() || head.status < 100 || head.status > 599) return "bad status line";
  head.keepAlive = statusLine.starts_with("HTTP/1.1");
  std::size_t pos = lineEnd + 2;
  while (pos < text.size()) {
    const std::size_t end = text.find("\r\n", pos);
    const std::string_view line = text.substr(pos, end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 2;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = lowercase(trim(line.substr(0, colon)));
    const std::string_view value = trim(line.substr(colon + 1));
    if (name == "content-length") {
      std::size_t n = 0;
      auto [q, e] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (e != std::errc() || q != value.data() + value.size()) return "bad Content-Length";
      head.contentLength = n;
    } else if (name == "transfer-encoding") {
      head.chunked = lowercase(value).find("chunked") != std::string::npos;
    } else if (name == "connection" && lowercase(value).find("close") != std::string::npos) {
      head.keepAlive = false;
    }
  }
  return "";
}

// Where the body goes: the request's callback (2xx answers) or the response's
// body, capped.
class BodySink {
 public:
  BodySink(const HttpRequest& request, HttpResponse& response, bool success)
      : request_(request), response_(response), stream_(success && request.onBody) {}
  // False: stop reading (the callback said so, or the cap was reached).
  bool put(std::string_view data) {
    if (data.empty()) return true;
    if (stream_) return request_.onBody(data);
    const std::size_t cap = request_.onBody ? (1u << 20) : std::min(request_.maxBodyBytes, HttpClient::kMaxBodyBytes);
    if (response_.body.size() + data.size() > cap) {
      response_.error = cap >= (1u << 20) ? "the answer is larger than " + std::to_string(cap >> 20) + " MiB"
                                          : "the answer is larger than " + std::to_string(cap) + " bytes";
      return false;
    }
    response_.body.append(data);
    return true;
  }

 private:
  const HttpRequest& request_;
  HttpResponse& response_;
  bool stream_;
};

class Reader {
 public:
  Reader(Transport& t, const HttpRequest& r, HttpResponse& resp) : transport_(t), request_(r), response_(resp) {}

  // Reads more into buffer_; false at the end of the stream or on error.
  bool fill() {
    char chunk[16384];
    std::string error;
    const long n = transport_.read(chunk, sizeof chunk, request_.idleTimeout, request_.cancel, error);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      receivedAny_ = true;
      return true;
    }
    if (n < 0) response_.error = error;
    return false;
  }

  bool readHead(Head& head) {
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (buffer_.size() > HttpClient::kMaxHeaderBytes) {
        response_.error = "the answer's headers exceed 64 KiB";
        return false;
      }
      if (!fill()) {
        if (response_.error.empty()) response_.error = "the connection closed before an answer";
        return false;
      }
    }
    if (std::string error = parseHead(std::string_view(buffer_).substr(0, end + 2), head); !error.empty()) {
      response_.error = error;
      return false;
    }
    buffer_.erase(0, end + 4);
    return true;
  }

  void readSized(BodySink& sink, std::size_t length) {
    while (true) {
      const std::size_t take = std::min(length, buffer_.size());
      if (!sink.put(std::string_view(buffer_).substr(0, take))) return;
      buffer_.erase(0, take);
      length -= take;
      if (length == 0) {
        complete_ = true;
        return;
      }
      if (!fill()) {
        if (response_.error.empty()) response_.error = "the connection closed inside the body";
        return;
      }
    }
  }

  bool receivedAny() const { return receivedAny_; }
  // The answer ended where its framing says, with no byte beyond it.
  bool complete() const { return complete_ && buffer_.empty() && response_.error.empty(); }

  void readUntilClose(BodySink& sink) {
    do {
      if (!sink.put(buffer_)) return;
      buffer_.clear();
    } while (fill());
  }

  void readChunked(BodySink& sink) {
    while (true) {
      std::size_t lineEnd;
      while ((lineEnd = buffer_.find("\r\n")) == std::string::npos) {
        if (buffer_.size() > 4096) return fail("a chunk size line longer than 4 KiB");
        if (!fill()) return fail("the connection closed inside a chunked body");
      }
      std::size_t size = 0;
      const char* begin = buffer_.data();
      auto [p, ec] = std::from_chars(begin, begin + lineEnd, size, 16);
      if (ec != std::errc() || p == begin) return fail("a bad chunk size");
      buffer_.erase(0, lineEnd + 2);
      if (size == 0) return readTrailers();
      readSized(sink, size);
      complete_ = false;  // a chunk is not the end of the body
      if (!response_.error.empty()) return;
      while (buffer_.size() < 2) {
        if (!fill()) return fail("the connection closed inside a chunked body");
      }
      buffer_.erase(0, 2);  // the chunk's CRLF
    }
  }

 private:
  // After the last chunk: trailer lines up to an empty line (RFC 9112 7.1.2).
  void readTrailers() {
    while (true) {
      std::size_t lineEnd;
      while ((lineEnd = buffer_.find("\r\n")) == std::string::npos) {
        if (buffer_.size() > 4096) return fail("a chunked trailer longer than 4 KiB");
        if (!fill()) return;  // closed after the last chunk: the body is whole, the connection is not reusable
      }
      buffer_.erase(0, lineEnd + 2);
      if (lineEnd == 0) {
        complete_ = true;
        return;
      }
    }
  }
  void fail(const char* what) {
    if (response_.error.empty()) response_.error = what;
  }
  Transport& transport_;
  const HttpRequest& request_;
  HttpResponse& response_;
  std::string buffer_;
  bool receivedAny_ = false;
  bool complete_ = false;
};

}  // namespace

Transport::~Transport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  close(fd_);
}

bool Transport::wait(short events, Clock::time_point deadline, const std::atomic<bool>* cancel, std::string& error) {
  while (true) {
    if (cancel != nullptr && cancel->load()) {
      error = "cancelled";
      return false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      error = "timed out";
      return false;
    }
    pollfd p{fd_, events, 0};
    const int rc = poll(&p, 1, static_cast<int>(std::min<long long>(left, cancelCheck.count())));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) {
      error = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

std::string Transport::startTls(SSL_CTX* ctx, const std::string& name, bool nameIsIp, bool verify,
                                std::chrono::milliseconds timeout, const std::atomic<bool>* cancel) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) return "cannot create a TLS session";
  if (!nameIsIp) SSL_set_tlsext_host_name(ssl_, name.c_str());
  if (verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    const int set = nameIsIp ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) : SSL_set1_host(ssl_, name.c_str());
    if (set != 1) return "cannot verify the name " + name;
  }
  const Clock::time_point deadline = Clock::now() + timeout;
  while (true) {
    ERR_clear_error();
    const int rc = SSL_connect(ssl_);
    if (rc == 1) return "";
    const int e = SSL_get_error(ssl_, rc);
    std::string error;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      if (!wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, cancel, error)) return "handshake " + error;
      continue;
    }
    const long verified = SSL_get_verify_result(ssl_);
    if (verified != X509_V_OK) return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verified);
    const unsigned long code = ERR_get_error();
    char buf[256] = "handshake failed";
    if (code != 0) ERR_error_string_n(code, buf, sizeof buf);
    return buf;
  }
}

std::string Transport::writeAll(std::string_view data, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::string error;
  while (!data.empty()) {
    long n;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int rc = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
      n = rc;
      if (rc <= 0) {
        const int e = SSL_get_error(ssl_, rc);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return "TLS write failed";
        if (!wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, nullptr, error)) return "write " + error;
        continue;
      }
    } else {
      n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) return std::string("write: ") + std::strerror(errno);
        if (!wait(POLLOUT, deadline, nullptr, error)) return "write " + error;
        continue;
      }
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return "";
}

long Transport::read(char* buffer, std::size_t size, std::chrono::milliseconds idleTimeout,
                     const std::atomic<bool>* cancel, std::string& error) {
  const Clock::time_point deadline = Clock::now() + idleTimeout;
  while (true) {
    if (cancel != nullptr && cancel->load()) {
      error = "cancelled";
      return -1;
    }
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int rc = SSL_read(ssl_, buffer, static_cast<int>(size));
      if (rc > 0) return rc;
      const int e = SSL_get_error(ssl_, rc);
      if (e == SSL_ERROR_ZERO_RETURN) return 0;
      if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;  // closed without close_notify
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        error = "TLS read failed";
        return -1;
      }
      if (!wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, cancel, error)) return -1;
    } else {
      const long n = recv(fd_, buffer, size, 0);
      if (n >= 0) return n;
      if (errno != EAGAIN && errno != EINTR) {
        error = std::string("read: ") + std::strerror(errno);
        return -1;
      }
      if (!wait(POLLIN, deadline, cancel, error)) return -1;
    }
  }
}

bool Transport::quietWhileIdle() const {
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return false;
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

ReadOutcome readResponse(Transport& transport, const HttpRequest& request, HttpResponse& response) {
  Reader reader(transport, request, response);
  Head head;
  ReadOutcome outcome;
  if (!reader.readHead(head)) {
    // Closed or reset before a byte: a kept-alive connection the server had given up. A timeout
    // or a cancel is not: the server has the request (sending it again would wait twice).
    outcome.nothingReceived = !reader.receivedAny() && response.error != "timed out" && response.error != "cancelled";
    return outcome;
  }
  response.status = head.status;
  if (request.onStatus) request.onStatus(head.status);
  BodySink sink(request, response, head.status >= 200 && head.status < 300);
  if (head.status == 204 || head.status == 304 || (head.contentLength && *head.contentLength == 0)) {
    outcome.reusable = head.keepAlive && !head.chunked;
    return outcome;
  }
  if (head.chunked) {
    reader.readChunked(sink);
  } else if (head.contentLength) {
    reader.readSized(sink, *head.contentLength);
  } else {
    reader.readUntilClose(sink);
  }
  outcome.reusable = head.keepAlive && reader.complete();
  return outcome;
}

}  // namespace gpuguard::cluster
