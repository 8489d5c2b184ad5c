// §3.3 and §12.6: scheme-tagged keys, role-scheme signatures and every
// preimage. Each signed preimage round-trips, and changing any one signed
// field (or the signer) makes verification fail.
#include <gtest/gtest.h>

#include "../support/high_s.h"

#include <functional>

#include "cip11/cbor.h"
#include "common/codec.h"
#include "samples.h"

namespace cowboy::cip11 {
namespace {

using testing::filled;
using testing::party;

Bytes be(std::uint64_t v, int n) {
  Bytes out;
  for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return out;
}

TEST(Cip11Identity, WireKeysCarryTheirSchemeTag) {
  const auto& p = party();
  EXPECT_EQ(p.runner.pubkey().wire().size(), 34u);
  EXPECT_EQ(p.runner.pubkey().wire()[0], 0x01);
  EXPECT_EQ(p.validator.pubkey().wire().size(), 33u);
  EXPECT_EQ(p.validator.pubkey().wire()[0], 0x02);
  crypto::Ed25519Seed seed;
  seed.fill(0x22);
  const auto raw = crypto::ed25519_from_seed(seed).public_key;
  EXPECT_TRUE(std::equal(raw.begin(), raw.end(), p.validator.pubkey().raw().begin()));  // tag-stripped == raw
  EXPECT_TRUE(PubKey::parse(p.runner.pubkey().wire()).ok());
  EXPECT_EQ(PubKey::parse({}).error(), Errc::kBadKeyLength);
  EXPECT_EQ(check_role(p.runner.pubkey(), Role::kValidator).error(), Errc::kRoleSchemeMismatch);
  EXPECT_EQ(runner_address(p.validator.pubkey()).error(), Errc::kRoleSchemeMismatch);
}

TEST(Cip11Identity, RunnerAuthorityIsTheDerivedEvmAddress) {
  // The well-known key 0x4c08... has address 0x2c7536e3605d9c16a7a3d7b1898e529396a65c23.
  auto secret = fixed_from_hex<32>("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");
  auto signer = Signer::runner(*secret);
  ASSERT_TRUE(signer.ok());
  auto address = runner_address(signer->pubkey());
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(to_hex(*address), "2c7536e3605d9c16a7a3d7b1898e529396a65c23");
  crypto::Secp256k1Secret zero{};
  EXPECT_EQ(Signer::runner(zero).error(), Errc::kInvalidKey);
}

TEST(Cip11Identity, ConnectionIdHashesTheBindingInOrder) {
  const auto& p = party();
  const Bytes expected = concat({as_bytes("cowboy-cip11-connection-v1"), be(7, 8), be(0x0100, 2),
                                 p.runner.pubkey().wire(), p.validator.pubkey().wire(), filled(0x40), be(0, 8),
                                 filled(0x80)});
  EXPECT_EQ(p.connection, crypto::keccak256(expected));
  ConnectionBinding other = p.binding;
  other.channel_binding[0] ^= 1;  // another TLS channel: another connection_id
  EXPECT_NE(connection_id(other), p.connection);
}

TEST(Cip11Identity, HelloAckPreimageLayout) {
  const auto& p = party();
  auto pre = hello_ack_preimage(7, 0x0100, Role::kValidator, p.validator.pubkey(), Role::kRunner, p.runner.pubkey(),
                                filled(0x40), Epoch{0}, filled(0x60), filled(0x80));
  const Bytes expected = concat({as_bytes("cowboy-cip11-hello-ack-v1"), Bytes{0x02, 0x02}, be(7, 8), be(0x0100, 2),
                                 Bytes{0x02}, p.validator.pubkey().wire(), Bytes{0x01}, p.runner.pubkey().wire(),
                                 filled(0x40), be(0, 8), filled(0x60), filled(0x80)});
  EXPECT_EQ(to_hex(pre.bytes()), to_hex(expected));
  // Block heights are advisory and not signed: the sample HelloAck verifies whatever its height.
  HelloAck ack = testing::hello_ack();
  EXPECT_TRUE(verify(pre, ack.party_pubkey, ack.signed_challenge.bytes).ok());
}

TEST(Cip11Identity, JobAckPreimageCollapsesItsOptionals) {
  const auto& p = party();
  JobAck ack = testing::job_ack(AckStatus::accepted(), std::nullopt);
  const Bytes bytes = job_ack_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), ack).bytes();
  const Bytes32 empty_text = crypto::keccak256(Bytes{0x60});  // "" in deterministic CBOR
  Bytes tail{0x00, 0xff};                                      // Accepted, reason byte not applicable
  tail.insert(tail.end(), empty_text.begin(), empty_text.end());
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), bytes.end() - 34));

  JobAck with_empty = ack;
  with_empty.reason = "";
  EXPECT_EQ(job_ack_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), with_empty).bytes(), bytes);
  JobAck rejected = testing::job_ack(AckStatus::reject(RejectReason::kAtCapacity), std::nullopt);
  const Bytes r = job_ack_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), rejected).bytes();
  EXPECT_EQ(r[r.size() - 34], 0x02);
  EXPECT_EQ(r[r.size() - 33], 0x00);  // AtCapacity
}

TEST(Cip11Identity, GoodbyePreimageTreatsNoRetryAsZero) {
  const auto& p = party();
  Goodbye none{GoodbyeReason::kDraining, std::nullopt, std::nullopt, std::nullopt};
  Goodbye zero{GoodbyeReason::kDraining, std::string(""), std::uint64_t{0}, std::nullopt};
  Goodbye one{GoodbyeReason::kDraining, std::nullopt, std::uint64_t{1}, std::nullopt};
  auto bytes = [&](const Goodbye& g) {
    return goodbye_preimage(p.connection, Role::kRunner, p.runner.pubkey(), p.validator.pubkey(), g).bytes();
  };
  EXPECT_EQ(bytes(none), bytes(zero));
  EXPECT_NE(bytes(none), bytes(one));
}

TEST(Cip11Identity, JobSpecHashAndAssignmentHash) {
  JobAssignment a = testing::job_assignment();
  EXPECT_EQ(a.job_spec_hash,
            crypto::keccak256(concat({as_bytes("cowboy/jobspec-hash/v1"), Bytes{0x01}, a.job_spec})));
  const Bytes expected = concat({as_bytes("cowboy-cip11-job-assignment-v1"), Bytes{0x02, 0x02}, be(7, 8), a.job_id.value,
                                 a.job_spec_hash, be(1004, 8), be(1104, 8), a.runner_pubkey.wire(),
                                 a.validator_pubkey.wire()});
  EXPECT_EQ(a.assignment_hash, crypto::keccak256(expected));
}

TEST(Cip11Identity, ControlDomainSeparatesItsTwoFramesAndOmitsTheSignature) {
  BackpressureSignal b = testing::backpressure_signal();
  auto body = cbor::decode(canonical_frame_body(b));
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->items.size(), 2u * 5);  // five fields, no `signed`
  BackpressureSignal resigned = b;
  resigned.signed_.fill(0);
  EXPECT_EQ(canonical_frame_body(resigned), canonical_frame_body(b));  // the signature is not in its own preimage

  const auto& p = party();
  const Bytes pre = control_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), b).bytes();
  const std::size_t type_at = std::string_view("cowboy-cip11-control-v1").size() + 2 + 32 + 34 + 33;
  EXPECT_EQ(pre[type_at], 0x12);
  const Bytes pre2 =
      control_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), testing::capability_delta()).bytes();
  EXPECT_EQ(pre2[type_at], 0x13);
}

TEST(Cip11Identity, HighSSignatureIsRefused) {
  const auto& p = party();
  HeartbeatPing ping = testing::heartbeat_ping();
  auto pre = heartbeat_ping_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), ping);
  ASSERT_TRUE(verify(pre, p.runner.pubkey(), ping.signed_).ok());
  Bytes sig(ping.signed_.begin(), ping.signed_.end());
  ASSERT_EQ(sig.size(), 65u);
  cowboy::testing::make_high_s_twin(std::span<std::uint8_t, 65>(sig.data(), 65));
  EXPECT_EQ(verify(pre, p.runner.pubkey(), sig).error(), Errc::kBadSignature);
}

// A signed preimage, a way to rebuild it, and the field changes that must break it.
struct SignedCase {
  std::string name;
  std::function<Preimage(int tamper)> preimage;  // tamper 0 = as signed; 1..fields = change field k
  int fields;
  Bytes signature;
  PubKey signer;
};

std::vector<SignedCase> signed_cases() {
  const auto& p = party();
  const PubKey& R = p.runner.pubkey();
  const PubKey& V = p.validator.pubkey();
  const PubKey other_runner = (*Signer::runner(crypto::Secp256k1Secret{[] {
                                  crypto::Secp256k1Secret s;
                                  s.fill(0x33);
                                  return s;
                                }()})).pubkey();
  const PubKey other_validator = Signer::validator([] {
                                   crypto::Ed25519Seed s;
                                   s.fill(0x44);
                                   return s;
                                 }()).pubkey();
  auto flip = [](Bytes32 b) { return b[5] ^= 0x01, b; };
  std::vector<SignedCase> out;

  HelloAck ack = testing::hello_ack();
  out.push_back({"HelloAck",
                 [=](int t) {
                   return hello_ack_preimage(t == 1 ? 8 : 7, t == 2 ? 0x0101 : 0x0100, Role::kValidator,
                                             t == 3 ? other_validator : V, Role::kRunner, t == 4 ? other_runner : R,
                                             t == 5 ? flip(filled(0x40)) : filled(0x40), Epoch{t == 6 ? 1u : 0u},
                                             t == 7 ? flip(filled(0x60)) : filled(0x60),
                                             t == 8 ? flip(filled(0x80)) : filled(0x80));
                 },
                 8, ack.signed_challenge.bytes, V});

  HeartbeatPing ping = testing::heartbeat_ping();
  out.push_back({"HeartbeatPing",
                 [=](int t) {
                   HeartbeatPing f = ping;
                   if (t == 4) ++f.block_height;
                   if (t == 5) f.nonce++;
                   return heartbeat_ping_preimage(t == 1 ? flip(p.connection) : p.connection, t == 2 ? other_runner : R,
                                                  t == 3 ? other_validator : V, f);
                 },
                 5, Bytes(ping.signed_.begin(), ping.signed_.end()), R});

  HeartbeatPong pong = testing::heartbeat_pong();
  out.push_back({"HeartbeatPong",
                 [=](int t) {
                   HeartbeatPong f = pong;
                   if (t == 4) ++f.block_height;
                   if (t == 5) f.nonce_echo++;
                   if (t == 6) f.accepting_new = !f.accepting_new;
                   return heartbeat_pong_preimage(t == 1 ? flip(p.connection) : p.connection,
                                                  t == 2 ? other_validator : V, t == 3 ? other_runner : R, f);
                 },
                 6, Bytes(pong.validator_signed.begin(), pong.validator_signed.end()), V});

  PresenceReceipt receipt{V, R, Epoch{0}, filled(0x40), Height{1005}, 3, true, {}};
  const Bytes receipt_sig = Signer::validator([] {
                              crypto::Ed25519Seed s;
                              s.fill(0x22);
                              return s;
                            }()).sign(presence_receipt_preimage(7, receipt));
  out.push_back({"PresenceReceipt",
                 [=](int t) {
                   PresenceReceipt r = receipt;
                   if (t == 2) r.validator_pubkey = other_validator;
                   if (t == 3) r.runner_pubkey = other_runner;
                   if (t == 4) ++r.subset_epoch;
                   if (t == 5) r.validator_set_hash = flip(r.validator_set_hash);
                   if (t == 6) ++r.block_height;
                   if (t == 7) r.nonce_echo++;
                   if (t == 8) r.accepting_new = false;
                   return presence_receipt_preimage(t == 1 ? 8 : 7, r);
                 },
                 8, receipt_sig, V});

  BackpressureSignal bp = testing::backpressure_signal();
  out.push_back({"BackpressureSignal",
                 [=](int t) {
                   BackpressureSignal f = bp;
                   if (t == 4) ++f.block_height;
                   if (t == 5) f.active_jobs++;
                   if (t == 6) f.max_concurrent++;
                   if (t == 7) f.accepting_new = !f.accepting_new;
                   if (t == 8) f.reason = "at capacity!";
                   if (t == 9) f.reason.reset();
                   return control_preimage(t == 1 ? flip(p.connection) : p.connection, t == 2 ? other_runner : R,
                                           t == 3 ? other_validator : V, f);
                 },
                 9, Bytes(bp.signed_.begin(), bp.signed_.end()), R});

  CapabilityDelta cd = testing::capability_delta();
  out.push_back({"CapabilityDelta",
                 [=](int t) {
                   CapabilityDelta f = cd;
                   if (t == 1) ++f.block_height;
                   if (t == 2) f.added_capabilities.push_back("gpu");
                   if (t == 3) f.removed_capabilities.clear();
                   if (t == 4) f.added_entitlements[0] = flip(f.added_entitlements[0]);
                   if (t == 5) f.removed_entitlements.push_back(filled(0));
                   if (t == 6) std::swap(f.added_capabilities, f.removed_capabilities);
                   return control_preimage(p.connection, R, V, f);
                 },
                 6, Bytes(cd.signed_.begin(), cd.signed_.end()), R});

  JobAssignment a = testing::job_assignment();
  out.push_back({"JobAssignment",
                 [=](int t) {
                   return job_assignment_preimage(t == 1 ? 8 : 7, t == 2 ? JobId{flip(a.job_id.value)} : a.job_id,
                                                  t == 3 ? job_spec_hash(Bytes{1}) : a.job_spec_hash,
                                                  a.assignment_height + (t == 4), a.deadline_block + (t == 5),
                                                  t == 6 ? other_runner : R, t == 7 ? other_validator : V);
                 },
                 7, Bytes(a.validator_signed.begin(), a.validator_signed.end()), V});

  JobAck ack_r = testing::job_ack(AckStatus::reject(RejectReason::kUnverifiableAssignment), std::string("why"));
  out.push_back({"JobAck",
                 [=](int t) {
                   JobAck f = ack_r;
                   if (t == 4) f.job_id = JobId{flip(f.job_id.value)};
                   if (t == 5) f.assignment_hash = flip(f.assignment_hash);
                   if (t == 6) f.status = AckStatus::reject(RejectReason::kOther);
                   if (t == 7) f.status = AckStatus::duplicate();
                   if (t == 8) f.reason = "why not";
                   if (t == 9) f.reason.reset();
                   return job_ack_preimage(t == 1 ? flip(p.connection) : p.connection, t == 2 ? other_runner : R,
                                           t == 3 ? other_validator : V, f);
                 },
                 9, Bytes(ack_r.signed_.begin(), ack_r.signed_.end()), R});

  JobCancel cancel = testing::job_cancel();
  out.push_back({"JobCancel",
                 [=](int t) {
                   JobCancel f = cancel;
                   if (t == 4) f.job_id = JobId{flip(f.job_id.value)};
                   if (t == 5) f.assignment_hash = flip(f.assignment_hash);
                   if (t == 6) f.reason = CancelReason::kFailed;
                   return job_cancel_preimage(t == 1 ? flip(p.connection) : p.connection, t == 2 ? other_validator : V,
                                              t == 3 ? other_runner : R, f);
                 },
                 6, Bytes(cancel.validator_signed.begin(), cancel.validator_signed.end()), V});

  Goodbye bye = testing::goodbye_signed();
  out.push_back({"Goodbye",
                 [=](int t) {
                   Goodbye f = bye;
                   if (t == 4) f.reason = GoodbyeReason::kDraining;
                   if (t == 5) f.retry_after_blocks = 11;
                   if (t == 6) f.detail = "bye";
                   return goodbye_preimage(t == 1 ? flip(p.connection) : p.connection, Role::kValidator,
                                           t == 2 ? other_validator : V, t == 3 ? other_runner : R, f);
                 },
                 6, bye.signed_->bytes, V});
  return out;
}

TEST(Cip11Signatures, EverySignedPreimageVerifiesAndEachFieldIsCovered) {
  for (const auto& c : signed_cases()) {
    ASSERT_TRUE(verify(c.preimage(0), c.signer, c.signature).ok()) << c.name;
    for (int t = 1; t <= c.fields; ++t) {
      auto r = verify(c.preimage(t), c.signer, c.signature);
      ASSERT_FALSE(r.ok()) << c.name << ": field " << t << " is not covered by the signature";
      EXPECT_TRUE(r.error() == Errc::kBadSignature || r.error() == Errc::kSignerMismatch) << c.name << " " << t;
    }
    // A flipped signature byte and the wrong signer fail too.
    Bytes bad = c.signature;
    bad[10] ^= 0x01;
    EXPECT_FALSE(verify(c.preimage(0), c.signer, bad).ok()) << c.name;
  }
}

TEST(Cip11Signatures, RoleSchemeAndLengthMustAgree) {
  const auto& p = party();
  HeartbeatPing ping = testing::heartbeat_ping();
  auto pre = heartbeat_ping_preimage(p.connection, p.runner.pubkey(), p.validator.pubkey(), ping);
  EXPECT_EQ(verify(pre, p.validator.pubkey(), ping.signed_).error(), Errc::kRoleSchemeMismatch);
  EXPECT_EQ(verify(pre, p.runner.pubkey(), ByteView(ping.signed_).first(64)).error(), Errc::kBadSignatureLength);
  Preimage as_validator = pre;
  as_validator.signer = Role::kValidator;  // the same fields claimed by the other role
  EXPECT_EQ(verify(as_validator, p.runner.pubkey(), ping.signed_).error(), Errc::kRoleSchemeMismatch);
  EXPECT_NE(as_validator.digest(), pre.digest());  // role and scheme are in the signed bytes

  // A runner signature under another runner's key: it verifies as someone else's.
  const Signer other = *Signer::runner([] {
    crypto::Secp256k1Secret s;
    s.fill(0x33);
    return s;
  }());
  EXPECT_EQ(verify(pre, other.pubkey(), ping.signed_).error(), Errc::kSignerMismatch);
}

}  // namespace
}  // namespace cowboy::cip11
