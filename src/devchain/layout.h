// Every key of the devchain's RocksDB store, spelled once. Keys are a text
// prefix and fixed-width binary parts (heights and indices big-endian, so a
// prefix scan reads them in order).
//
//   meta/genesis        genesis JSON                 meta/chain   chain_instance_id
//   meta/height         u64 BE: the last block written
//   meta/final_floor    u64 BE: the highest block final here (D12), written by a
//                       rollback only: absent or lower, final_height(head) is it
//   registry            encode_registry(): the CIP-39 registry (state_codec.h)
//   nonce/<address>     u64 BE: the sender's next nonce
//   block/<u64 BE>      block JSON {height, txs: [hash], cip11 part}
//   chain/<u64 BE>      the block as proposed: encode_signed_block() (block.h)
//   tx/<hash>           receipt JSON
//   undo/<u64 BE>       the block's undo record: encode_undo() (fork.h), the
//                       last kMaxRollbackDepth blocks of a chain with several validators
//   c11/...             the CIP-11 plane, one key per record (cip11_store.h)
//   vset/<u64 BE>       a validator-set change governance scheduled, by epoch:
//                       encode_schedule_validator_set() (validator_set_tx.h, D10)
//
// `state` is the whole-state key of store versions 1 and 2: its presence
// names a store this devchain does not read.
#pragma once

#include <string>
#include <string_view>

#include "common/bytes.h"

namespace cowboy::devchain::layout {

inline constexpr std::string_view kGenesis = "meta/genesis";
inline constexpr std::string_view kChain = "meta/chain";
inline constexpr std::string_view kHeight = "meta/height";
inline constexpr std::string_view kFinalFloor = "meta/final_floor";
inline constexpr std::string_view kRegistry = "registry";
inline constexpr std::string_view kWholeState = "state";
inline constexpr std::string_view kNoncePrefix = "nonce/";
inline constexpr std::string_view kBlockPrefix = "block/";
inline constexpr std::string_view kTxPrefix = "tx/";
inline constexpr std::string_view kChainBlockPrefix = "chain/";
inline constexpr std::string_view kUndoPrefix = "undo/";
inline constexpr std::string_view kValidatorSetPrefix = "vset/";

inline std::string be64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (56 - 8 * i));
  return out;
}
inline std::string be32(std::uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (24 - 8 * i));
  return out;
}
/// The big-endian number `s` holds (8 bytes or fewer).
inline std::uint64_t from_be(std::string_view s) {
  std::uint64_t v = 0;
  for (char c : s) v = v << 8 | static_cast<std::uint8_t>(c);
  return v;
}
inline std::string_view as_sv(ByteView b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

template <typename... Parts>
std::string key(std::string_view prefix, const Parts&... parts) {
  std::string out(prefix);
  (out.append(as_sv(ByteView(parts))), ...);
  return out;
}

inline std::string nonce_key(const Address& a) { return key(kNoncePrefix, a); }
inline std::string block_key(std::uint64_t h) { return std::string(kBlockPrefix) + be64(h); }
inline std::string chain_block_key(std::uint64_t h) { return std::string(kChainBlockPrefix) + be64(h); }
inline std::string undo_key(std::uint64_t h) { return std::string(kUndoPrefix) + be64(h); }
inline std::string tx_key(const Bytes32& hash) { return key(kTxPrefix, hash); }
inline std::string validator_set_key(std::uint64_t epoch) { return std::string(kValidatorSetPrefix) + be64(epoch); }

}  // namespace cowboy::devchain::layout
