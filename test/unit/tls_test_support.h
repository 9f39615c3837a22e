// Throw-away PKI and a small blocking TLS/HTTP client for tests that talk to
// the HTTPS server on loopback. Everything is made in-process with the
// OpenSSL API: no openssl binary, no files except those a test writes.
//
//   tls::TestCa ca;                                   // self-signed ECDSA P-256 CA
//   tls::KeyPair server = ca.issueServer();           // CN/SAN 127.0.0.1 + localhost
//   tls::TempDir dir; dir.write("tls.crt", server.certPem); ...
//   tls::TlsClient client;
//   ASSERT_TRUE(client.connect(port, {.caPem = ca.certPem()}, error)) << error;
//   auto response = client.request("POST", "/validate", body);
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace gpuguard::testing::tls {

// --- OpenSSL ownership -----------------------------------------------------

struct OsslFree {
  void operator()(X509* p) const { X509_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
  void operator()(SSL* p) const { SSL_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using X509Ptr = std::unique_ptr<X509, OsslFree>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OsslFree>;
using BioPtr = std::unique_ptr<BIO, OsslFree>;
using CtxPtr = std::unique_ptr<SSL_CTX, OsslFree>;
using SslPtr = std::unique_ptr<SSL, OsslFree>;

inline std::string opensslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

[[noreturn]] inline void fail(const std::string& what) { throw std::runtime_error(what + ": " + opensslErrors()); }

inline std::string toPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) fail("PEM_write_bio_X509");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

inline std::string toPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    fail("PEM_write_bio_PrivateKey");
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

inline X509Ptr certFromPem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) fail("PEM_read_bio_X509");
  return cert;
}

inline KeyPtr keyFromPem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) fail("PEM_read_bio_PrivateKey");
  return key;
}

// SHA-256 of the DER, lower-case hex (what HttpsServer::certificateFingerprint gives).
inline std::string fingerprint(X509* cert) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (X509_digest(cert, EVP_sha256(), md, &len) != 1) fail("X509_digest");
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

inline std::string fingerprintOfPem(const std::string& certPem) { return fingerprint(certFromPem(certPem).get()); }

inline std::uint64_t nextSerial() {
  static std::atomic<std::uint64_t> serial{static_cast<std::uint64_t>(::getpid()) * 1000000u + 1};
  return serial.fetch_add(1);
}

// --- Throw-away PKI -----------------------------------------------------------

struct KeyPair {
  std::string certPem;  // leaf, then intermediates (a full chain) if the issuer is one
  std::string keyPem;
  std::string leafFingerprint;
  std::uint64_t serial = 0;
};

class TestCa {
 public:
  // A self-signed root.
  explicit TestCa(const std::string& commonName = "gpuguard test CA") { init(commonName, nullptr); }
  // An intermediate signed by `parent`; leaves it issues carry it in their chain.
  TestCa(const std::string& commonName, const TestCa& parent) { init(commonName, &parent); }

  const std::string& certPem() const { return certPem_; }
  X509* cert() const { return cert_.get(); }
  EVP_PKEY* key() const { return key_.get(); }

  // A server certificate for 127.0.0.1 and localhost (ECDSA P-256).
  KeyPair issueServer(const std::string& commonName = "127.0.0.1",
                      const std::string& subjectAltName = "IP:127.0.0.1,DNS:localhost") const {
    return issueLeaf(commonName, subjectAltName, "serverAuth");
  }
  // A server certificate whose notAfter is `seconds` from now (negative: expired).
  KeyPair issueServerExpiringIn(long seconds) const {
    return issueLeaf("127.0.0.1", "IP:127.0.0.1,DNS:localhost", "serverAuth", seconds);
  }
  KeyPair issueClient(const std::string& commonName = "kube-apiserver") const {
    return issueLeaf(commonName, "", "clientAuth");
  }

 private:
  // 30 days: beyond the week in which the server warns that its certificate expires.
  static constexpr long kValiditySeconds = 30L * 24 * 3600;

  static KeyPtr newKey() {
    KeyPtr key(EVP_EC_gen("P-256"));
    if (!key) fail("EVP_EC_gen");
    return key;
  }

  static void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    std::unique_ptr<X509_EXTENSION, OsslFree> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail(std::string("extension ") + value);
  }

  static X509Ptr makeCert(const std::string& commonName, EVP_PKEY* subjectKey, X509* issuerCert, EVP_PKEY* issuerKey,
                          std::uint64_t serial, bool isCa, const std::string& subjectAltName,
                          const std::string& extendedKeyUsage, long notAfterSeconds = kValiditySeconds) {
    X509Ptr cert(X509_new());
    if (!cert) fail("X509_new");
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), notAfterSeconds);
    X509_set_pubkey(cert.get(), subjectKey);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("gpuguard tests"), -1,
                               -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(commonName.c_str()),
                               -1, -1, 0);
    X509* issuer = issuerCert ? issuerCert : cert.get();
    X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
    if (isCa) {
      addExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:TRUE");
      addExtension(cert.get(), issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
      addExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
      addExtension(cert.get(), issuer, NID_key_usage, "critical,digitalSignature");
      addExtension(cert.get(), issuer, NID_ext_key_usage, extendedKeyUsage.c_str());
      if (!subjectAltName.empty()) addExtension(cert.get(), issuer, NID_subject_alt_name, subjectAltName.c_str());
    }
    addExtension(cert.get(), issuer, NID_subject_key_identifier, "hash");
    if (issuerCert) addExtension(cert.get(), issuer, NID_authority_key_identifier, "keyid:always");
    if (X509_sign(cert.get(), issuerKey ? issuerKey : subjectKey, EVP_sha256()) <= 0) fail("X509_sign");
    return cert;
  }

  void init(const std::string& commonName, const TestCa* parent) {
    key_ = newKey();
    cert_ = makeCert(commonName, key_.get(), parent ? parent->cert() : nullptr, parent ? parent->key() : nullptr,
                     nextSerial(), true, "", "");
    certPem_ = toPem(cert_.get());
    // A root is not sent; an intermediate is, followed by its own issuers up to the root.
    if (parent) chainPem_ = certPem_ + parent->chainPem_;
  }

  KeyPair issueLeaf(const std::string& commonName, const std::string& subjectAltName,
                    const std::string& extendedKeyUsage, long notAfterSeconds = kValiditySeconds) const {
    KeyPtr leafKey = newKey();
    KeyPair out;
    out.serial = nextSerial();
    X509Ptr leaf = makeCert(commonName, leafKey.get(), cert_.get(), key_.get(), out.serial, false, subjectAltName,
                            extendedKeyUsage, notAfterSeconds);
    out.certPem = toPem(leaf.get()) + chainPem_;
    out.keyPem = toPem(leafKey.get());
    out.leafFingerprint = fingerprint(leaf.get());
    return out;
  }

  KeyPtr key_;
  X509Ptr cert_;
  std::string certPem_;
  std::string chainPem_;  // intermediates to send after a leaf this CA issues
};

// --- Files --------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpuguard-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // Writes through a temporary file and rename(), so a reader never sees half a file.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string target = file(name);
    const std::string tmp = target + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f << content;
      if (!f) throw std::runtime_error("cannot write " + tmp);
    }
    std::filesystem::rename(tmp, target);
    return target;
  }

 private:
  std::filesystem::path path_;
};

// --- Plain TCP ------------------------------------------------------------------

inline void setTimeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A blocking TCP connection to 127.0.0.1:port; -1 on failure.
inline int tcpConnect(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  setTimeouts(fd, timeout);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class TcpSocket {
 public:
  TcpSocket() = default;
  explicit TcpSocket(int fd) : fd_(fd) {}
  TcpSocket(TcpSocket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  TcpSocket& operator=(TcpSocket&& o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  ~TcpSocket() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  bool send(std::string_view data) const {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Everything until the peer closes (or the socket's timeout): what a
  // client sees after sending garbage.
  std::string readUntilClose() const {
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

// --- HTTP over a blocking TLS client -------------------------------------------------

struct Response {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  const std::string* header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return &v;
    }
    return nullptr;
  }
};

inline std::string buildRequest(const std::string& method, const std::string& path, const std::string& body = "",
                                const std::vector<std::pair<std::string, std::string>>& extraHeaders = {}) {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  bool hasLength = false;
  for (const auto& [n, v] : extraHeaders) {
    r += n + ": " + v + "\r\n";
    if (n == "Content-Length") hasLength = true;
  }
  if (!hasLength && (!body.empty() || method == "POST")) {
    r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  r += "\r\n";
  r += body;
  return r;
}

struct ClientOptions {
  std::string caPem;      // verify the server against this CA (and its IP 127.0.0.1); empty: no verification
  std::string certPem;    // client certificate (leaf + chain), optional
  std::string keyPem;
  int minVersion = 0;     // e.g. TLS1_VERSION to let an old-protocol client through our own side
  int maxVersion = 0;     // e.g. TLS1_1_VERSION
  std::string cipherList; // TLS 1.2 cipher list, e.g. "DEFAULT@SECLEVEL=0"
  std::chrono::milliseconds timeout{5000};  // per blocking read/write
  std::shared_ptr<SSL_SESSION> session;     // offer to resume this session (TlsClient::session())
};

// How the last read from the server ended (TlsClient::lastEnd()).
enum class ReadEnd {
  None,         // no failed read yet
  CleanClose,   // close_notify, or a FIN (EOF) from the server
  Reset,        // ECONNRESET / EPIPE: the server reset the connection
  Timeout,      // nothing within the client's timeout
  Other,        // a TLS error
};

class TlsClient {
 public:
  TlsClient() = default;
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;
  ~TlsClient() { close(); }

  // Connects and completes the handshake. False with `error` if either fails.
  bool connect(std::uint16_t port, const ClientOptions& options, std::string& error) {
    return connectOver(tcpConnect(port, options.timeout), options, error);
  }

  // The handshake over a TCP connection made already (by tcpConnect: it may
  // still wait in the server's accept queue); takes ownership of `fd`.
  bool connectOver(int fd, const ClientOptions& options, std::string& error) {
    const int connectErrno = errno;
    close();
    if (fd < 0) {
      error = std::string("connect: ") + std::strerror(connectErrno);
      return false;
    }
    fd_ = fd;
    ERR_clear_error();
    ctx_.reset(SSL_CTX_new(TLS_client_method()));
    if (!ctx_) {
      error = "SSL_CTX_new: " + opensslErrors();
      return false;
    }
    if (options.minVersion) SSL_CTX_set_min_proto_version(ctx_.get(), options.minVersion);
    if (options.maxVersion) SSL_CTX_set_max_proto_version(ctx_.get(), options.maxVersion);
    if (!options.cipherList.empty() && SSL_CTX_set_cipher_list(ctx_.get(), options.cipherList.c_str()) != 1) {
      error = "cipher list: " + opensslErrors();
      return false;
    }
    if (!options.caPem.empty()) {
      X509Ptr ca = certFromPem(options.caPem);
      X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_.get()), ca.get());
      SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
    }
    if (!options.certPem.empty()) {
      BioPtr bio(BIO_new_mem_buf(options.certPem.data(), static_cast<int>(options.certPem.size())));
      X509Ptr leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
      if (!leaf || SSL_CTX_use_certificate(ctx_.get(), leaf.get()) != 1) {
        error = "client certificate: " + opensslErrors();
        return false;
      }
      while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        SSL_CTX_add0_chain_cert(ctx_.get(), extra);
      }
      ERR_clear_error();
      KeyPtr key = keyFromPem(options.keyPem);
      if (SSL_CTX_use_PrivateKey(ctx_.get(), key.get()) != 1) {
        error = "client key: " + opensslErrors();
        return false;
      }
    }
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl_.get(), fd_);
    if (!options.caPem.empty()) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), "127.0.0.1");
    if (options.session) SSL_set_session(ssl_.get(), options.session.get());
    if (SSL_connect(ssl_.get()) != 1) {
      error = "handshake: " + opensslErrors();
      long verify = SSL_get_verify_result(ssl_.get());
      if (verify != X509_V_OK) error += std::string(" (verify: ") + X509_verify_cert_error_string(verify) + ")";
      close();
      return false;
    }
    return true;
  }

  bool connected() const { return ssl_ != nullptr; }
  SSL* ssl() const { return ssl_.get(); }
  int fd() const { return fd_; }

  std::string peerFingerprint() const {
    X509Ptr peer(SSL_get1_peer_certificate(ssl_.get()));
    return peer ? fingerprint(peer.get()) : std::string();
  }
  // Certificates the server sent (leaf first).
  int peerChainLength() const {
    STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl_.get());
    return chain ? sk_X509_num(chain) : 0;
  }
  std::string protocol() const { return SSL_get_version(ssl_.get()); }
  // The session to resume later (with TLS 1.3 the ticket arrives after the
  // handshake: read a response first).
  std::shared_ptr<SSL_SESSION> session() const {
    return std::shared_ptr<SSL_SESSION>(SSL_get1_session(ssl_.get()), SSL_SESSION_free);
  }
  bool resumed() const { return SSL_session_reused(ssl_.get()) == 1; }

  bool write(std::string_view data) {
    while (!data.empty()) {
      errno = 0;
      int n = SSL_write(ssl_.get(), data.data(), static_cast<int>(data.size()));
      if (n <= 0) {
        recordEnd(n);
        return false;
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Reads one response (Content-Length framed; or up to EOF without one).
  // Nothing if the connection closed or timed out first. Interim (1xx)
  // responses are skipped unless `skipInterim` is false.
  std::optional<Response> readResponse(bool skipInterim = true) {
    std::size_t headEnd;
    while ((headEnd = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    Response r;
    std::string_view head(pending_.data(), headEnd);
    std::size_t lineEnd = head.find("\r\n");
    std::string_view statusLine = head.substr(0, lineEnd);
    if (statusLine.size() < 12 || statusLine.substr(0, 5) != "HTTP/") return std::nullopt;
    std::from_chars(statusLine.data() + 9, statusLine.data() + 12, r.status);
    std::optional<std::size_t> length;
    while (lineEnd != std::string_view::npos) {
      head.remove_prefix(lineEnd + 2);
      lineEnd = head.find("\r\n");
      std::string_view line = head.substr(0, lineEnd);
      std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string name(line.substr(0, colon));
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (name == "content-length") {
        std::size_t n = 0;
        std::from_chars(value.data(), value.data() + value.size(), n);
        length = n;
      }
      r.headers.emplace_back(std::move(name), std::string(value));
    }
    pending_.erase(0, headEnd + 4);
    if (r.status >= 100 && r.status < 200) {
      if (skipInterim) return readResponse();
      return r;
    }
    if (length) {
      while (pending_.size() < *length) {
        if (!fill()) return std::nullopt;
      }
      r.body = pending_.substr(0, *length);
      pending_.erase(0, *length);
    } else {
      while (fill()) {
      }
      r.body = std::move(pending_);
      pending_.clear();
    }
    return r;
  }

  std::optional<Response> request(const std::string& method, const std::string& path, const std::string& body = "",
                                  const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    if (!write(buildRequest(method, path, body, headers))) return std::nullopt;
    return readResponse();
  }

  // Without blocking: has the server sent response bytes (or closed)?
  // TLS 1.3 session tickets, which arrive unasked, do not count.
  bool responsePending() {
    if (!pending_.empty()) return true;
    const int flags = ::fcntl(fd_, F_GETFL);
    ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
    char buf[1];
    const int n = SSL_peek(ssl_.get(), buf, 1);
    const int err = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_.get(), n);
    ERR_clear_error();
    ::fcntl(fd_, F_SETFL, flags);
    return err != SSL_ERROR_WANT_READ;
  }

  // True if the server has closed the connection (EOF or close_notify, or a
  // reset: see lastEnd()) and sent nothing more; false if data came or the
  // read timed out.
  bool peerClosed() {
    if (!pending_.empty()) return false;
    char buf[256];
    errno = 0;
    int n = SSL_read(ssl_.get(), buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<std::size_t>(n));
      return false;
    }
    recordEnd(n);
    return lastEnd_ != ReadEnd::Timeout;
  }

  // Why the last read or write failed.
  ReadEnd lastEnd() const { return lastEnd_; }
  const std::string& lastError() const { return lastError_; }  // details of lastEnd()
  // Bytes received but not yet returned as a response: non-empty after a
  // failed readResponse() means a truncated response.
  const std::string& unread() const { return pending_; }

  void close() {
    lastEnd_ = ReadEnd::None;
    ssl_.reset();
    ctx_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    pending_.clear();
    ERR_clear_error();
  }

 private:
  bool fill() {
    char buf[16384];
    errno = 0;
    int n = SSL_read(ssl_.get(), buf, sizeof buf);
    if (n <= 0) {
      recordEnd(n);
      return false;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  void recordEnd(int result) {
    const int savedErrno = errno;
    const int err = SSL_get_error(ssl_.get(), result);
    const unsigned long reason = ERR_GET_REASON(ERR_peek_error());
    lastError_ = "SSL error " + std::to_string(err) + ", errno " + std::to_string(savedErrno) + ": " + opensslErrors();
    if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SSL && reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) ||
        (err == SSL_ERROR_SYSCALL && savedErrno == 0)) {
      lastEnd_ = ReadEnd::CleanClose;
    } else if (err == SSL_ERROR_SYSCALL && (savedErrno == ECONNRESET || savedErrno == EPIPE)) {
      lastEnd_ = ReadEnd::Reset;
    } else if (err == SSL_ERROR_SYSCALL && (savedErrno == EAGAIN || savedErrno == EWOULDBLOCK)) {
      lastEnd_ = ReadEnd::Timeout;
    } else {
      lastEnd_ = ReadEnd::Other;
    }
  }

  CtxPtr ctx_;
  SslPtr ssl_;
  int fd_ = -1;
  std::string pending_;
  ReadEnd lastEnd_ = ReadEnd::None;
  std::string lastError_;
};

// One request on a fresh connection. Nothing if the connection or the
// request failed.
inline std::optional<Response> httpsRequest(std::uint16_t port, const ClientOptions& options,
                                            const std::string& method, const std::string& path,
                                            const std::string& body = "") {
  TlsClient client;
  std::string error;
  if (!client.connect(port, options, error)) return std::nullopt;
  return client.request(method, path, body);
}

}  // namespace gpuguard::testing::tls
