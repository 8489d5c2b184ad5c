// Stored records (§18 rule 3) and the authorization objects, selected by the first byte.
#include "roundtrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::cbqs;
  if (size == 0) return 0;
  const std::uint8_t* body = data + 1;
  std::size_t n = size - 1;
  switch (data[0] % 8) {
    case 0: fuzz::check_roundtrip<ProviderRecordV2>(body, n); break;
    case 1: fuzz::check_roundtrip<StreamRecordV2>(body, n); break;
    case 2: fuzz::check_roundtrip<CbqsAccountV2>(body, n); break;
    case 3: fuzz::check_roundtrip<StreamGrantV2>(body, n); break;
    case 4: fuzz::check_roundtrip<SessionProofV2>(body, n); break;
    case 5: fuzz::check_roundtrip<CheckpointReceiptV2>(body, n); break;
    case 6: fuzz::check_roundtrip<GroupConfigV2>(body, n); break;
    default: fuzz::check_roundtrip<StreamSettingsV2>(body, n); break;
  }
  return 0;
}
