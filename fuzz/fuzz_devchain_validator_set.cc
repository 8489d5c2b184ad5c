// What the devchain decodes from a ValidatorSetCall's payload, for any sender
// (the governance check comes first, but every validator decodes what the
// block carries): a ScheduleValidatorSetV1, either version (version 2 names
// chain APIs, docs/cip11.md choice 130). Any accepted input must be canonical.
#include <cstdlib>
#include <cstring>

#include "devchain/validator_set_tx.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  auto set = devchain::decode_schedule_validator_set(ByteView(data, size));
  if (!set) return 0;
  if (set->validators.size() > devchain::kMaxDecodedSetValidators) std::abort();
  Bytes again = devchain::encode_schedule_validator_set(*set);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  (void)devchain::as_change(*set);
  return 0;
}
