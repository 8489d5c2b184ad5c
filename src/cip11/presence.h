// PresenceInputV1 (§7.2) and the Runner Registry index basis it is read against (§8.5).
//
//   version u8 = 0x01 | kind u8 | body
//   kind 0x00 bitmap: exactly ceil(n/8) bytes, bit j of byte b (LSB first) = index 8b+j,
//                     no bit set at a position >= n
//   kind 0x01 sparse: count u32 BE, then count strictly ascending u32 BE indices < n
// where n = |registry(H-1)|, the active-runner array at the end of the parent block.
#pragma once

#include <cstring>
#include <unordered_map>
#include <vector>

#include "cip11/errc.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

/// The abstract present set: registry indices, O(1) membership.
class PresentSet {
 public:
  explicit PresentSet(std::uint32_t registry_size = 0) : bits_(registry_size, false) {}
  void add(std::uint32_t index) {
    if (!bits_.at(index)) ++count_, bits_[index] = true;
  }
  bool contains(std::uint32_t index) const { return index < bits_.size() && bits_[index]; }
  std::uint32_t registry_size() const { return static_cast<std::uint32_t>(bits_.size()); }
  std::uint32_t count() const { return count_; }
  std::vector<std::uint32_t> indices() const;
  bool operator==(const PresentSet&) const = default;

 private:
  std::vector<bool> bits_;
  std::uint32_t count_ = 0;
};

enum class PresenceKind : std::uint8_t { kBitmap = 0x00, kSparse = 0x01 };

Bytes encode_presence(const PresentSet& set, PresenceKind kind);
/// The smaller of the two encodings; the bitmap on a tie (a proposer SHOULD pick the smaller, §7.2).
Bytes encode_presence(const PresentSet& set);
/// Decodes the proposer's literal bytes; every §7.2 malformed case is refused.
Res<PresentSet> decode_presence(ByteView input, std::uint32_t registry_size);

/// The Runner Registry's ACTIVE_RUNNERS_KEY value: runner addresses in
/// registration (append) order. A runner's index never changes: health,
/// staleness and pausing live elsewhere and never reorder or compact this list.
class ActiveRunners {
 public:
  /// Appends a new runner and returns its index; a known runner keeps its index.
  std::uint32_t register_runner(const Address& runner);
  std::optional<std::uint32_t> index_of(const Address& runner) const;
  const Address& at(std::uint32_t index) const { return order_.at(index); }
  std::uint32_t size() const { return static_cast<std::uint32_t>(order_.size()); }
  bool operator==(const ActiveRunners& other) const { return order_ == other.order_; }

  /// Stored as a deterministic-CBOR array of 20-byte byte strings.
  Bytes encode() const;
  static Res<ActiveRunners> decode(ByteView stored);

 private:
  struct AddressHash {  // addresses are keccak output: any 8 of their bytes are uniform
    std::size_t operator()(const Address& a) const {
      std::size_t h;
      std::memcpy(&h, a.data(), sizeof h);
      return h;
    }
  };
  std::vector<Address> order_;
  std::unordered_map<Address, std::uint32_t, AddressHash> index_;  // a lookup per candidate per selection
};

}  // namespace cowboy::cip11
