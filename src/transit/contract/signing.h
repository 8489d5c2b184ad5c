// Signed envelopes: Ed25519 over SHA-256(domain || NUL || canonical JSON of the
// inner request or query). The two domains keep a command signature from ever
// verifying as a query signature, and the reverse.
#pragma once

#include "common/crypto.h"
#include "transit/contract/types.h"

namespace cowboy::transit {

inline constexpr std::string_view kRequestDomain = "transit.request.v1";
inline constexpr std::string_view kQueryDomain = "transit.query.v1";

/// SHA-256(domain || NUL || canonical), for text already in canonical form.
Digest domain_digest(std::string_view domain, std::string_view canonical);
/// The bytes a signature covers, hashed: the SHA-256 named above.
Digest request_digest(const Request& request);
Digest query_digest(const Query& query);

SignedRequest sign(const Request& request, const crypto::Ed25519Seed& seed);
SignedQuery sign(const Query& query, const crypto::Ed25519Seed& seed);

bool verify(const SignedRequest& signed_request, const PublicKey& key);
bool verify(const SignedQuery& signed_query, const PublicKey& key);
/// For a digest already computed (the node hashes once and keeps the digest).
bool verify_digest(const Digest& digest, const Signature& signature, const PublicKey& key);

}  // namespace cowboy::transit
