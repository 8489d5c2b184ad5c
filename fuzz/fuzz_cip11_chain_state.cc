// The stored CIP-11 chain state and each of its records (what the devchain
// reads from its store at every open, one record per key): arbitrary bytes
// are refused or decode to a value whose encoding is exactly those bytes.
#include <cstdlib>
#include <cstring>

#include "cip11/chain/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  using namespace cowboy::cip11::chain;
  codec::Reader r(ByteView(data, size));
  State state = get_state(r);
  r.finish();
  if (r.ok()) {
    codec::Writer w;
    put_state(w, state);
    if (w.data().size() != size || std::memcmp(w.data().data(), data, size) != 0) std::abort();
  }
  if (auto runner = decode_runner(ByteView(data, size))) {
    Bytes again = encode_runner(*runner);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  if (auto job = decode_job(ByteView(data, size))) {
    Bytes again = encode_job(*job);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  if (auto proof = decode_presence_proof(ByteView(data, size))) {  // also what GET .../presence-proof answers
    Bytes again = encode_presence_proof(*proof);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  if (auto mru = decode_mru(ByteView(data, size))) {
    Bytes again = encode_mru(*mru);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  return 0;
}
