#include "webhook/certificate_store.h"

#include <sys/stat.h>

#include <cstdio>
#include <utility>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace gpuguard::webhook {

namespace {

std::string opensslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

std::string withDetail(std::string message) {
  std::string detail = opensslErrors();
  if (!detail.empty()) message += " (" + detail + ")";
  return message;
}

struct BioCloser {
  void operator()(BIO* b) const { BIO_free(b); }
};

}  // namespace

CertifiedKey::~CertifiedKey() {
  X509_free(leaf_);
  sk_X509_pop_free(chain_, X509_free);
  EVP_PKEY_free(key_);
}

std::shared_ptr<const CertifiedKey> CertifiedKey::load(const std::string& certFile, const std::string& keyFile,
                                                       std::string& error) {
  ERR_clear_error();
  std::shared_ptr<CertifiedKey> ck(new CertifiedKey());

  std::unique_ptr<BIO, BioCloser> certBio(BIO_new_file(certFile.c_str(), "r"));
  if (!certBio) {
    error = withDetail("cannot open certificate file " + certFile);
    return nullptr;
  }
  ck->leaf_ = PEM_read_bio_X509_AUX(certBio.get(), nullptr, nullptr, nullptr);
  if (!ck->leaf_) {
    error = withDetail("no PEM certificate in " + certFile);
    return nullptr;
  }
  ck->chain_ = sk_X509_new_null();
  if (!ck->chain_) {
    error = "out of memory";
    return nullptr;
  }
  while (X509* extra = PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr)) {
    if (!sk_X509_push(ck->chain_, extra)) {
      X509_free(extra);
      error = "out of memory";
      return nullptr;
    }
  }
  // The loop ends with a "no start line" error at end of file; anything else
  // is a broken intermediate.
  unsigned long last = ERR_peek_last_error();
  if (last != 0 && !(ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE)) {
    error = withDetail("broken certificate after the leaf in " + certFile);
    return nullptr;
  }
  ERR_clear_error();

  std::unique_ptr<BIO, BioCloser> keyBio(BIO_new_file(keyFile.c_str(), "r"));
  if (!keyBio) {
    error = withDetail("cannot open key file " + keyFile);
    return nullptr;
  }
  ck->key_ = PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr);
  if (!ck->key_) {
    error = withDetail("no PEM private key in " + keyFile);
    return nullptr;
  }
  if (X509_check_private_key(ck->leaf_, ck->key_) != 1) {
    error = withDetail("the private key in " + keyFile + " does not match the certificate in " + certFile);
    return nullptr;
  }

  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdLen = 0;
  if (X509_digest(ck->leaf_, EVP_sha256(), md, &mdLen) != 1) {
    error = withDetail("cannot digest the certificate");
    return nullptr;
  }
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < mdLen; ++i) {
    ck->fingerprint_ += hex[md[i] >> 4];
    ck->fingerprint_ += hex[md[i] & 15];
  }
  if (char* s = X509_NAME_oneline(X509_get_subject_name(ck->leaf_), nullptr, 0)) {
    ck->subject_ = s;
    OPENSSL_free(s);
  }
  ERR_clear_error();
  return ck;
}

bool CertifiedKey::useOn(SSL* ssl) const {
  // override=1: replace whatever the SSL_CTX (which has none) would give.
  return SSL_use_cert_and_key(ssl, leaf_, key_, chain_, 1) == 1;
}

bool CertificateStore::Stamp::operator==(const Stamp& o) const {
  return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
         mtime.tv_nsec == o.mtime.tv_nsec && ctime.tv_sec == o.ctime.tv_sec && ctime.tv_nsec == o.ctime.tv_nsec;
}

CertificateStore::Stamp CertificateStore::stampOf(const std::string& path) {
  Stamp s;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return s;  // follows symlinks
  s.exists = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime = st.st_mtim;
  s.ctime = st.st_ctim;
  return s;
}

CertificateStore::CertificateStore(std::string certFile, std::string keyFile)
    : certFile_(std::move(certFile)), keyFile_(std::move(keyFile)) {}

bool CertificateStore::reloadLocked(std::string& error) {
  // Stamp before reading: a change that lands while we read is seen by the
  // next poll.
  certStamp_ = stampOf(certFile_);
  keyStamp_ = stampOf(keyFile_);
  std::shared_ptr<const CertifiedKey> fresh = CertifiedKey::load(certFile_, keyFile_, error);
  if (!fresh) {
    if (everLoaded_) failures_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  current_.store(std::move(fresh), std::memory_order_release);
  if (everLoaded_) reloads_.fetch_add(1, std::memory_order_relaxed);
  everLoaded_ = true;
  return true;
}

bool CertificateStore::reload(std::string& error) {
  std::lock_guard lock(mutex_);
  return reloadLocked(error);
}

bool CertificateStore::reloadIfChanged(bool& ok, std::string& error) {
  std::lock_guard lock(mutex_);
  if (stampOf(certFile_) == certStamp_ && stampOf(keyFile_) == keyStamp_) return false;
  ok = reloadLocked(error);
  return true;
}

int CertificateStore::certCallback(SSL* ssl, void* arg) {
  auto* store = static_cast<CertificateStore*>(arg);
  std::shared_ptr<const CertifiedKey> ck = store->current();
  if (!ck) return 0;  // aborts the handshake
  return ck->useOn(ssl) ? 1 : 0;
}

}  // namespace gpuguard::webhook
