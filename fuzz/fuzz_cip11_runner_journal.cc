// The runner journal's stored entries (cip11/runner/journal.h), what a
// restarted runner reads back before it resends anything: arbitrary bytes are
// refused or decode to an entry whose encoding is exactly those bytes.
#include <cstdlib>
#include <cstring>

#include "cip11/runner/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  using namespace cowboy::cip11;
  const ByteView in(data, size);
  if (auto tx = decode_retained(in)) {
    Bytes again = encode_retained(*tx);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  if (auto o = decode_obligation(in)) {
    Bytes again = encode_obligation(*o);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  return 0;
}
