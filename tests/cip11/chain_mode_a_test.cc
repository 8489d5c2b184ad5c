// Mode A (§8.3-§8.4, §16(2)): SubmitPresenceCertificate's refusals one by one,
// its exact cycle charges, the descending-height rule, the K_HARD_MIN guard
// and the cross-epoch replay properties.
#include <gtest/gtest.h>

#include "chain_harness.h"
#include "cip11/subset.h"

namespace cowboy::cip11::chain {
namespace {

using testing::Chain;
using testing::key;
using testing::Key;
using testing::keys;
using testing::state_bytes;

constexpr std::uint64_t kChainId = 7;
constexpr std::uint64_t kBase = kPresenceCertBaseCycles;
constexpr std::uint64_t kPre = kPresenceReceiptPrecheckCycles;
constexpr std::uint64_t kVerify = kPresenceReceiptVerifyCycles;
constexpr std::uint64_t kPlenty = 10'000'000;

Signer validator_signer(std::uint8_t n) {
  crypto::Ed25519Seed seed;
  seed.fill(n);
  return Signer::validator(seed);
}

crypto::Ed25519Public raw(const Signer& s) {
  crypto::Ed25519Public out;
  std::copy(s.pubkey().raw().begin(), s.pubkey().raw().end(), out.begin());
  return out;
}

/// A chain with Mode A's certificates on (the flag), `n` validators in
/// ValidatorSetSnapshot(0), and one registered runner.
struct World {
  Chain c;
  std::vector<Signer> validators;
  std::vector<crypto::Ed25519Public> peers;
  Key runner = key(201);

  explicit World(std::size_t n = 4, std::uint32_t t_hard = 2) {
    c.params.chain_id = kChainId;
    c.params.presence_hard_exclude_enabled = true;
    c.params.t_hard = t_hard;
    for (std::size_t i = 0; i < n; ++i) {
      validators.push_back(validator_signer(static_cast<std::uint8_t>(0x30 + i)));
      peers.push_back(raw(validators.back()));
    }
    c.validators = ValidatorSnapshots::genesis(peers);
    c.fund(runner);
    c.ok(runner.address, testing::registration(runner, 1'000, 64));
    for (int i = 0; i < 40; ++i) c.begin();  // room below the head for receipt heights
  }
  /// Indices of the validators in Sub(runner), and of those outside it.
  std::vector<std::size_t> inside() const { return subset_of(runner.pub, peers, c.params.subset); }
  std::size_t outside() const {
    auto in = inside();
    for (std::size_t i = 0; i < peers.size(); ++i)
      if (std::find(in.begin(), in.end(), i) == in.end()) return i;
    ADD_FAILURE() << "every validator is in the subset";
    return 0;
  }
  PresenceReceipt unsigned_receipt(std::size_t v, Height height, const Key* for_runner = nullptr) const {
    const Key& r = for_runner ? *for_runner : runner;
    return PresenceReceipt{validators.at(v).pubkey(), PubKey::runner(r.pub), Epoch{0}, validator_set_hash(peers),
                           height, 1, true, {}};
  }
  Bytes receipt(std::size_t v, Height height) const {
    return encode_receipt(sign_receipt(validators.at(v), kChainId, unsigned_receipt(v, height)));
  }
  SubmitPresenceCertificate cert(std::vector<Bytes> receipts, Height height = Height{0},
                                 std::uint64_t cycles = kPlenty) const {
    return SubmitPresenceCertificate{runner.address, height != Height{0} ? height : c.height, cycles, std::move(receipts)};
  }
  /// Applies in a new block; the report.
  CertificateReport submit(const SubmitPresenceCertificate& cert, const Address* sender = nullptr) {
    c.begin();
    auto out = c.tx(sender ? *sender : runner.address, cert);
    EXPECT_TRUE(out.certificate.has_value());
    EXPECT_EQ(out.error, out.certificate ? out.certificate->error : std::nullopt);
    return out.certificate.value_or(CertificateReport{});
  }
  const PresenceProof* proof() const { return c.state.presence.get(runner.address); }
};

TEST(Cip11ModeA, AValidCertificateSetsTheAnchorAndProvenUntilAndChargesExactly) {
  World w;
  const auto in = w.inside();
  ASSERT_EQ(in.size(), 3u);  // |V| = 4: k = min(4, clamp(3, 3, 8)) = 3
  const Height h = w.c.height + 1;  // the block the certificate goes into
  auto report = w.submit(w.cert({w.receipt(in[0], h - 3), w.receipt(in[1], h - 2)}, h - 1));
  ASSERT_FALSE(report.error) << chain_error_name(*report.error);
  EXPECT_EQ(report.cycles_used, kBase + 2 * kPre + 2 * kVerify);  // 32,000
  EXPECT_EQ(report.verdicts, (std::vector{ReceiptVerdict::kCounted, ReceiptVerdict::kCounted}));
  EXPECT_EQ(report.validators, 2u);
  EXPECT_EQ(report.anchor, h - 2);
  ASSERT_TRUE(w.proof());
  EXPECT_EQ(*w.proof(), (PresenceProof{h - 2, h - 2 + kPresenceProofTtlBlocks}));
  // Stored with the rest of the state, and read back the same.
  codec::Reader r(state_bytes(w.c.state));
  State back = get_state(r);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(back.presence.at(w.runner.address), *w.proof());
}

struct Refusal {
  std::string name;
  std::function<Bytes(const World&, Height)> bad;  // the second entry, given the certificate height
  ReceiptVerdict verdict;
  ChainError error;
  std::uint64_t cycles;
};

// Each per-receipt rule, one at a time: a valid receipt from one subset
// validator, then the broken one from another, with t_hard = 2. Each is
// refused with its own verdict, the charges stop where the rule says, and
// the state is byte-for-byte what it was.
TEST(Cip11ModeA, EachReceiptRefusalOneByOneLeavesTheStateUnchanged) {
  World w;
  const auto in = w.inside();
  const std::size_t out = w.outside();
  const Key other = key(202);
  const std::uint64_t below = kBase + 2 * kPre + kVerify;  // the good one verified, the bad one never reached Ed25519
  auto signed_by = [&](std::size_t v, PresenceReceipt r) { return encode_receipt(sign_receipt(w.validators[v], kChainId, r)); };
  std::vector<Refusal> cases{
      {"malformed", [](const World&, Height) { return Bytes{0xa8, 0x00}; }, ReceiptVerdict::kMalformed,
       ChainError::kBelowThreshold, below},
      {"wrong scheme tag",
       [&](const World& w, Height h) {
         Bytes b = w.receipt(in[1], h);
         b[4] = 0x01;  // validator_pubkey's tag says secp256k1; 32 key bytes do not fit it
         return b;
       },
       ReceiptVerdict::kWrongScheme, ChainError::kBelowThreshold, below},
      {"runner key mismatch",
       [&](const World& w, Height h) { return signed_by(in[1], w.unsigned_receipt(in[1], h, &other)); },
       ReceiptVerdict::kOtherRunner, ChainError::kRunnerKeyMismatch, kBase + 2 * kPre},
      {"accepting_new false",
       [&](const World& w, Height h) {
         auto r = w.unsigned_receipt(in[1], h);
         r.accepting_new = false;
         return signed_by(in[1], r);
       },
       ReceiptVerdict::kNotAccepting, ChainError::kBelowThreshold, below},
      {"future height", [&](const World& w, Height h) { return w.receipt(in[1], h + 1); },
       ReceiptVerdict::kFuture, ChainError::kBelowThreshold, below},
      {"stale height",
       [&](const World& w, Height h) { return w.receipt(in[1], h - kReceiptFreshnessBlocks - 1); },
       ReceiptVerdict::kStale, ChainError::kBelowThreshold, below},
      {"wrong epoch",
       [&](const World& w, Height h) {
         auto r = w.unsigned_receipt(in[1], h);
         r.subset_epoch = Epoch{1};
         return signed_by(in[1], r);
       },
       ReceiptVerdict::kUnknownEpoch, ChainError::kBelowThreshold, below},
      {"wrong validator_set_hash",
       [&](const World& w, Height h) {
         auto r = w.unsigned_receipt(in[1], h);
         r.validator_set_hash[0] ^= 1;
         return signed_by(in[1], r);
       },
       ReceiptVerdict::kUnknownEpoch, ChainError::kBelowThreshold, below},
      {"unknown validator",
       [&](const World& w, Height h) {
         const Signer stranger = validator_signer(0x99);
         auto r = w.unsigned_receipt(in[1], h);
         r.validator_pubkey = stranger.pubkey();
         return encode_receipt(sign_receipt(stranger, kChainId, r));
       },
       ReceiptVerdict::kUnknownValidator, ChainError::kBelowThreshold, below},
      {"validator outside the subset", [&](const World& w, Height h) { return w.receipt(out, h); },
       ReceiptVerdict::kOutsideSubset, ChainError::kBelowThreshold, below},
      {"bad signature",
       [&](const World& w, Height h) {
         auto r = sign_receipt(w.validators[in[1]], kChainId, w.unsigned_receipt(in[1], h));
         r.validator_signed[0] ^= 1;
         return encode_receipt(r);
       },
       ReceiptVerdict::kBadSignature, ChainError::kBelowThreshold, below + kVerify},
      {"signed for another chain",
       [&](const World& w, Height h) {
         return encode_receipt(sign_receipt(w.validators[in[1]], kChainId + 1, w.unsigned_receipt(in[1], h)));
       },
       ReceiptVerdict::kBadSignature, ChainError::kBelowThreshold, below + kVerify},
      {"duplicate validator key", [&](const World& w, Height h) { return w.receipt(in[0], h - 1); },
       ReceiptVerdict::kSuperseded, ChainError::kBelowThreshold, below},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.name);
    const Height h = w.c.height;  // the certificate's height: the block before the one it goes into
    const Bytes before = state_bytes(w.c.state);
    auto report = w.submit(w.cert({w.receipt(in[0], h), k.bad(w, h)}, h));
    EXPECT_EQ(report.error, k.error);
    ASSERT_EQ(report.verdicts.size(), 2u);
    EXPECT_EQ(report.verdicts[1], k.verdict) << receipt_verdict_name(report.verdicts[1]);
    EXPECT_EQ(report.cycles_used, k.cycles);
    EXPECT_EQ(state_bytes(w.c.state), before);
    EXPECT_FALSE(w.proof());
  }
  // The freshness window's edge is inclusive: 30 blocks old still counts.
  const Height h = w.c.height;
  auto report = w.submit(w.cert({w.receipt(in[0], h), w.receipt(in[1], h - kReceiptFreshnessBlocks)}, h));
  EXPECT_FALSE(report.error);
}

// What a certificate says of itself, checked after the base charge and before any receipt.
TEST(Cip11ModeA, EachCertificateRefusalLeavesTheStateUnchanged) {
  World w;
  const auto in = w.inside();
  auto good = [&](Height h) { return std::vector{w.receipt(in[0], h), w.receipt(in[1], h)}; };
  auto refused = [&](SubmitPresenceCertificate cert, ChainError error, std::uint64_t cycles,
                     const Address* sender = nullptr) {
    const Bytes before = state_bytes(w.c.state);
    auto report = w.submit(cert, sender);
    EXPECT_EQ(report.error, error) << (report.error ? chain_error_name(*report.error) : "accepted");
    EXPECT_EQ(report.cycles_used, cycles);
    EXPECT_EQ(state_bytes(w.c.state), before);
  };
  Height h = w.c.height;
  refused(w.cert(good(h), h, kBase - 1), ChainError::kOutOfCycles, 0);  // not even the base charge
  refused(w.cert(good(h), h, kBase + kPre - 1), ChainError::kOutOfCycles, kBase);
  refused(w.cert(good(h), h, kBase + 2 * kPre + kVerify - 1), ChainError::kOutOfCycles, kBase + 2 * kPre);
  // Above the block it goes into (submit begins block height + 1).
  refused(w.cert(good(h), w.c.height + 2), ChainError::kCertificateFromTheFuture, kBase);
  const Key stranger = key(203);
  refused(w.cert(good(h), h), ChainError::kRunnerNotSender, kBase, &stranger.address);
  auto unknown = w.cert(good(h), h);
  unknown.runner = stranger.address;
  refused(unknown, ChainError::kUnknownRunner, kBase, &stranger.address);
  w.c.params.presence_hard_exclude_enabled = false;
  refused(w.cert(good(h), h), ChainError::kModeADisabled, kBase);
  w.c.params.presence_hard_exclude_enabled = true;
  // One receipt alone is below t_hard = 2.
  h = w.c.height;
  refused(w.cert({w.receipt(in[0], h)}, h), ChainError::kBelowThreshold, kBase + kPre + kVerify);
  refused(w.cert({}, h), ChainError::kBelowThreshold, kBase);
  // The decoder bounds: more entries than kMaxCertificateReceipts, or a longer entry than any receipt.
  w.c.begin();
  auto many = w.cert(std::vector<Bytes>(kMaxCertificateReceipts + 1, Bytes{0}), h);
  EXPECT_EQ(w.c.tx(w.runner.address, many).error, ChainError::kMalformedInstruction);
  auto long_entry = w.cert({Bytes(kMaxReceiptBytes + 1, 0)}, h);
  EXPECT_EQ(w.c.tx(w.runner.address, long_entry).error, ChainError::kMalformedInstruction);
  EXPECT_FALSE(w.proof());
}

// §8.3 step 3: a charge is taken before each verification, success or
// failure, and no verification is attempted without the cycles for it.
TEST(Cip11ModeA, OutOfCyclesBeforeAVerifyRefusesWithTheChargesTakenSoFar) {
  World w;
  const auto in = w.inside();
  const Height h = w.c.height;
  auto cert = w.cert({w.receipt(in[0], h), w.receipt(in[1], h), w.receipt(in[2], h)}, h);
  cert.cycle_limit = kBase + 3 * kPre + 2 * kVerify + kVerify - 1;  // two verifies paid, the third not
  auto report = w.submit(cert);
  EXPECT_EQ(report.error, ChainError::kOutOfCycles);
  EXPECT_EQ(report.cycles_used, kBase + 3 * kPre + 2 * kVerify);
  EXPECT_FALSE(w.proof());
  cert.cycle_limit += 1;  // exactly enough
  report = w.submit(cert);
  EXPECT_FALSE(report.error);
  EXPECT_EQ(report.cycles_used, cert.cycle_limit);
  EXPECT_EQ(report.validators, 3u);
}

// §8.3 step 4: per validator, candidates in descending block_height until one
// verifies. A forged higher receipt costs its submitter a verification and
// suppresses nothing; a lower valid receipt under a higher valid one is never verified.
TEST(Cip11ModeA, AForgedHigherReceiptDoesNotSuppressALowerValidOne) {
  World w;
  const auto in = w.inside();
  const Height h = w.c.height;
  auto forged = sign_receipt(w.validators[in[0]], kChainId, w.unsigned_receipt(in[0], h));
  forged.validator_signed[5] ^= 0x40;
  auto report = w.submit(w.cert({encode_receipt(forged), w.receipt(in[0], h - 4), w.receipt(in[1], h - 6)}, h));
  ASSERT_FALSE(report.error) << chain_error_name(*report.error);
  EXPECT_EQ(report.verdicts, (std::vector{ReceiptVerdict::kBadSignature, ReceiptVerdict::kCounted,
                                          ReceiptVerdict::kCounted}));
  EXPECT_EQ(report.cycles_used, kBase + 3 * kPre + 3 * kVerify);
  EXPECT_EQ(report.anchor, h - 4);  // the forged height never counts
  EXPECT_EQ(w.proof()->anchor, h - 4);

  // Two valid receipts of one validator: only the higher is verified, and it is the anchor.
  const Height h2 = w.c.height;
  report = w.submit(w.cert({w.receipt(in[0], h2 - 1), w.receipt(in[0], h2), w.receipt(in[1], h2 - 2)}, h2));
  ASSERT_FALSE(report.error);
  EXPECT_EQ(report.verdicts, (std::vector{ReceiptVerdict::kSuperseded, ReceiptVerdict::kCounted,
                                          ReceiptVerdict::kCounted}));
  EXPECT_EQ(report.cycles_used, kBase + 3 * kPre + 2 * kVerify);
  EXPECT_EQ(report.validators, 2u);  // distinct raw keys, not receipts
  EXPECT_EQ(w.proof()->anchor, h2);
}

// §16(2): the anchor only moves up, and presence_proven_until follows the
// newest genuine observation, never the submission: receipts at or below the
// anchor, resubmitted in any later block, change nothing.
TEST(Cip11ModeA, ReplayedOrOlderReceiptsNeverExtendPresenceProvenUntil) {
  World w;
  const auto in = w.inside();
  const Height h = w.c.height;
  const auto first = w.cert({w.receipt(in[0], h - 1), w.receipt(in[1], h)}, h);
  ASSERT_FALSE(w.submit(first).error);
  const PresenceProof proven = *w.proof();
  EXPECT_EQ(proven.proven_until, h + kPresenceProofTtlBlocks);
  for (std::uint64_t older = 0; older <= 3; ++older) {
    // The same bytes again, and a certificate whose newest receipt is `older` below the anchor.
    for (const auto& cert : {first, w.cert({w.receipt(in[0], h - older), w.receipt(in[2], h - older)}, h)}) {
      const Bytes before = state_bytes(w.c.state);
      auto report = w.submit(cert);
      EXPECT_EQ(report.error, ChainError::kNotStrictlyNewer);
      EXPECT_EQ(state_bytes(w.c.state), before);
      EXPECT_EQ(*w.proof(), proven);
    }
  }
  // Past the freshness window the old receipts cannot even be counted against a new height.
  while (w.c.height < h + kReceiptFreshnessBlocks + 1) w.c.begin();
  auto report = w.submit(w.cert({w.receipt(in[0], h), w.receipt(in[1], h)}, w.c.height));
  EXPECT_EQ(report.error, ChainError::kBelowThreshold);
  EXPECT_EQ(report.verdicts, (std::vector{ReceiptVerdict::kStale, ReceiptVerdict::kStale}));
  // A strictly newer observation moves it on by exactly the difference.
  const Height now = w.c.height;
  ASSERT_FALSE(w.submit(w.cert({w.receipt(in[0], now), w.receipt(in[2], now - 1)}, now)).error);
  EXPECT_EQ(*w.proof(), (PresenceProof{now, now + kPresenceProofTtlBlocks}));
}

// A sequence of certificates with anchors in an arbitrary order: each is
// accepted exactly when its anchor is above every earlier accepted one.
TEST(Cip11ModeA, TheAnchorIsStrictlyMonotonic) {
  World w;
  const auto in = w.inside();
  while (w.c.height < Height{100}) w.c.begin();
  std::optional<Height> best;
  std::uint64_t x = 12345;
  for (int i = 0; i < 24; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // a fixed LCG: no machine randomness
    const Height cert_height = w.c.height;
    const Height anchor = cert_height - (x >> 33) % 20;
    auto report = w.submit(w.cert({w.receipt(in[0], anchor), w.receipt(in[1], anchor - 1)}, cert_height));
    const bool newer = !best || anchor > *best;
    EXPECT_EQ(!report.error, newer) << "anchor " << anchor.value;
    if (newer) best = anchor;
    EXPECT_EQ(*w.proof(), (PresenceProof{*best, *best + kPresenceProofTtlBlocks}));
  }
}

// §5.3 and §16(2): a receipt counts only for the active snapshot, or its
// predecessor until activation_height + OVERLAP_BLOCKS, and only with both
// its epoch and its hash naming the same snapshot. The preimage binds both:
// a receipt relabelled to the other epoch fails its signature.
TEST(Cip11ModeA, EpochPairedReceiptsAcrossTheOverlapBoundary) {
  // Epoch 0: validators 0..3; epoch 1 (from height 50): validators 2..5.
  std::vector<Signer> vs;
  std::vector<crypto::Ed25519Public> all;
  for (std::uint8_t i = 0; i < 6; ++i) {
    vs.push_back(validator_signer(static_cast<std::uint8_t>(0x50 + i)));
    all.push_back(raw(vs.back()));
  }
  const std::vector<crypto::Ed25519Public> e0(all.begin(), all.begin() + 4), e1(all.begin() + 2, all.end());
  ValidatorSnapshots snapshots = ValidatorSnapshots::genesis(e0);
  constexpr Height kActivation{50};
  snapshots.add(Epoch{1}, kActivation, e1);
  ChainParams params;
  params.chain_id = kChainId;
  params.presence_hard_exclude_enabled = true;
  params.t_hard = 1;
  params.subset = SubsetParams{4, 8};  // k = |V| = 4: everyone is in every runner's subset
  const Key runner = key(204);
  State base;
  base.runners[runner.address] = runner_record(testing::registration(runner), runner.address, Height{0});
  base.index.register_runner(runner.address);
  base.commit();

  auto receipt = [&](std::size_t v, Epoch epoch, const std::vector<crypto::Ed25519Public>& set,
                     Height height) {
    return sign_receipt(vs[v], kChainId,
                        PresenceReceipt{vs[v].pubkey(), PubKey::runner(runner.pub), epoch, validator_set_hash(set),
                                        height, 1, true, {}});
  };
  // The verdict of one receipt, certified in block `height` at that height.
  auto verdict = [&](const PresenceReceipt& r, Height height) {
    State s = base;
    auto report = submit_certificate(s, params, snapshots, height, runner.address,
                                     SubmitPresenceCertificate{runner.address, height, kPlenty, {encode_receipt(r)}});
    EXPECT_EQ(report.verdicts.size(), 1u);
    EXPECT_EQ(!report.error, report.verdicts.at(0) == ReceiptVerdict::kCounted);
    return report.verdicts.at(0);
  };
  const Height cutoff = kActivation + kOverlapBlocks;
  // Epoch 0 (validator 0, only in epoch 0): counted before and through the window, not from the cutoff on.
  for (Height h : {kActivation - 1, kActivation, cutoff - 1})
    EXPECT_EQ(verdict(receipt(0, Epoch{0}, e0, h), h), ReceiptVerdict::kCounted) << h.value;
  EXPECT_EQ(verdict(receipt(0, Epoch{0}, e0, cutoff), cutoff), ReceiptVerdict::kUnknownEpoch);
  // Epoch 1 (validator 5, only in epoch 1): nothing before its activation, counted from it on.
  EXPECT_EQ(verdict(receipt(5, Epoch{1}, e1, kActivation - 1), kActivation - 1), ReceiptVerdict::kUnknownEpoch);
  for (Height h : {kActivation, cutoff - 1, cutoff, cutoff + 1000})
    EXPECT_EQ(verdict(receipt(5, Epoch{1}, e1, h), h), ReceiptVerdict::kCounted) << h.value;
  // Never one epoch's number with the other's hash, inside the window or out.
  for (Height h : {kActivation - 1, kActivation + 10, cutoff}) {
    EXPECT_EQ(verdict(receipt(2, Epoch{0}, e1, h), h), ReceiptVerdict::kUnknownEpoch) << h.value;
    EXPECT_EQ(verdict(receipt(2, Epoch{1}, e0, h), h), ReceiptVerdict::kUnknownEpoch) << h.value;
  }
  // Membership resolves in the snapshot the pair names: validator 5 under epoch 0, 0 under epoch 1.
  EXPECT_EQ(verdict(receipt(5, Epoch{0}, e0, kActivation + 10), kActivation + 10), ReceiptVerdict::kUnknownValidator);
  EXPECT_EQ(verdict(receipt(0, Epoch{1}, e1, kActivation + 10), kActivation + 10), ReceiptVerdict::kUnknownValidator);
  // Validator 2 is in both: its epoch-0 receipt relabelled as epoch 1 passes every precheck and fails Ed25519.
  const Height h = kActivation + 10;
  PresenceReceipt relabelled = receipt(2, Epoch{0}, e0, h);
  relabelled.subset_epoch = Epoch{1};
  relabelled.validator_set_hash = validator_set_hash(e1);
  EXPECT_EQ(verdict(relabelled, h), ReceiptVerdict::kBadSignature);
  // Its receipts under both epochs count once toward t_hard: one raw key.
  State s = base;
  params.t_hard = 2;
  auto report = submit_certificate(
      s, params, snapshots, h, runner.address,
      SubmitPresenceCertificate{runner.address, h, kPlenty,
                                {encode_receipt(receipt(2, Epoch{0}, e0, h)), encode_receipt(receipt(2, Epoch{1}, e1, h - 1))}});
  EXPECT_EQ(report.error, ChainError::kBelowThreshold);
  EXPECT_EQ(report.validators, 1u);
  EXPECT_EQ(report.verdicts, (std::vector{ReceiptVerdict::kCounted, ReceiptVerdict::kSuperseded}));
}

// §8.4: with the flag, K_HARD_MIN and an honest-majority t_hard, presence is a
// gate: a floor-eligible runner without a live certificate is not drawn, and
// one whose presence_proven_until has passed drops out. One short of the guard
// the same certificates are accepted and presence only orders.
TEST(Cip11ModeA, AboveTheGuardAbsenceExcludesAndBelowItPresenceOnlyOrders) {
  for (const bool effective : {true, false}) {
    SCOPED_TRACE(effective ? "Mode A effective" : "one short of t_hard's majority");
    World w(20, effective ? 11 : 10);  // |V| = 20 = k with MIN_SUBSET 20: floor(20/2)+1 = 11
    w.c.params.subset = SubsetParams{20, 20};
    w.c.params.present_first_enabled = true;
    ASSERT_EQ(mode_a_effective(w.c.params, w.c.validators, w.c.height), effective);
    const Key absent = key(205);
    w.c.fund(absent);
    w.c.ok(absent.address, testing::registration(absent, 1'000, 64));
    const Height h = w.c.height;
    std::vector<Bytes> receipts;
    for (std::size_t v = 0; v < 11; ++v) receipts.push_back(w.receipt(v, h));
    auto report = w.submit(w.cert(receipts, h));
    ASSERT_FALSE(report.error) << chain_error_name(*report.error);  // accepted either way
    std::set<Address> drawn;
    for (int i = 0; i < 16; ++i) {
      auto out = w.c.ok(absent.address, testing::job(1, 30));
      for (const Address& r : w.c.committee_of(*out.job_id)) drawn.insert(r);
    }
    if (effective) {
      EXPECT_EQ(drawn, (std::set<Address>{w.runner.address}));
    } else {
      EXPECT_TRUE(drawn.contains(absent.address)) << "below the guard absence must not exclude";
    }
    // Once presence_proven_until has passed, an effective Mode A draws no one.
    while (w.c.height <= w.proof()->proven_until) w.c.begin();
    auto out = w.c.ok(absent.address, testing::job(1, 30));
    EXPECT_EQ(w.c.committee_of(*out.job_id).empty(), effective);
  }
}

// The read point: PresenceInput(H) = { r | presence_proven_until[r] >= H },
// from the state before block H's transactions, indexed against registry(H-1).
TEST(Cip11ModeA, ProvenPresenceIsTheParentStatesReadPoint) {
  State s;
  const auto ks = keys(210, 3);
  for (const auto& k : ks) {
    s.runners[k.address] = runner_record(testing::registration(k), k.address, Height{0});
    s.index.register_runner(k.address);
  }
  s.presence[ks[0].address] = PresenceProof{Height{40}, Height{100}};
  s.presence[ks[2].address] = PresenceProof{Height{45}, Height{105}};
  EXPECT_EQ(proven_presence(s, Height{100}, 3).indices(), (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(proven_presence(s, Height{101}, 3).indices(), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(proven_presence(s, Height{106}, 3).indices(), (std::vector<std::uint32_t>{}));
  EXPECT_EQ(proven_presence(s, Height{100}, 2).indices(), (std::vector<std::uint32_t>{0}));  // index 2 not in registry(H-1)
}

}  // namespace
}  // namespace cowboy::cip11::chain
