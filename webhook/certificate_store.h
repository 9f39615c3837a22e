// The server's certificate and key: loaded into an immutable CertifiedKey,
// published through an atomic shared_ptr, swapped when the files change.
// New TLS handshakes pick up the current pair (SSL_CTX_set_cert_cb); live
// connections keep the one they started with.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace gpuguard::webhook {

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

  // Installs this pair on one connection (from a certificate callback).
  bool useOn(SSL* ssl) const;

 private:
  CertifiedKey() = default;
  X509* leaf_ = nullptr;
  STACK_OF(X509) * chain_ = nullptr;
  EVP_PKEY* key_ = nullptr;
  std::string fingerprint_;
  std::string subject_;
};

// The current pair plus the file watch. Thread-safe.
class CertificateStore {
 public:
  CertificateStore(std::string certFile, std::string keyFile);

  // Loads the files now. On failure the current pair (if any) stays and the
  // failure is counted (except for the very first load).
  bool reload(std::string& error);
  // Reloads if either file changed since the last attempt (stat() through
  // symlinks: inode, device, size, mtime, ctime), so a Kubernetes Secret
  // volume's `..data` swap is seen. Returns true if it tried; `ok`/`error`
  // tell how it went.
  bool reloadIfChanged(bool& ok, std::string& error);

  std::shared_ptr<const CertifiedKey> current() const { return current_.load(std::memory_order_acquire); }
  std::uint64_t reloads() const { return reloads_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

  // For SSL_CTX_set_cert_cb(ctx, CertificateStore::certCallback, store).
  static int certCallback(SSL* ssl, void* store);

 private:
  struct Stamp {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    std::timespec mtime{};
    std::timespec ctime{};
    bool operator==(const Stamp& o) const;
  };
  static Stamp stampOf(const std::string& path);
  bool reloadLocked(std::string& error);

  const std::string certFile_;
  const std::string keyFile_;
  std::mutex mutex_;  // serialises reloads; never taken on the handshake path
  Stamp certStamp_, keyStamp_;
  bool everLoaded_ = false;
  std::atomic<std::shared_ptr<const CertifiedKey>> current_;
  std::atomic<std::uint64_t> reloads_{0};
  std::atomic<std::uint64_t> failures_{0};
};

}  // namespace gpuguard::webhook
