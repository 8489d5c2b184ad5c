// Blocks as the block contract has them (docs/transit.md, decisions 100-109):
// immutable bodies of 1..64 KiB a turn publishes in its one writable
// resource (decision 31 for how they travel), each with a record kept beside
// it - its checksum, its source (the resource and the revision that
// published it) and its owner (the process whose turn published it, and the
// principal that signed that turn) - and one lifecycle:
//
//   turn --> published (readable at its source revision and after)
//        --retire_block (an administrator of the owner; advances the resource's revision)--> retired
//        --delete_block (no live view can still read it; the body is removed)--> deleted
//
// The record outlives the body: a deleted block's name stays taken and its
// checksum and provenance stay readable. Same conventions as types.h: one
// field list per type, declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

enum class BlockState : std::uint8_t { kPublished, kRetired, kDeleted };
template <> struct EnumTraits<BlockState> {
  static constexpr std::array<std::string_view, 3> kNames = {"published", "retired", "deleted"};
};

/// What a source-qualified block read expects its block to be: published at
/// exactly this revision of the read's resource, with this SHA-256 (decision 103).
struct BlockSource {
  static constexpr std::string_view kName = "BlockSource";
  Revision revision{};
  Digest sha256{};
  bool operator==(const BlockSource&) const = default;
};
template <typename V> void fields(V& v, BlockSource& t) { v("revision", t.revision)("sha256", t.sha256); }

// ---- commands ----------------------------------------------------------------------

/// Retires a published block: from the resource's next revision on it is read
/// no more; views captured before still read it (decision 105).
struct RetireBlock {
  static constexpr std::string_view kName = "retire_block";
  ResourceId resource{};
  EntryKey name;
  bool operator==(const RetireBlock&) const = default;
};
template <typename V> void fields(V& v, RetireBlock& t) { v("resource", t.resource)("name", t.name); }

/// Removes a retired block's body, once no live view can still read it (decision 106).
struct DeleteBlock {
  static constexpr std::string_view kName = "delete_block";
  ResourceId resource{};
  EntryKey name;
  bool operator==(const DeleteBlock&) const = default;
};
template <typename V> void fields(V& v, DeleteBlock& t) { v("resource", t.resource)("name", t.name); }

// ---- receipts ------------------------------------------------------------------------

struct BlockChanged {
  static constexpr std::string_view kName = "block_changed";
  ResourceId resource{};
  EntryKey name;
  Revision revision{};  // the resource's revision after the decision
  BlockState state = BlockState::kRetired;
  bool operator==(const BlockChanged&) const = default;
};
template <typename V> void fields(V& v, BlockChanged& t) {
  v("resource", t.resource)("name", t.name)("revision", t.revision)("state", t.state);
}

// ---- queries ----------------------------------------------------------------------------

/// A block's body at one basis (decision 27): readable there (decision 104)
/// and, when `source` is given, published exactly as it says (decision 103).
struct ReadBlock {
  static constexpr std::string_view kName = "read_block";
  Basis basis;
  EntryKey name;
  std::optional<BlockSource> source;
  bool operator==(const ReadBlock&) const = default;
};
template <typename V> void fields(V& v, ReadBlock& t) { v("basis", t.basis)("name", t.name)("source", t.source); }

/// A block's record, whatever its state; needs inspect on the resource.
struct BlockRead {
  static constexpr std::string_view kName = "block_info";
  ResourceId resource{};
  EntryKey name;
  bool operator==(const BlockRead&) const = default;
};
template <typename V> void fields(V& v, BlockRead& t) { v("resource", t.resource)("name", t.name); }

// ---- results ----------------------------------------------------------------------------

/// A block's body with its source: the revision that published it and its
/// SHA-256, which the node checked the stored body against before answering
/// (decision 101) and the client checks again.
struct Block {
  static constexpr std::string_view kName = "block";
  ResourceId resource{};
  Revision revision{};
  EntryKey name;
  Digest sha256{};
  Hex<kBlockBytes> body;
  bool operator==(const Block&) const = default;
};
template <typename V> void fields(V& v, Block& t) {
  v("resource", t.resource)("revision", t.revision)("name", t.name)("sha256", t.sha256)("body", t.body);
}

/// A block as recorded. `revision` is its source: the revision of `resource`
/// its turn published; `pid` and `publisher` its owner. Each position is
/// written once, by the decision that takes the step.
struct BlockInfo {
  static constexpr std::string_view kName = "block_info";
  ResourceId resource{};
  EntryKey name;
  Revision revision{};
  Id length = 0;
  Digest sha256{};
  Pid pid{};
  PrincipalId publisher{};
  BlockState state = BlockState::kPublished;
  Position published_at{};  // positions
  std::optional<Revision> retired_revision;  // the first revision of `resource` that no longer reads it
  std::optional<Position> retired_at;
  std::optional<Position> deleted_at;
  bool operator==(const BlockInfo&) const = default;
};
template <typename V> void fields(V& v, BlockInfo& t) {
  v("resource", t.resource)("name", t.name)("revision", t.revision)("length", t.length)("sha256", t.sha256)(
      "pid", t.pid)("publisher", t.publisher)("state", t.state)("published_at", t.published_at)(
      "retired_revision", t.retired_revision)("retired_at", t.retired_at)("deleted_at", t.deleted_at);
}

/// Whether a block recorded as `b` is readable at `revision` of its resource:
/// published at or before it, and not retired by then (decision 104).
inline bool readable_at(const BlockInfo& b, Revision revision) {
  return b.revision <= revision && (!b.retired_revision || revision < *b.retired_revision) &&
         b.state != BlockState::kDeleted;
}

}  // namespace cowboy::transit
