// Transit storage maintenance (docs/transit.md, decisions 144-146): the
// compaction ledger's record and the relocated marker as the node reads them
// back from its own store (node::decode_compaction_record, decode_relocated),
// and a purge row's key (layout::parse_purge, decision 180).
// Whatever decodes is canonical: its spelling is the input, byte for byte.
#include <cstdlib>

#include "transit/contract/codec.h"
#include "transit/node/layout.h"
#include "transit/node/storage.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::transit;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto record = node::decode_compaction_record(text)) {
    if (to_json(*record) != text) std::abort();
    if (node::leaf_ranges(record->leaf).empty()) std::abort();  // every leaf occupies at least one range
  }
  if (const auto through = node::decode_relocated(text)) {
    std::string again;
    node::layout::put_be64(again, *through);
    if (again != text) std::abort();
  }
  if (const auto row = node::layout::parse_purge(text)) {
    // A row that parses names a key the node could have written; the padding may differ.
    const std::string again = node::layout::purge(row->epoch, row->resource, row->name);
    if (again.size() != text.size() || node::layout::parse_purge(again)->name != row->name) std::abort();
  }
  return 0;
}
