#include "devchain/tx.h"

namespace cowboy::devchain {

namespace {
constexpr std::uint8_t kTxVersion = 1;

void put_unsigned(codec::Writer& w, const Transaction& tx) {
  w.u8(kTxVersion);
  w.fixed(tx.chain_instance_id);
  w.u64(tx.nonce);
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        w.u8(T::kTag);
        if constexpr (std::is_same_v<T, CbqsCall> || std::is_same_v<T, Cip11Call> || std::is_same_v<T, ValidatorSetCall>) {
          w.bytes(body.payload);
        } else if constexpr (std::is_same_v<T, ParameterWrite>) {
          w.bytes(as_bytes(body.name));
          w.u64(body.value);
        } else {
          w.fixed(body.to);
          w.u128(body.amount);
        }
      },
      tx.body);
}
}  // namespace

Bytes encode_tx(const Transaction& tx) {
  codec::Writer w;
  put_unsigned(w, tx);
  w.fixed(tx.signature);
  return std::move(w).take();
}

Result<Transaction, codec::DecodeError> decode_tx(ByteView bytes) {
  if (bytes.size() > kMaxTxBytes) return Err{codec::DecodeError::kLengthOverCap};
  codec::Reader r(bytes);
  Transaction tx;
  r.version(kTxVersion);
  tx.chain_instance_id = r.fixed<32>();
  tx.nonce = r.u64();
  switch (r.u8()) {
    case CbqsCall::kTag: tx.body = CbqsCall{r.bytes(kMaxTxBytes)}; break;
    case ParameterWrite::kTag: {
      Bytes name = r.bytes(kMaxParamNameBytes);
      tx.body = ParameterWrite{std::string(name.begin(), name.end()), r.u64()};
      break;
    }
    case Cip11Call::kTag: tx.body = Cip11Call{r.bytes(kMaxTxBytes)}; break;
    case ValidatorSetCall::kTag: tx.body = ValidatorSetCall{r.bytes(kMaxTxBytes)}; break;
    case Transfer::kTag: {
      Address to = r.fixed<20>();
      tx.body = Transfer{to, r.u128()};
      break;
    }
    default: r.fail(codec::DecodeError::kUnknownVariant);
  }
  tx.signature = r.fixed<65>();
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return tx;
}

Bytes32 signing_digest(const Transaction& tx) {
  codec::Writer w;
  w.raw(kTxDomain);
  put_unsigned(w, tx);
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
