// Seed 003's evidence list: source and total caps, rotation, credits, invalid
// signatures, malformed lengths, expiration (age equal to the limit too),
// backward time, identity churn, and a signed weak work proof that passes
// preverification but is rejected downstream.
#include <gtest/gtest.h>

#include "admission/verification_queue.h"

namespace cowboy::admission {
namespace {

crypto::Ed25519Seed seed(std::uint8_t b) {
  crypto::Ed25519Seed s{};
  s[0] = b;
  return s;
}

ClaimFields claim_fields(std::uint64_t slot, std::uint8_t allocation = 1) {
  ClaimFields f;
  f.slot = slot;
  f.allocation_id[0] = allocation;
  f.issued_at = 100;
  f.expires_at = 10'000;
  f.subject_key[0] = 0x5b;
  f.descriptor_hash[0] = 0xde;
  return f;
}

SponsorFields sponsor_fields() {
  SponsorFields s;
  s.budget = 100;
  s.fee = 10;
  s.sponsor_expires_at = 10'000;
  return s;
}

Bytes claim(std::uint64_t slot = 7) { return make_claim(claim_fields(slot), seed(1)); }
Bytes sponsored(std::uint64_t slot = 7, std::uint8_t allocation = 1, std::uint8_t issuer = 1) {
  return make_sponsored_claim(claim_fields(slot, allocation), seed(issuer), sponsor_fields(), seed(2));
}

VerificationQueue make(QueueConfig c = {}) { return std::move(*VerificationQueue::create(c)); }

TEST(QueueConfig, EveryLimitIsValidatedBeforeConstruction) {
  EXPECT_FALSE(validate(QueueConfig{1, 1, 1, 1}));
  EXPECT_FALSE(validate(QueueConfig{64, 64, 1'024, 3'600}));
  EXPECT_EQ(validate(QueueConfig{0, 1, 1, 1}), ConfigError::kSources);
  EXPECT_EQ(validate(QueueConfig{65, 1, 1, 1}), ConfigError::kSources);
  EXPECT_EQ(validate(QueueConfig{1, 0, 1, 1}), ConfigError::kPerSource);
  EXPECT_EQ(validate(QueueConfig{1, 65, 1, 1}), ConfigError::kPerSource);
  EXPECT_EQ(validate(QueueConfig{1, 1, 0, 1}), ConfigError::kTotal);
  EXPECT_EQ(validate(QueueConfig{1, 1, 1'025, 1}), ConfigError::kTotal);
  EXPECT_EQ(validate(QueueConfig{1, 1, 1, 0}), ConfigError::kAge);
  EXPECT_EQ(validate(QueueConfig{1, 1, 1, 3'601}), ConfigError::kAge);
  EXPECT_EQ(VerificationQueue::create(QueueConfig{0, 1, 1, 1}).error(), ConfigError::kSources);
}

TEST(Queue, MalformedLengthsAndHeadersAreRefusedBeforeCopying) {
  auto q = make();
  for (std::size_t n : {0, 1, 209, 211, 441, 443, 883, 885, 4'096}) {
    EXPECT_EQ(q.enqueue(1, Bytes(n, 0), 1).error(), QueueError::kMalformed) << n;
  }
  Bytes wrong_kind = claim();
  wrong_kind[1] = kKindSponsoredClaim;  // a 210-byte payload claiming to be sponsored
  EXPECT_EQ(q.enqueue(1, wrong_kind, 1).error(), QueueError::kMalformed);
  Bytes wrong_version = claim();
  wrong_version[0] = 2;
  EXPECT_EQ(q.enqueue(1, wrong_version, 1).error(), QueueError::kMalformed);
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_EQ(q.pending_bytes(), 0u);
}

TEST(Queue, SourcePerSourceAndTotalCaps) {
  auto q = make(QueueConfig{2, 3, 5, 100});
  ASSERT_TRUE(q.enqueue(1, claim(), 1).ok());
  ASSERT_TRUE(q.enqueue(2, claim(), 1).ok());
  EXPECT_EQ(q.enqueue(3, claim(), 1).error(), QueueError::kSourceLimit);  // both slots active
  ASSERT_TRUE(q.enqueue(1, claim(), 1).ok());
  ASSERT_TRUE(q.enqueue(1, claim(), 1).ok());
  EXPECT_EQ(q.enqueue(1, claim(), 1).error(), QueueError::kSourceFull);
  ASSERT_TRUE(q.enqueue(2, claim(), 1).ok());
  EXPECT_EQ(q.enqueue(2, claim(), 1).error(), QueueError::kQueueFull);  // 5 pending in total
  EXPECT_LE(q.pending_bytes(), kConflictBytes * 5);
}

TEST(Queue, RoundRobinAcrossSourcesFifoWithin) {
  auto q = make();
  std::vector<JobId> a, b;
  for (int i = 0; i < 3; ++i) a.push_back(*q.enqueue(10, claim(i), 1));
  for (int i = 0; i < 3; ++i) b.push_back(*q.enqueue(20, claim(i), 1));
  auto out = *q.turn(2, 4 * 4);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].job, a[0]);
  EXPECT_EQ(out[1].job, b[0]);
  EXPECT_EQ(out[2].job, a[1]);
  EXPECT_EQ(out[3].job, b[1]);
}

TEST(Queue, FourCreditsPerJobInvalidSignaturesIncluded) {
  auto q = make();
  Bytes bad = claim();
  bad[150] ^= 1;  // inside the issuer signature
  ASSERT_TRUE(q.enqueue(1, bad, 1).ok());
  ASSERT_TRUE(q.enqueue(1, claim(), 1).ok());
  EXPECT_TRUE(q.turn(2, 3)->empty());  // below one job's price: nothing happens
  auto first = *q.turn(2, 7);          // one job; the 3 left over are not carried
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].verdict, Verdict::kBadIssuerSignature);
  auto second = *q.turn(2, 4);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].verdict, Verdict::kValid);
}

TEST(Queue, SignatureVerdictsForClaimsSponsoredClaimsAndConflicts) {
  auto q = make(QueueConfig{1, 64, 64, 100});
  Bytes bad_sponsor = sponsored();
  bad_sponsor[400] ^= 1;
  Bytes same_issuer_equivocation = concat({sponsored(7, 1), sponsored(7, 2)});
  Bytes different_issuers = concat({sponsored(7, 1, 1), sponsored(7, 2, 3)});  // both halves sign correctly
  Bytes different_slots = concat({sponsored(7, 1), sponsored(8, 2)});
  Bytes identical = concat({sponsored(7, 1), sponsored(7, 1)});
  Bytes forged_half = concat({sponsored(7, 1), sponsored(7, 2)});
  forged_half[kSponsoredClaimBytes + 150] ^= 1;
  for (const auto& p : {claim(), sponsored(), bad_sponsor, same_issuer_equivocation, different_issuers,
                        different_slots, identical, forged_half})
    ASSERT_TRUE(q.enqueue(1, p, 1).ok());
  auto out = *q.turn(2, 1'000);
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(out[0].verdict, Verdict::kValid);
  EXPECT_EQ(out[1].verdict, Verdict::kValid);
  EXPECT_EQ(out[2].verdict, Verdict::kBadSponsorSignature);
  EXPECT_EQ(out[3].verdict, Verdict::kValid);
  EXPECT_EQ(out[3].kind, JobKind::kConflict);
  EXPECT_EQ(out[4].verdict, Verdict::kIssuerMismatch);
  EXPECT_EQ(out[5].verdict, Verdict::kNotSameSlot);
  EXPECT_EQ(out[6].verdict, Verdict::kNotConflicting);
  EXPECT_EQ(out[7].verdict, Verdict::kBadIssuerSignature);
}

TEST(Queue, ExpiryAtAgeEqualToTheLimitWithoutCredits) {
  auto q = make(QueueConfig{4, 4, 16, 10});
  JobId old = *q.enqueue(1, claim(), 100);
  JobId young = *q.enqueue(2, claim(), 101);
  auto out = *q.turn(110, 0);  // age 10 == limit: expired; age 9: kept; no credits needed
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].job, old);
  EXPECT_EQ(out[0].verdict, Verdict::kExpired);
  EXPECT_EQ(q.pending(), 1u);
  auto next = *q.turn(110, 4);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].job, young);
  EXPECT_EQ(next[0].verdict, Verdict::kValid);
}

TEST(Queue, ExpiryRunsBeforeAdmissionAndFreesCapacity) {
  auto q = make(QueueConfig{1, 1, 1, 5});
  ASSERT_TRUE(q.enqueue(1, claim(), 0).ok());
  EXPECT_EQ(q.enqueue(2, claim(), 4).error(), QueueError::kSourceLimit);
  // At t = 5 the first job expires during this enqueue; its unreported outcome
  // still counts against the total until a turn hands it over.
  EXPECT_EQ(q.enqueue(2, claim(), 5).error(), QueueError::kQueueFull);
  auto out = *q.turn(5, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].verdict, Verdict::kExpired);
  EXPECT_TRUE(q.enqueue(2, claim(), 5).ok());
}

TEST(Queue, BackwardTimeIsRefusedAndChangesNothing) {
  auto q = make();
  ASSERT_TRUE(q.enqueue(1, claim(), 50).ok());
  EXPECT_EQ(q.enqueue(1, claim(), 49).error(), QueueError::kTimeWentBackwards);
  EXPECT_EQ(q.enqueue(1, Bytes(3, 0), 49).error(), QueueError::kTimeWentBackwards);
  EXPECT_EQ(q.turn(49, 100).error(), QueueError::kTimeWentBackwards);
  EXPECT_EQ(q.pending(), 1u);
  EXPECT_EQ(q.turn(50, 4)->size(), 1u);
}

TEST(Queue, IdentityChurnLeavesNoState) {
  auto q = make(QueueConfig{2, 2, 4, 100});
  for (SourceId s = 1; s <= 1'000; ++s) {  // a thousand identities, two at a time
    ASSERT_TRUE(q.enqueue(s, claim(), s).ok()) << s;
    if (s % 2 == 0) {
      ASSERT_EQ(q.turn(s, 8)->size(), 2u);
    }
  }
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_EQ(q.pending_bytes(), 0u);
  // A dropped source's jobs go with it.
  ASSERT_TRUE(q.enqueue(5'000, claim(), 2'000).ok());
  q.drop_source(5'000);
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_EQ(q.pending_bytes(), 0u);
}

TEST(Ledger, AWeakWorkProofPassesPreverificationButNotTheLedger) {
  ClaimFields f = claim_fields(7);
  LedgerPolicy policy{12};
  f.work_nonce = 0;
  while (work_bits(make_claim(f, seed(1))) >= policy.min_work_bits) ++f.work_nonce;  // a weak proof
  Bytes weak = make_claim(f, seed(1));
  auto q = make();
  ASSERT_TRUE(q.enqueue(1, weak, 1).ok());
  auto out = *q.turn(2, 4);
  ASSERT_EQ(out[0].verdict, Verdict::kValid);  // the signature is fine
  EXPECT_EQ(ledger_validate(weak, out[0].verdict, 200, policy), LedgerVerdict::kInsufficientWork);
  // Enough work passes; the ledger still checks time and the preverification.
  while (work_bits(make_claim(f, seed(1))) < policy.min_work_bits) ++f.work_nonce;
  Bytes strong = make_claim(f, seed(1));
  EXPECT_EQ(ledger_validate(strong, Verdict::kValid, 200, policy), LedgerVerdict::kAccepted);
  EXPECT_EQ(ledger_validate(strong, Verdict::kValid, 10'000, policy), LedgerVerdict::kExpired);
  EXPECT_EQ(ledger_validate(strong, Verdict::kBadIssuerSignature, 200, policy), LedgerVerdict::kNotPreverified);
}

}  // namespace
}  // namespace cowboy::admission
