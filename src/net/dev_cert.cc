#include "net/dev_cert.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <functional>
#include <memory>

#include "common/data_dir.h"

namespace cowboy::net {

namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;

bool add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

// PEM text from OpenSSL's writer, written whole or not at all: after a crash
// each file is whole or absent, and a start that finds one alone makes both again.
bool write_pem(const std::filesystem::path& path, mode_t mode, const std::function<bool(BIO*)>& write) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || !write(bio.get())) return false;
  char* text = nullptr;
  long size = BIO_get_mem_data(bio.get(), &text);
  return size >= 0 &&
         data_dir::write_file(path, std::string_view(text, static_cast<std::size_t>(size)), mode, data_dir::IfExists::kReplace)
             .ok();
}

}  // namespace

Result<CertFiles, std::string> ensure_dev_certificate(const std::filesystem::path& dir) {
  CertFiles files{dir / "dev-cert.pem", dir / "dev-key.pem"};
  if (std::filesystem::exists(files.certificate) && std::filesystem::exists(files.private_key)) return files;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Err{"cannot create " + dir.string() + ": " + ec.message()};

  PKey key(EVP_EC_gen("P-256"));
  Cert cert(X509_new());
  if (!key || !cert) return Err{std::string("OpenSSL could not create a key")};
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 60L * 60 * 24 * 365 * 5);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!add_extension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1") ||
      !add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return Err{std::string("OpenSSL could not sign the dev certificate")};

  if (!write_pem(files.private_key, 0600, [&](BIO* bio) {
        return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
      }))
    return Err{"cannot write " + files.private_key.string()};
  if (!write_pem(files.certificate, 0644, [&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()) == 1; }))
    return Err{"cannot write " + files.certificate.string()};
  return files;
}

}  // namespace cowboy::net
