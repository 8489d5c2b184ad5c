// Transit history (docs/transit.md, decisions 64-69): what the node decodes
// from its own store to rest the floor on a checkpoint and to answer exact
// retries of trimmed commands - a journal entry read back from its two tables
// (the request text, a newline, the receipt text) - and the head that carries
// the floor. The first byte picks which. Whatever decodes is canonical: its
// spelling is the input, byte for byte; an entry whose parts do not belong
// together is refused.
#include <cstdlib>

#include "transit/contract/envelope.h"
#include "transit/contract/signing.h"
#include "transit/node/records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::transit;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 2) {
    case 0: {
      const auto split = text.find('\n');
      if (split == std::string_view::npos) break;
      const auto request = text.substr(0, split), receipt = text.substr(split + 1);
      const auto entry = node::stored_entry(request, receipt);
      if (!entry) break;
      if (to_json(entry->request) != request || to_json(entry->receipt) != receipt) std::abort();
      if (entry->receipt.request_digest != request_digest(entry->request.request) ||
          entry->receipt.principal != entry->request.request.principal ||
          entry->receipt.sequence != entry->request.request.sequence)
        std::abort();
      break;
    }
    case 1: {
      auto head = from_json<node::Head>(text, kMaxAnswerBytes);
      if (head.ok() && to_json(*head) != text) std::abort();
      break;
    }
  }
  return 0;
}
