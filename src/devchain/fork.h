// Fork resolution on a devchain with several validators (docs/devchain.md D7,
// D11): the rule every node applies alike to two blocks at one height, and
// the undo record each block stores so that a node can un-apply it.
//
// A block writes only what it changed (node.h), so un-applying one needs what
// those keys held before it: the undo record lists every key the block's
// WriteBatch put or deleted with its value before the block (none: the key was
// absent), and is written in that same synced batch under undo/<height>. Un-applying
// the head block is one more synced batch that puts each key back (or deletes
// it) and drops the record, so a crash leaves the head before or after that
// step, never between. Only the last kMaxRollbackDepth blocks keep a record;
// older blocks are final.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cip11/ids.h"
#include "common/bytes.h"
#include "common/codec.h"
#include "common/result.h"

namespace cowboy::devchain {

/// How many blocks below its head a node keeps an undo record (the undo
/// horizon): the record of block h - kMaxRollbackDepth is pruned in the batch
/// of block h. It bounds the genesis finality depth (below).
inline constexpr std::uint64_t kMaxRollbackDepth = 64;

/// The finality depth F of a genesis with several validators that names none
/// (docs/devchain.md D12): the undo horizon, as before F was a parameter.
inline constexpr std::uint64_t kDefaultFinalityDepth = kMaxRollbackDepth;

/// The highest final block of a chain whose head is `head`: what CIP-11 reads
/// as consensus finality (§9.2 "block S is finalized", §16.1's "finality
/// information"; docs/cip11.md choices 153, 156). `depth` is the chain's
/// finality depth: the genesis `finality_depth` F with several validators (no
/// rollback reaches a block F below the head: Node::follow and roll_back_to
/// refuse one), 0 for a lone producer, which never forks: its head.
inline std::uint64_t final_height(std::uint64_t head, std::uint64_t depth) {
  return head > depth ? head - depth : 0;
}

/// At one height, whether block `a` (its view and digest) wins over block `b`:
/// the higher view (its leader saw the lower view time out), the lower digest
/// on a tie. A strict order: exactly one of two different blocks wins.
bool wins_at_height(cip11::View view_a, const Bytes32& digest_a, cip11::View view_b, const Bytes32& digest_b);

/// One key a block's batch wrote, and its value before the block.
struct UndoEntry {
  std::string key;
  std::optional<std::string> before;  // nullopt: absent before the block
  bool operator==(const UndoEntry&) const = default;
};

/// A block's undo record: version 1, then Vec<(key: Bytes, before: Option<Bytes>)>.
struct UndoRecord {
  std::vector<UndoEntry> entries;
  bool operator==(const UndoRecord&) const = default;
};

inline constexpr std::uint8_t kUndoVersion = 1;
inline constexpr std::size_t kMaxUndoKeyBytes = 1024;
inline constexpr std::size_t kMaxUndoEntries = 1u << 22;

Bytes encode_undo(const UndoRecord& record);
/// Every length bounded before anything is allocated (a key at most
/// kMaxUndoKeyBytes, a value no longer than the input, kMaxUndoEntries).
Result<UndoRecord, codec::DecodeError> decode_undo(ByteView bytes);

}  // namespace cowboy::devchain
