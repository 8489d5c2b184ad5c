#include "devchain/fork.h"

namespace cowboy::devchain {

bool wins_at_height(cip11::View view_a, const Bytes32& digest_a, cip11::View view_b, const Bytes32& digest_b) {
  if (view_a != view_b) return view_a > view_b;
  return digest_a < digest_b;
}

Bytes encode_undo(const UndoRecord& record) {
  codec::Writer w;
  w.u8(kUndoVersion);
  w.count(record.entries.size());
  for (const auto& e : record.entries) {
    w.bytes(as_bytes(e.key));
    w.option(e.before, [&](const std::string& v) { w.bytes(as_bytes(v)); });
  }
  return std::move(w).take();
}

Result<UndoRecord, codec::DecodeError> decode_undo(ByteView bytes) {
  codec::Reader r(bytes);
  r.version(kUndoVersion);
  UndoRecord out;
  // Each entry holds at least a key length and an option tag.
  const std::uint32_t n = r.count(kMaxUndoEntries, 5);
  out.entries.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    UndoEntry e;
    const Bytes key = r.bytes(kMaxUndoKeyBytes);
    e.key.assign(key.begin(), key.end());
    if (r.option_tag()) {
      const Bytes before = r.bytes(bytes.size());
      e.before.emplace(before.begin(), before.end());
    }
    out.entries.push_back(std::move(e));
  }
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return out;
}

}  // namespace cowboy::devchain
