// devchain transactions: one instruction signed by the sender's secp256k1 key
// (docs/devchain.md). Canonical encoding, codec rules of docs/protocol.md §A:
//
//   DevchainTxV1 {
//     version:           u8 = 1,
//     chain_instance_id: Bytes32,
//     nonce:             u64,            // the sender's next nonce
//     body:              Cbqs = 1 { payload: Bytes }            // a SYS_CBQS payload
//                      | ParameterWrite = 2 { name: Bytes, value: u64 }
//                      | Transfer = 3 { to: Address, amount: u128 }
//                      | Cip11 = 4 { payload: Bytes }           // a cip11/chain/instructions.h payload
//                      | ValidatorSet = 5 { payload: Bytes },   // a validator_set_tx.h payload (governance)
//     signature:         [u8; 65],       // r || s || recovery id
//   }
//
// signing digest = keccak256("cowboy/devchain-tx/v1" || canonical(tx) without signature)
// tx hash        = keccak256(canonical(tx)), signature included
// sender         = the EVM-style address recovered from the signature
#pragma once

#include <string>
#include <variant>

#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::devchain {

inline constexpr std::size_t kMaxTxBytes = 65'536;
inline constexpr std::size_t kMaxParamNameBytes = 128;
inline constexpr std::string_view kTxDomain = "cowboy/devchain-tx/v1";

struct CbqsCall {
  static constexpr std::uint8_t kTag = 1;
  Bytes payload;
  bool operator==(const CbqsCall&) const = default;
};
struct ParameterWrite {
  static constexpr std::uint8_t kTag = 2;
  std::string name;
  std::uint64_t value = 0;
  bool operator==(const ParameterWrite&) const = default;
};
struct Transfer {
  static constexpr std::uint8_t kTag = 3;
  Address to{};
  u128 amount = 0;
  bool operator==(const Transfer&) const = default;
};
struct Cip11Call {
  static constexpr std::uint8_t kTag = 4;
  Bytes payload;
  bool operator==(const Cip11Call&) const = default;
};
/// A governance change of the validator set (validator_set_tx.h, docs/devchain.md D10).
struct ValidatorSetCall {
  static constexpr std::uint8_t kTag = 5;
  Bytes payload;
  bool operator==(const ValidatorSetCall&) const = default;
};
using TxBody = std::variant<CbqsCall, ParameterWrite, Transfer, Cip11Call, ValidatorSetCall>;

struct Transaction {
  Bytes32 chain_instance_id{};
  std::uint64_t nonce = 0;
  TxBody body;
  crypto::RecoverableSignature signature{};
  bool operator==(const Transaction&) const = default;
};

Bytes encode_tx(const Transaction& tx);
Result<Transaction, codec::DecodeError> decode_tx(ByteView bytes);

Bytes32 signing_digest(const Transaction& tx);
Bytes32 tx_hash(const Transaction& tx);
/// Fills in the signature; false for an invalid secret.
bool sign_tx(Transaction& tx, const crypto::Secp256k1Secret& secret);
/// The sender, or nullopt when the signature recovers nothing.
std::optional<Address> recover_sender(const Transaction& tx);

}  // namespace cowboy::devchain
