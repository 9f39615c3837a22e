// The server's certificate and key, and the CAs that sign acceptable client
// certificates: each loaded into an immutable object, published through an
// atomic shared_ptr, swapped when the files change. New TLS handshakes pick
// up the current ones (SSL_CTX_set_cert_cb, SSL_CTX_set_client_hello_cb);
// live connections keep what they started with.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

namespace gpuguard::webhook {

// OpenSSL's error queue, emptied: its messages joined with "; " ("" when empty).
std::string opensslErrors();

// What stat() says of a file (through symlinks): inode, device, size, mtime,
// ctime. A Kubernetes Secret or ConfigMap volume's `..data` swap changes it.
struct FileStamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  std::timespec mtime{};
  std::timespec ctime{};
  bool operator==(const FileStamp& o) const;
  static FileStamp of(const std::string& path);
};

// A value loaded from files and swapped in atomically, what the serving
// certificate and the client CAs share: a failed load keeps the current value
// (and counts the failure, except for the very first load); readers on the
// handshake path only take a shared_ptr, never the reload mutex.
template <class T>
class WatchedValue {
 public:
  // Reads the files now.
  bool reload(std::string& error) {
    std::lock_guard lock(mutex_);
    return reloadLocked(error);
  }
  // Reloads if any file changed since the last attempt (stat() through
  // symlinks: inode, device, size, mtime, ctime), so a Kubernetes Secret
  // volume's `..data` swap is seen. Returns true if it tried; `ok`/`error`
  // tell how it went.
  bool reloadIfChanged(bool& ok, std::string& error) {
    std::lock_guard lock(mutex_);
    if (!changed()) return false;
    ok = reloadLocked(error);
    return true;
  }

  std::shared_ptr<const T> current() const { return current_.load(std::memory_order_acquire); }
  std::uint64_t reloads() const { return reloads_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

 protected:
  using Loader = std::shared_ptr<const T> (*)(const std::vector<std::string>& files, std::string& error);
  WatchedValue(std::vector<std::string> files, Loader load)
      : files_(std::move(files)), stamps_(files_.size()), load_(load) {}

 private:
  bool changed() const {
    for (std::size_t i = 0; i < files_.size(); ++i) {
      if (!(FileStamp::of(files_[i]) == stamps_[i])) return true;
    }
    return false;
  }

  bool reloadLocked(std::string& error) {
    // Stamp before reading: a change that lands while we read is seen by the
    // next poll.
    for (std::size_t i = 0; i < files_.size(); ++i) stamps_[i] = FileStamp::of(files_[i]);
    std::shared_ptr<const T> fresh = load_(files_, error);
    if (!fresh) {
      if (everLoaded_) failures_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    current_.store(std::move(fresh), std::memory_order_release);
    if (everLoaded_) reloads_.fetch_add(1, std::memory_order_relaxed);
    everLoaded_ = true;
    return true;
  }

  const std::vector<std::string> files_;
  std::vector<FileStamp> stamps_;
  const Loader load_;
  std::mutex mutex_;  // serialises reloads
  bool everLoaded_ = false;
  std::atomic<std::shared_ptr<const T>> current_;
  std::atomic<std::uint64_t> reloads_{0};
  std::atomic<std::uint64_t> failures_{0};
};

// A leaf certificate, its intermediates and the private key that matches it.
// Immutable once built; shared by every handshake that uses it.
class CertifiedKey {
 public:
  // Reads PEM files: `certFile` holds the leaf first, then any
  // intermediates; `keyFile` the private key. Null with `error` if a file is
  // missing or unreadable, holds no certificate or key, or the key does not
  // match the leaf.
  static std::shared_ptr<const CertifiedKey> load(const std::string& certFile, const std::string& keyFile,
                                                  std::string& error);
  ~CertifiedKey();
  CertifiedKey(const CertifiedKey&) = delete;
  CertifiedKey& operator=(const CertifiedKey&) = delete;

  X509* leaf() const { return leaf_; }
  STACK_OF(X509) * chain() const { return chain_; }  // intermediates, may be empty
  EVP_PKEY* key() const { return key_; }
  const std::string& fingerprint() const { return fingerprint_; }  // SHA-256 of the leaf DER, hex
  const std::string& subject() const { return subject_; }
  // The leaf's notAfter in seconds since the Unix epoch (what
  // gpuguard_serving_certificate_expiration_timestamp_seconds reports).
  std::int64_t notAfter() const { return notAfter_; }

  // Installs this pair on one connection (from a certificate callback).
  bool useOn(SSL* ssl) const;

 private:
  CertifiedKey() = default;
  X509* leaf_ = nullptr;
  STACK_OF(X509) * chain_ = nullptr;
  EVP_PKEY* key_ = nullptr;
  std::string fingerprint_;
  std::string subject_;
  std::int64_t notAfter_ = 0;
};

// The current pair plus the file watch. Thread-safe.
class CertificateStore : public WatchedValue<CertifiedKey> {
 public:
  CertificateStore(std::string certFile, std::string keyFile);

  // For SSL_CTX_set_cert_cb(ctx, CertificateStore::certCallback, store).
  static int certCallback(SSL* ssl, void* store);
};

// The CA certificates of --client-ca-file. Immutable once built.
class ClientCaBundle {
 public:
  // Reads every PEM certificate of `file`. Null with `error` if the file is
  // missing or unreadable, holds no certificate or a broken one.
  static std::shared_ptr<const ClientCaBundle> load(const std::string& file, std::string& error);
  ~ClientCaBundle();
  ClientCaBundle(const ClientCaBundle&) = delete;
  ClientCaBundle& operator=(const ClientCaBundle&) = delete;

  std::size_t size() const { return count_; }
  const std::string& fingerprint() const { return fingerprint_; }  // SHA-256 of the CAs' DER, hex
  const std::string& subjects() const { return subjects_; }        // "CN=a; CN=b"

  // Makes one connection verify client certificates against these CAs and
  // name them in its CertificateRequest. Also gives it a session id context
  // derived from the bundle, so a session (ticket) whose client certificate
  // was verified against another bundle is never resumed: after a rotation
  // that drops a CA, its clients must verify again.
  bool useOn(SSL* ssl) const;

 private:
  ClientCaBundle() = default;
  X509_STORE* store_ = nullptr;
  STACK_OF(X509_NAME) * names_ = nullptr;
  std::size_t count_ = 0;
  std::string fingerprint_;
  std::string subjects_;
};

// The current client CA bundle plus the file watch. Thread-safe.
class ClientCaStore : public WatchedValue<ClientCaBundle> {
 public:
  explicit ClientCaStore(std::string file);

  // For SSL_CTX_set_client_hello_cb(ctx, ClientCaStore::clientHelloCallback, store).
  static int clientHelloCallback(SSL* ssl, int* alert, void* store);
};

}  // namespace gpuguard::webhook
