// §6.2 Hello/HelloAck as each end runs it: mutual admission over one channel
// binding, a relay with a binding on each side refused by both ends, and every
// refusal with its Goodbye reason.
#include "cip11/handshake.h"

#include <gtest/gtest.h>

#include "handshake_fakes.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using testing::filled;
using testing::party;
using testing::CountingEntropy;
using testing::FixedAdmission;

LocalOffer offer() { return LocalOffer{7, kProtocolVersion, filled(0x40), Epoch{0}, Height{1000}}; }

struct Ends {
  CountingEntropy entropy;
  FixedAdmission runner_admission, validator_admission;
  Handshake runner, validator;
  Ends(const Bytes32& runner_binding, const Bytes32& validator_binding, LocalOffer validator_offer = offer())
      : runner(party().runner, offer(), runner_binding, runner_admission, entropy),
        validator(party().validator, validator_offer, validator_binding, validator_admission, entropy) {}
};

// The frames of `step`, each a HelloAck; no refusal.
HelloAck only_ack(const Handshake::Step& step) {
  EXPECT_FALSE(step.refuse);
  EXPECT_EQ(step.send.size(), 1u);
  return std::get<HelloAck>(step.send.at(0));
}

// Nothing to send and no refusal.
void nothing(const Handshake::Step& step) {
  EXPECT_FALSE(step.refuse);
  EXPECT_TRUE(step.send.empty());
}

// The fixed order (handshake.h): runner Hello, validator Hello, runner
// HelloAck, validator HelloAck. The validator is admitted when it verifies
// the runner's proof and only then proves itself, so the runner's admission
// implies the validator's.
TEST(Cip11Handshake, TheRunnerProvesFirstAndTheValidatorsHelloAckMeansItHasAdmitted) {
  Ends e(filled(0x80), filled(0x80));
  EXPECT_NE(e.runner.hello().challenge_nonce, e.validator.hello().challenge_nonce);
  nothing(e.validator.on_frame(e.runner.hello()));  // the validator has only its Hello to say
  EXPECT_FALSE(e.validator.proved());
  HelloAck from_runner = only_ack(e.runner.on_frame(e.validator.hello()));
  EXPECT_TRUE(e.runner.proved());     // its Goodbye is signed from now on
  EXPECT_FALSE(e.runner.admitted());  // the validator's proof is not in yet
  HelloAck from_validator = only_ack(e.validator.on_frame(from_runner));
  EXPECT_TRUE(e.validator.admitted());
  EXPECT_TRUE(e.validator.proved());
  nothing(e.runner.on_frame(from_validator));
  EXPECT_TRUE(e.runner.admitted());
  EXPECT_EQ(connection_id(e.runner.binding()), connection_id(e.validator.binding()));
  EXPECT_EQ(e.runner.binding().runner, party().runner.pubkey());
  EXPECT_EQ(e.runner.binding().validator, party().validator.pubkey());
  ASSERT_EQ(e.validator_admission.seen.size(), 1u);  // the user's admission saw the runner's Hello
  EXPECT_EQ(e.validator_admission.seen[0].party_pubkey, party().runner.pubkey());
  ASSERT_EQ(e.runner_admission.seen.size(), 1u);  // and the runner's saw the validator's
  EXPECT_EQ(e.runner_admission.seen[0].party_pubkey, party().validator.pubkey());
}

// A relay terminates TLS on each side (binding A towards the runner, B
// towards the validator) and forwards the frames verbatim: the runner's proof
// is over A, so the validator refuses it. Even a validator proof over B
// (made for whoever holds the runner's key on B) is refused by the runner.
TEST(Cip11Handshake, ARelayWithABindingOnEachSideIsRefusedByBothEnds) {
  Ends e(filled(0xa0), filled(0xb0));
  nothing(e.validator.on_frame(e.runner.hello()));
  HelloAck from_runner = only_ack(e.runner.on_frame(e.validator.hello()));
  EXPECT_EQ(e.validator.on_frame(from_runner).refuse, GoodbyeReason::kAuthFailed);
  EXPECT_FALSE(e.validator.admitted());

  Ends b(filled(0xa0), filled(0xb0));
  nothing(b.validator.on_frame(b.runner.hello()));
  (void)only_ack(b.runner.on_frame(b.validator.hello()));
  Handshake key_holder_on_b(party().runner, offer(), filled(0xb0), b.runner_admission, b.entropy);
  HelloAck over_b = only_ack(key_holder_on_b.on_frame(b.validator.hello()));
  HelloAck from_validator = only_ack(b.validator.on_frame(over_b));  // over the runner's challenge and B
  EXPECT_EQ(b.runner.on_frame(from_validator).refuse, GoodbyeReason::kAuthFailed);
  EXPECT_FALSE(b.runner.admitted());
}

// A HelloAck repeats its sender's Hello (version, key, role) and the offer
// both ends share (chain, validator-set hash, epoch); any difference is
// AuthFailed. Only the advisory block_height may differ (§6.2).
TEST(Cip11Handshake, AHelloAckRepeatsItsHelloAndTheOfferAndOnlyBlockHeightMayDiffer) {
  auto verdict = [](auto change) {
    Ends e(filled(0x80), filled(0x80));
    nothing(e.validator.on_frame(e.runner.hello()));
    HelloAck ack = only_ack(e.runner.on_frame(e.validator.hello()));
    change(ack);
    auto step = e.validator.on_frame(ack);
    return step.refuse ? std::optional<GoodbyeReason>(*step.refuse) : std::nullopt;
  };
  EXPECT_EQ(verdict([](HelloAck& a) { a.version = 0x0101; }), GoodbyeReason::kAuthFailed);
  EXPECT_EQ(verdict([](HelloAck& a) { a.chain_id = 8; }), GoodbyeReason::kAuthFailed);
  EXPECT_EQ(verdict([](HelloAck& a) { a.validator_set_hash = filled(0x41); }), GoodbyeReason::kAuthFailed);
  EXPECT_EQ(verdict([](HelloAck& a) { a.subset_epoch = Epoch{1}; }), GoodbyeReason::kAuthFailed);
  EXPECT_EQ(verdict([](HelloAck& a) { a.party_pubkey = testing::runner_key(1).pubkey(); }), GoodbyeReason::kAuthFailed);
  EXPECT_EQ(verdict([](HelloAck& a) { a.party_role = Role::kValidator; }), GoodbyeReason::kAuthFailed);
  EXPECT_EQ(verdict([](HelloAck& a) { a.block_height += 12345; }), std::nullopt);  // not signed, not checked
}

TEST(Cip11Handshake, EachOfferMismatchHasItsGoodbyeReason) {
  auto refused = [](Hello h) {
    Ends e(filled(0x80), filled(0x80));
    return e.validator.on_frame(h).refuse;
  };
  Ends base(filled(0x80), filled(0x80));
  Hello h = base.runner.hello();
  Hello v2 = h;
  v2.version = 0x0200;
  EXPECT_EQ(refused(v2), GoodbyeReason::kUnsupportedVersion);
  Hello minor = h;
  minor.version = 0x0101;  // a higher minor this end does not implement
  EXPECT_EQ(refused(minor), GoodbyeReason::kUnsupportedVersion);
  Hello chain = h;
  chain.chain_id = 8;
  EXPECT_EQ(refused(chain), GoodbyeReason::kWrongChain);
  Hello same_role = base.validator.hello();  // a validator talking to a validator
  EXPECT_EQ(refused(same_role), GoodbyeReason::kAuthFailed);
  Hello set = h;
  set.validator_set_hash = filled(0x41);
  EXPECT_EQ(refused(set), GoodbyeReason::kNotInSubset);
  Hello epoch = h;
  epoch.subset_epoch = Epoch{1};
  EXPECT_EQ(refused(epoch), GoodbyeReason::kNotInSubset);

  Ends subset(filled(0x80), filled(0x80));
  subset.validator_admission.refuse = GoodbyeReason::kNotInSubset;  // e.g. this validator is not in Sub(R)
  EXPECT_EQ(subset.validator.on_frame(subset.runner.hello()).refuse, GoodbyeReason::kNotInSubset);
}

TEST(Cip11Handshake, OutOfOrderFramesAndForgedProofsAreRefused) {
  {
    Ends e(filled(0x80), filled(0x80));
    HelloAck early = only_ack(e.runner.on_frame(e.validator.hello()));
    Ends other(filled(0x80), filled(0x80));
    EXPECT_EQ(other.validator.on_frame(early).refuse, GoodbyeReason::kProtocolError);  // HelloAck before Hello
  }
  {
    Ends e(filled(0x80), filled(0x80));
    nothing(e.validator.on_frame(e.runner.hello()));
    EXPECT_EQ(e.validator.on_frame(e.runner.hello()).refuse, GoodbyeReason::kProtocolError);  // a second Hello
    EXPECT_EQ(e.validator.on_frame(e.runner.hello()).refuse, GoodbyeReason::kProtocolError);  // and final
  }
  {
    Ends e(filled(0x80), filled(0x80));
    EXPECT_EQ(e.validator.on_frame(testing::heartbeat_ping()).refuse, GoodbyeReason::kProtocolError);  // before admission
  }
  {
    Ends e(filled(0x80), filled(0x80));
    nothing(e.validator.on_frame(e.runner.hello()));
    HelloAck forged = only_ack(e.runner.on_frame(e.validator.hello()));
    forged.signed_challenge.bytes[10] ^= 1;
    EXPECT_EQ(e.validator.on_frame(forged).refuse, GoodbyeReason::kAuthFailed);
    EXPECT_FALSE(e.validator.admitted());
  }
  {
    // A valid proof from another runner key than the Hello named.
    Ends e(filled(0x80), filled(0x80));
    nothing(e.validator.on_frame(e.runner.hello()));
    HelloAck ack = only_ack(e.runner.on_frame(e.validator.hello()));
    crypto::Secp256k1Secret other_secret;
    other_secret.fill(0x33);
    ack.party_pubkey = Signer::runner(other_secret)->pubkey();
    EXPECT_EQ(e.validator.on_frame(ack).refuse, GoodbyeReason::kAuthFailed);
  }
}

}  // namespace
}  // namespace cowboy::cip11
