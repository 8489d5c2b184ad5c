// §6.2 admission and the §12.2/§12.6 rules of a connection's frames, fed
// arbitrary peer bytes: the stream goes through the reassembler into a
// validator's Handshake (as a Channel does before admission), and every
// frame through placement_allowed and check_seal (as it does after).
// Properties: no crash; no admission (the peer would need the runner's key
// to sign over this end's fresh challenge); once refused, always refused;
// check_seal never accepts a frame signed for another connection binding.
#include <cstdint>

#include "cip11/handshake.h"
#include "cip11/link/seal.h"
#include "cip11/reassembler.h"

namespace {

using namespace cowboy;
using namespace cowboy::cip11;

class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

struct Fixture {
  Signer validator = [] {
    crypto::init();
    crypto::Ed25519Seed seed;
    seed.fill(0x22);
    return Signer::validator(seed);
  }();
  Signer runner = [] {
    crypto::Secp256k1Secret secret;
    secret.fill(0x11);
    return *Signer::runner(secret);
  }();
  BoundConnection bound{ConnectionBinding{7, kProtocolVersion, runner.pubkey(), validator.pubkey(), {}, Epoch{0}, {}}};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture f;
  if (size == 0) return 0;
  const std::size_t step = 1 + data[0] % 61;
  ByteView stream(data + 1, size - 1);

  AdmitAll admit;
  SeededEntropy entropy(size);
  Bytes32 channel_binding{};
  channel_binding.fill(0x80);
  Handshake handshake(f.validator, LocalOffer{7, kProtocolVersion, {}, Epoch{0}, Height{0}}, channel_binding, admit, entropy);
  net::ReadBudget budget(kMaxFrameBytes);
  FrameReassembler frames(&budget);
  bool refused = false, first = true;
  for (std::size_t at = 0; at < stream.size(); at += step) {
    if (!frames.push(stream.subspan(at, std::min(step, stream.size() - at)))) break;
    while (auto frame = frames.next()) {
      (void)placement_allowed(type_of(*frame), Role::kRunner, first ? StreamKind::kControl : StreamKind::kJob, first);
      first = false;
      if (check_seal(*frame, Role::kRunner, f.bound).ok()) {
        // Only frames without a signature pass: the fuzzer holds no key.
        const auto t = type_of(*frame);
        if (t != FrameType::kHello && t != FrameType::kHelloAck && t != FrameType::kJobProgress &&
            t != FrameType::kJobResult && t != FrameType::kJobResultCommit)
          __builtin_trap();
      }
      auto step_out = handshake.on_frame(*frame);
      if (refused && !step_out.refuse) __builtin_trap();  // the first refusal is final
      refused = refused || step_out.refuse.has_value();
      if (handshake.admitted()) __builtin_trap();
    }
  }
  return 0;
}
