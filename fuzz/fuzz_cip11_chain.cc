// The CIP-11 chain plane's instruction decoder, fed arbitrary payloads and
// applied to a small live chain (two runners, an assigned job, an M = 2 job
// waiting for its seed), as the devchain applies every Cip11Call.
// Properties: no crash; an accepted payload re-encodes to the same bytes;
// a refused instruction leaves the state, the balances and the effects as
// they were; the stored form of the state decodes back to the same bytes.
#include <cstdlib>
#include <cstring>

#include "cip11/chain/codec.h"
#include "cip11/chain/machine.h"

namespace {

using namespace cowboy;
using namespace cowboy::cip11::chain;

Bytes stored(const State& s) {
  codec::Writer w;
  put_state(w, s);
  return std::move(w).take();
}

struct Live {
  ChainParams params;
  State state;
  std::map<Address, u128> balances;
  std::vector<Address> senders;
  cip11::Height height{1};
  ValidatorSnapshots validators = ValidatorSnapshots::genesis({crypto::Ed25519Public{}});

  Live() {
    crypto::init();
    params.present_first_enabled = true;
    params.presence_hard_exclude_enabled = true;  // certificates are evaluated, not refused at the door
    for (std::uint8_t n = 1; n <= 2; ++n) {
      crypto::Secp256k1Secret secret{};
      secret[31] = n;
      auto key = *crypto::secp256k1_public_key(secret);
      Address a = *crypto::secp256k1_key_address(key);
      senders.push_back(a);
      balances[a] = 1'000'000;
      RegisterRunner r;
      r.key = key;
      r.stake = 1'000;
      r.job_kinds = 0x3f;
      r.max_concurrent = 4;
      step(a, r);
    }
    senders.push_back(Address{});  // not a runner
    step(senders[0], SubmitJob{cowboy::cip11::JobKind::kLlm, Bytes{1}, 50, 1, 0});
    step(senders[1], SubmitJob{cowboy::cip11::JobKind::kHttp, Bytes{2}, 50, 2, 0});
  }
  void step(const Address& sender, const Instruction& i) {
    ++height;
    cowboy::cip11::PresentSet present(state.index.size());
    DevBeacon beacon(Bytes32{}, height);
    BlockContext block{height, params, beacon, present, validators};
    Effects effects;
    begin_block(state, block, effects);
    Bytes32 hash{};
    hash[0] = static_cast<std::uint8_t>(height.value);
    apply(state, balances, block, TxContext{sender, hash}, encode_instruction(i), effects);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Live live;
  if (size == 0) return 0;
  auto decoded = decode_instruction(ByteView(data + 1, size - 1));
  if (decoded) {
    Bytes again = encode_instruction(*decoded);
    if (again.size() != size - 1 || std::memcmp(again.data(), data + 1, size - 1) != 0) std::abort();
  }
  Live chain = live;
  const Address sender = chain.senders[data[0] % chain.senders.size()];
  cowboy::cip11::PresentSet present(chain.state.index.size());
  DevBeacon beacon(Bytes32{}, chain.height);
  BlockContext block{chain.height, chain.params, beacon, present, chain.validators};
  const Bytes before = stored(chain.state);
  const auto balances = chain.balances;
  Effects effects;
  Outcome out = apply(chain.state, chain.balances, block, TxContext{sender, Bytes32{0xfe}},
                      ByteView(data + 1, size - 1), effects);
  const Bytes after = stored(chain.state);
  if (out.error && (after != before || chain.balances != balances || !effects.assigned.empty())) std::abort();
  codec::Reader r(after);
  State back = get_state(r);
  r.finish();
  if (!r.ok() || stored(back) != after) std::abort();
  return 0;
}
