#include "cluster/http_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "cluster/http_response_reader.h"

namespace gpuguard::cluster {

namespace {

std::string opensslError(std::string_view what) {
  std::string text(what);
  if (const unsigned long e = ERR_get_error(); e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    text += ": ";
    text += buf;
  }
  ERR_clear_error();
  return text;
}

bool isIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

BioPtr memoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
}

// Every certificate of a PEM bundle into the context's trust store.
std::string loadCaBundle(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio = memoryBio(pem);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int loaded = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    X509_free(cert);
    ++loaded;
  }
  ERR_clear_error();  // the end of the bundle reads as an error
  return loaded > 0 ? "" : "the certificate authority holds no PEM certificate";
}

std::string loadClientCertificate(SSL_CTX* ctx, const TlsSettings& tls) {
  BioPtr certBio = memoryBio(tls.clientCertPem);
  X509* leaf = PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) return opensslError("the client certificate is not a PEM certificate");
  const int used = SSL_CTX_use_certificate(ctx, leaf);
  X509_free(leaf);
  if (used != 1) return opensslError("cannot use the client certificate");
  while (X509* extra = PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add_extra_chain_cert(ctx, extra);  // takes ownership
  }
  ERR_clear_error();
  BioPtr keyBio = memoryBio(tls.clientKeyPem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) return opensslError("the client key is not a PEM private key");
  const int keyUsed = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (keyUsed != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return opensslError("the client key does not match the client certificate");
  }
  return "";
}

// A connected socket (non-blocking connect bounded by `timeout`), or -1.
int connectTo(const ServerUrl& server, std::chrono::milliseconds timeout, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = isIpAddress(server.host) ? AI_NUMERICHOST : 0;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(server.port);
  if (const int rc = getaddrinfo(server.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = "cannot resolve " + server.host + ": " + gai_strerror(rc);
    return -1;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, &freeaddrinfo);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, static_cast<int>(timeout.count()));
      int soError = rc == 1 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof soError;
      if (rc == 1) getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len);
      rc = soError == 0 ? 0 : -1;
      errno = soError;
    }
    if (rc == 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    error = "cannot connect to " + server.host + ":" + port + ": " + std::strerror(errno);
    close(fd);
  }
  if (error.empty()) error = "cannot connect to " + server.host + ":" + port;
  return -1;
}

}  // namespace

struct HttpClient::Tls {
  SSL_CTX* ctx = nullptr;
  ~Tls() { SSL_CTX_free(ctx); }
};

// Idle keep-alive connections, newest last.
struct HttpClient::Pool {
  struct Idle {
    std::unique_ptr<Transport> transport;
    std::chrono::steady_clock::time_point since;
  };
  std::mutex mutex;
  std::vector<Idle> idle;

  // The newest idle connection still usable, or null.
  std::unique_ptr<Transport> take() {
    std::lock_guard lock(mutex);
    while (!idle.empty()) {
      Idle last = std::move(idle.back());
      idle.pop_back();
      if (std::chrono::steady_clock::now() - last.since < kMaxIdleTime && last.transport->quietWhileIdle()) {
        return std::move(last.transport);
      }
    }
    return nullptr;
  }
  void put(std::unique_ptr<Transport> transport) {
    std::lock_guard lock(mutex);
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(idle, [&](const Idle& i) { return now - i.since >= kMaxIdleTime; });
    if (idle.size() >= kMaxIdleConnections) idle.erase(idle.begin());  // the oldest goes
    idle.push_back({std::move(transport), std::chrono::steady_clock::now()});
  }
};

// One request as send() was given it.
struct HttpClient::Exchange {
  std::string_view method;
  const HttpRequest& request;
  std::string_view body;
  std::string_view contentType;
  bool keepAlive;  // not streaming: the connection may come from and go back to the pool
};

std::string parseServerUrl(std::string_view url, ServerUrl& out) {
  out = ServerUrl{};
  const std::string original(url);
  if (url.starts_with("https://")) {
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    out.tls = false;
    out.port = 80;
    url.remove_prefix(7);
  } else {
    return "server \"" + original + "\": want https://HOST[:PORT] (or http:// for kubectl proxy)";
  }
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) out.pathPrefix = std::string(url.substr(slash));
  while (out.pathPrefix.ends_with('/')) out.pathPrefix.pop_back();
  std::string_view portText;
  if (authority.starts_with('[')) {  // [::1]:6443
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "server \"" + original + "\": unclosed '[' in the address";
    out.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return "server \"" + original + "\": junk after the address";
      portText = authority.substr(close + 2);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) portText = authority.substr(colon + 1);
  }
  if (out.host.empty()) return "server \"" + original + "\": no host";
  if (!portText.empty() || authority.ends_with(':')) {
    unsigned long port = 0;
    for (char c : portText) {
      if (c < '0' || c > '9' || port > 65535) return "server \"" + original + "\": bad port";
      port = port * 10 + static_cast<unsigned>(c - '0');
    }
    if (port == 0 || port > 65535) return "server \"" + original + "\": bad port";
    out.port = static_cast<std::uint16_t>(port);
  }
  return "";
}

HttpClient::HttpClient(ServerUrl server, TlsSettings tls, std::chrono::milliseconds connectTimeout)
    : server_(std::move(server)), settings_(std::move(tls)), connectTimeout_(connectTimeout), pool_(new Pool) {
  if (!server_.tls) return;
  tls_ = new Tls;
  tls_->ctx = SSL_CTX_new(TLS_client_method());
  if (tls_->ctx == nullptr) {
    configError_ = opensslError("cannot create a TLS context");
    return;
  }
  SSL_CTX_set_min_proto_version(tls_->ctx, TLS1_2_VERSION);
  if (!settings_.insecureSkipVerify) {
    SSL_CTX_set_verify(tls_->ctx, SSL_VERIFY_PEER, nullptr);
    if (settings_.caPem.empty()) {
      SSL_CTX_set_default_verify_paths(tls_->ctx);
    } else {
      configError_ = loadCaBundle(tls_->ctx, settings_.caPem);
    }
  }
  if (configError_.empty() && (!settings_.clientCertPem.empty() || !settings_.clientKeyPem.empty())) {
    if (settings_.clientCertPem.empty() || settings_.clientKeyPem.empty()) {
      configError_ = "a client certificate needs both the certificate and its key";
    } else {
      configError_ = loadClientCertificate(tls_->ctx, settings_);
    }
  }
}

HttpClient::~HttpClient() {
  delete pool_;
  delete tls_;
}

std::size_t HttpClient::idleConnections() const {
  std::lock_guard lock(pool_->mutex);
  return pool_->idle.size();
}

HttpResponse HttpClient::send(std::string_view method, const HttpRequest& request, std::string_view body,
                              std::string_view contentType) const {
  if (!configError_.empty()) {
    HttpResponse failed;
    failed.error = configError_;
    return failed;
  }
  const Exchange x{method, request, body, contentType, !request.onBody};
  bool stale = false;
  HttpResponse response = exchange(x, stale);
  if (stale) response = exchange(x, stale);  // the server had closed the idle connection: once more, on a new one
  return response;
}

HttpResponse HttpClient::exchange(const Exchange& x, bool& staleConnection) const {
  HttpResponse response;
  std::unique_ptr<Transport> transport = x.keepAlive && !staleConnection ? pool_->take() : nullptr;
  const bool reused = transport != nullptr;
  staleConnection = false;
  if (!reused) {
    const int fd = connectTo(server_, connectTimeout_, response.error);
    if (fd < 0) return response;
    transport = std::make_unique<Transport>(fd);
    if (server_.tls) {
      const std::string& name = settings_.serverName.empty() ? server_.host : settings_.serverName;
      if (std::string error = transport->startTls(tls_->ctx, name, isIpAddress(name), !settings_.insecureSkipVerify,
                                                  connectTimeout_, x.request.cancel);
          !error.empty()) {
        response.error = "TLS with " + server_.host + ": " + error;
        return response;
      }
    }
  }
  transport->cancelCheck = x.request.cancelCheck;
  std::string head = std::string(x.method) + " " + server_.pathPrefix + x.request.pathAndQuery + " HTTP/1.1\r\nHost: " +
                     (server_.host.find(':') != std::string::npos ? "[" + server_.host + "]" : server_.host) + ":" +
                     std::to_string(server_.port) + "\r\nAccept: application/json\r\nUser-Agent: gpuguard\r\n" +
                     (x.keepAlive ? "" : "Connection: close\r\n");
  if (!x.contentType.empty()) head += "Content-Type: " + std::string(x.contentType) + "\r\n";
  if (!x.body.empty() || x.method == "POST" || x.method == "PUT" || x.method == "PATCH") {
    head += "Content-Length: " + std::to_string(x.body.size()) + "\r\n";
  }
  for (const auto& [name, value] : x.request.headers) head += name + ": " + value + "\r\n";
  head += "\r\n";
  head += x.body;
  if (std::string error = transport->writeAll(head, x.request.idleTimeout); !error.empty()) {
    staleConnection = reused;
    response.error = error;
    return response;
  }
  const ReadOutcome outcome = readResponse(*transport, x.request, response);
  if (outcome.nothingReceived && reused) staleConnection = true;
  if (x.keepAlive && outcome.reusable) pool_->put(std::move(transport));
  return response;
}

}  // namespace gpuguard::cluster
