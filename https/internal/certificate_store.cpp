#include "https/internal/certificate_store.h"

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <utility>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace gpuguard::webhook {

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

namespace {

std::string withDetail(std::string message) {
  std::string detail = opensslErrors();
  if (!detail.empty()) message += " (" + detail + ")";
  return message;
}

struct BioCloser {
  void operator()(BIO* b) const { BIO_free(b); }
};

// The certificate's notAfter as seconds since the Unix epoch (UTCTime and
// GeneralizedTime alike; ASN1 times are UTC, hence timegm).
bool notAfterSeconds(const X509* cert, std::int64_t& seconds) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) return false;
  seconds = static_cast<std::int64_t>(timegm(&tm));
  return true;
}

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
  if (!notAfterSeconds(ck->leaf_, ck->notAfter_)) {
    error = withDetail("cannot read the notAfter date of the certificate in " + certFile);
    return nullptr;
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

bool FileStamp::operator==(const FileStamp& o) const {
  return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
         mtime.tv_nsec == o.mtime.tv_nsec && ctime.tv_sec == o.ctime.tv_sec && ctime.tv_nsec == o.ctime.tv_nsec;
}

FileStamp FileStamp::of(const std::string& path) {
  FileStamp s;
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
    : WatchedValue({std::move(certFile), std::move(keyFile)},
                   [](const std::vector<std::string>& files, std::string& error) {
                     return CertifiedKey::load(files[0], files[1], error);
                   }) {}

int CertificateStore::certCallback(SSL* ssl, void* arg) {
  auto* store = static_cast<CertificateStore*>(arg);
  std::shared_ptr<const CertifiedKey> ck = store->current();
  if (!ck) return 0;  // aborts the handshake
  return ck->useOn(ssl) ? 1 : 0;
}

namespace {

std::string hexOf(const unsigned char* data, unsigned len) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[data[i] >> 4];
    out += hex[data[i] & 15];
  }
  return out;
}

struct MdCtxCloser {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct X509Closer {
  void operator()(X509* x) const { X509_free(x); }
};

}  // namespace

ClientCaBundle::~ClientCaBundle() {
  X509_STORE_free(store_);
  sk_X509_NAME_pop_free(names_, X509_NAME_free);
}

std::shared_ptr<const ClientCaBundle> ClientCaBundle::load(const std::string& file, std::string& error) {
  ERR_clear_error();
  std::shared_ptr<ClientCaBundle> bundle(new ClientCaBundle());
  std::unique_ptr<BIO, BioCloser> bio(BIO_new_file(file.c_str(), "r"));
  if (!bio) {
    error = withDetail("cannot open client CA file " + file);
    return nullptr;
  }
  bundle->store_ = X509_STORE_new();
  bundle->names_ = sk_X509_NAME_new_null();
  std::unique_ptr<EVP_MD_CTX, MdCtxCloser> md(EVP_MD_CTX_new());
  if (!bundle->store_ || !bundle->names_ || !md || EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr) != 1) {
    error = withDetail("out of memory");
    return nullptr;
  }
  while (true) {
    std::unique_ptr<X509, X509Closer> ca(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!ca) break;
    unsigned char* der = nullptr;
    const int derLen = i2d_X509(ca.get(), &der);
    const bool hashed = derLen > 0 && EVP_DigestUpdate(md.get(), der, static_cast<std::size_t>(derLen)) == 1;
    OPENSSL_free(der);
    X509_NAME* name = X509_NAME_dup(X509_get_subject_name(ca.get()));
    if (!hashed || !name || X509_STORE_add_cert(bundle->store_, ca.get()) != 1 || !sk_X509_NAME_push(bundle->names_, name)) {
      X509_NAME_free(name);
      error = withDetail("cannot use a CA certificate of " + file);
      return nullptr;
    }
    if (char* s = X509_NAME_oneline(name, nullptr, 0)) {
      if (!bundle->subjects_.empty()) bundle->subjects_ += "; ";
      bundle->subjects_ += s;
      OPENSSL_free(s);
    }
    ++bundle->count_;
  }
  // The loop ends with a "no start line" error at end of file; anything else
  // is a broken certificate.
  const unsigned long last = ERR_peek_last_error();
  if (last != 0 && !(ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE)) {
    error = withDetail("broken certificate in client CA file " + file);
    return nullptr;
  }
  ERR_clear_error();
  if (bundle->count_ == 0) {
    error = "no PEM certificate in client CA file " + file;
    return nullptr;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digestLen = 0;
  if (EVP_DigestFinal_ex(md.get(), digest, &digestLen) != 1) {
    error = withDetail("cannot digest the client CAs");
    return nullptr;
  }
  bundle->fingerprint_ = hexOf(digest, digestLen);
  return bundle;
}

bool ClientCaBundle::useOn(SSL* ssl) const {
  STACK_OF(X509_NAME)* names = SSL_dup_CA_list(names_);
  if (!names) return false;
  SSL_set_client_CA_list(ssl, names);  // takes ownership
  // At most SSL_MAX_SID_CTX_LENGTH (32) bytes: a prefix and 28 hex digits.
  const std::string context = "ggca" + fingerprint_.substr(0, SSL_MAX_SID_CTX_LENGTH - 4);
  return SSL_set1_verify_cert_store(ssl, store_) == 1 &&
         SSL_set_session_id_context(ssl, reinterpret_cast<const unsigned char*>(context.data()),
                                    static_cast<unsigned>(context.size())) == 1;
}

ClientCaStore::ClientCaStore(std::string file)
    : WatchedValue({std::move(file)}, [](const std::vector<std::string>& files, std::string& error) {
        return ClientCaBundle::load(files[0], error);
      }) {}

int ClientCaStore::clientHelloCallback(SSL* ssl, int* alert, void* arg) {
  const auto* store = static_cast<const ClientCaStore*>(arg);
  std::shared_ptr<const ClientCaBundle> bundle = store->current();
  if (bundle && bundle->useOn(ssl)) return SSL_CLIENT_HELLO_SUCCESS;
  *alert = SSL_AD_INTERNAL_ERROR;
  return SSL_CLIENT_HELLO_ERROR;
}

}  // namespace gpuguard::webhook
