#include "transit/contract/segments.h"

#include "common/crypto.h"
#include "transit/contract/codec.h"

namespace cowboy::transit {
namespace {
void put_u64(std::array<std::uint8_t, 8>& out, Id v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v & 0xff);
}
}  // namespace

Digest segment_origin(ResourceId resource, Revision revision) {
  static constexpr std::string_view kDomain{"transit.segment.v1\0", 19};
  std::array<std::uint8_t, 8> r{}, v{};
  put_u64(r, resource.value);
  put_u64(v, revision.value);
  return crypto::sha256({as_bytes(kDomain), ByteView(r.data(), r.size()), ByteView(v.data(), v.size())});
}

Digest segment_link(const Digest& chain, const Entry& entry) {
  std::string text;
  codec::write(text, entry);
  return crypto::sha256({ByteView(chain.data(), chain.size()), as_bytes(text)});
}

}  // namespace cowboy::transit
