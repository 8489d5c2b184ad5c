#include "transit/contract/signing.h"

#include "transit/contract/codec.h"

namespace cowboy::transit {
Digest domain_digest(std::string_view domain, std::string_view canonical) {
  static const std::uint8_t kNul = 0;
  return crypto::sha256({as_bytes(domain), ByteView(&kNul, 1), as_bytes(canonical)});
}

Digest request_digest(const Request& request) { return domain_digest(kRequestDomain, to_json(request)); }
Digest query_digest(const Query& query) { return domain_digest(kQueryDomain, to_json(query)); }

SignedRequest sign(const Request& request, const crypto::Ed25519Seed& seed) {
  const Digest d = request_digest(request);
  return SignedRequest{request, crypto::ed25519_sign(seed, d)};
}

SignedQuery sign(const Query& query, const crypto::Ed25519Seed& seed) {
  const Digest d = query_digest(query);
  return SignedQuery{query, crypto::ed25519_sign(seed, d)};
}

bool verify_digest(const Digest& digest, const Signature& signature, const PublicKey& key) {
  return crypto::ed25519_verify(key, digest, signature);
}

bool verify(const SignedRequest& s, const PublicKey& key) { return verify_digest(request_digest(s.request), s.signature, key); }
bool verify(const SignedQuery& s, const PublicKey& key) { return verify_digest(query_digest(s.query), s.signature, key); }

}  // namespace cowboy::transit
