#include "cip11/presence.h"

#include <algorithm>
#include <optional>

#include "cip11/cbor.h"
#include "common/codec.h"

namespace cowboy::cip11 {
namespace {
constexpr std::uint8_t kPresenceVersion = 0x01;

std::size_t bitmap_bytes(std::uint32_t registry_size) { return (std::size_t{registry_size} + 7) / 8; }
}  // namespace

std::vector<std::uint32_t> PresentSet::indices() const {
  std::vector<std::uint32_t> out;
  out.reserve(count_);
  for (std::uint32_t i = 0; i < bits_.size(); ++i)
    if (bits_[i]) out.push_back(i);
  return out;
}

Bytes encode_presence(const PresentSet& set, PresenceKind kind) {
  codec::Writer w;
  w.u8(kPresenceVersion);
  w.u8(static_cast<std::uint8_t>(kind));
  if (kind == PresenceKind::kBitmap) {
    Bytes bitmap(bitmap_bytes(set.registry_size()), 0);
    for (std::uint32_t i : set.indices()) bitmap[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
    w.raw(bitmap);
  } else {
    w.u32(set.count());
    for (std::uint32_t i : set.indices()) w.u32(i);
  }
  return std::move(w).take();
}

Bytes encode_presence(const PresentSet& set) {
  const std::size_t sparse = 4 + 4 * std::size_t{set.count()};
  return encode_presence(set, sparse < bitmap_bytes(set.registry_size()) ? PresenceKind::kSparse : PresenceKind::kBitmap);
}

Res<PresentSet> decode_presence(ByteView input, std::uint32_t registry_size) {
  if (input.empty() || input[0] != kPresenceVersion) return Err{Errc::kBadPresenceVersion};
  if (input.size() < 2 || input[1] > 0x01) return Err{Errc::kUnknownPresenceKind};
  ByteView body = input.subspan(2);
  PresentSet set(registry_size);
  if (input[1] == static_cast<std::uint8_t>(PresenceKind::kBitmap)) {
    if (body.size() != bitmap_bytes(registry_size)) return Err{Errc::kBadBitmapLength};
    for (std::size_t b = 0; b < body.size(); ++b) {
      for (unsigned j = 0; j < 8; ++j) {
        if (!(body[b] & (1u << j))) continue;
        const std::size_t index = 8 * b + j;
        if (index >= registry_size) return Err{Errc::kBitBeyondRegistry};
        set.add(static_cast<std::uint32_t>(index));
      }
    }
    return set;
  }
  if (body.size() < 4) return Err{Errc::kBadSparseLength};
  codec::Reader r(body);
  const std::uint32_t count = r.u32();
  if (body.size() != 4 + 4 * std::uint64_t{count}) return Err{Errc::kBadSparseLength};  // so every read below succeeds
  std::optional<std::uint32_t> previous;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t index = r.u32();
    if (previous && index <= *previous) return Err{Errc::kSparseNotAscending};
    previous = index;
    if (index >= registry_size) return Err{Errc::kIndexBeyondRegistry};
    set.add(index);
  }
  return set;
}

std::uint32_t ActiveRunners::register_runner(const Address& runner) {
  auto [it, inserted] = index_.emplace(runner, size());
  if (inserted) order_.push_back(runner);
  return it->second;
}

std::optional<std::uint32_t> ActiveRunners::index_of(const Address& runner) const {
  auto it = index_.find(runner);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

Bytes ActiveRunners::encode() const {
  cbor::Writer w;
  w.array(order_.size());
  for (const auto& a : order_) w.bytes(a);
  return w.take();
}

Res<ActiveRunners> ActiveRunners::decode(ByteView stored) {
  cbor::Reader r(stored);
  ActiveRunners out;
  const std::uint64_t n = r.array();
  for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
    ByteView a = r.bytes();
    if (!r.ok()) break;
    if (a.size() != 20) return Err{Errc::kWrongLength};
    Address address;
    std::copy(a.begin(), a.end(), address.begin());
    if (out.index_of(address)) return Err{Errc::kDuplicateKey};  // an address holds one index
    out.register_runner(address);
  }
  r.expect_end();
  if (!r.ok()) return Err{r.error()};
  return out;
}

}  // namespace cowboy::cip11
