#include "devchain/tx.h"

#include "common/fields.h"

namespace cowboy::devchain {

namespace {

// Each body and the transaction list their fields once; common/fields.h's Put
// writes them and Get reads them back.
struct Wire {
  static constexpr std::uint8_t kVersion = 1;
};
using Put = codec::Put<Wire>;

COWBOY_FIELDS(CbqsCall) { v.bytes(x.payload, kMaxTxBytes); }
COWBOY_FIELDS(ParameterWrite) {
  v.text(x.name, kMaxParamNameBytes);
  v(x.value);
}
COWBOY_FIELDS(Transfer) { v(x.to), v(x.amount); }
COWBOY_FIELDS(Cip11Call) { v.bytes(x.payload, kMaxTxBytes); }
COWBOY_FIELDS(ValidatorSetCall) { v.bytes(x.payload, kMaxTxBytes); }

/// What the signature signs: every field but the signature.
template <typename V, typename T>
void unsigned_fields(V& v, T& tx) {
  v.version();
  v(tx.chain_instance_id), v(tx.nonce);
  v.variant(tx.body);
}
COWBOY_FIELDS(Transaction) {
  unsigned_fields(v, x);
  v(x.signature);
}
}  // namespace

Bytes encode_tx(const Transaction& tx) { return codec::encode_fields<Wire>(tx); }

Result<Transaction, codec::DecodeError> decode_tx(ByteView bytes) {
  if (bytes.size() > kMaxTxBytes) return Err{codec::DecodeError::kLengthOverCap};
  return codec::decode_fields<Wire, Transaction>(bytes);
}

Bytes32 signing_digest(const Transaction& tx) {
  codec::Writer w(256);  // most transactions fit; also keeps GCC 12 from a false -Wstringop-overflow on the domain
  w.raw(kTxDomain);
  Put p{w};
  unsigned_fields(p, tx);
  return crypto::keccak256(w.data());
}

Bytes32 tx_hash(const Transaction& tx) { return crypto::keccak256(encode_tx(tx)); }

bool sign_tx(Transaction& tx, const crypto::Secp256k1Secret& secret) {
  auto sig = crypto::secp256k1_sign(secret, signing_digest(tx));
  if (!sig) return false;
  tx.signature = *sig;
  return true;
}

std::optional<Address> recover_sender(const Transaction& tx) {
  return crypto::secp256k1_recover_address(signing_digest(tx), tx.signature);
}

}  // namespace cowboy::devchain
