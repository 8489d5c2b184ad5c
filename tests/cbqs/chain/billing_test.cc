// §6.1 settle / finalize / distribute and the §6.2 solvency predicate.
#include "cbqs/chain/billing.h"

#include <gtest/gtest.h>

namespace cowboy::cbqs {
namespace {

CbqsAccountV2 account(u128 balance, std::uint64_t active, u128 rate, std::uint64_t last, bool suspended = false) {
  CbqsAccountV2 a;
  a.balance = balance;
  a.active_streams = active;
  a.rate_per_block = rate;
  a.last_settled_block = last;
  a.suspended = suspended;
  return a;
}

TEST(Settle, FullBranchChargesDue) {
  auto a = account(10'000, 2, 100, 10);
  auto s = settle(a, 15);  // due = 5 * 100 * 2
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->paid, 1'000u);
  EXPECT_EQ(s->written_off, 0u);
  EXPECT_EQ(a.balance, 9'000u);
  EXPECT_FALSE(a.suspended);
  EXPECT_EQ(a.last_settled_block, 15u);
}

TEST(Settle, ExactBalanceStaysInTheFullBranch) {
  auto a = account(1'000, 2, 100, 10);
  auto s = settle(a, 15);
  EXPECT_EQ(s->paid, 1'000u);
  EXPECT_EQ(a.balance, 0u);
  EXPECT_FALSE(a.suspended);  // balance >= due
}

TEST(Settle, PartialBranchPaysWhatIsThereSuspendsAndWritesOffTheRest) {
  auto a = account(700, 2, 100, 10);
  auto s = settle(a, 15);
  EXPECT_EQ(s->paid, 700u);
  EXPECT_EQ(s->written_off, 300u);
  EXPECT_TRUE(s->suspended_now);
  EXPECT_EQ(a.balance, 0u);
  EXPECT_TRUE(a.suspended);
  EXPECT_EQ(a.last_settled_block, 15u);
}

TEST(Settle, SuspendedBranchAccruesNothingButAdvancesTheClock) {
  auto a = account(500, 2, 100, 10, true);
  auto s = settle(a, 1'000);
  EXPECT_EQ(s->paid, 0u);
  EXPECT_EQ(a.balance, 500u);
  EXPECT_EQ(a.last_settled_block, 1'000u);
}

TEST(Settle, FailsClosedOnHeightRegressionAndOverflowLeavingTheAccount) {
  auto a = account(500, 2, 100, 10);
  auto before = a;
  EXPECT_EQ(settle(a, 9).error(), BillingError::kHeightRegression);
  EXPECT_EQ(a, before);
  auto huge = account(500, UINT64_MAX, ~u128{0} / 2, 0);
  auto huge_before = huge;
  EXPECT_EQ(settle(huge, 3).error(), BillingError::kOverflow);
  EXPECT_EQ(huge, huge_before);
}

TEST(Finalize, NoStreamsMeansNothingOwedAndZeroBalanceDeletes) {
  auto a = account(0, 0, 100, 10, true);
  EXPECT_EQ(*finalize(a), FinalizeOutcome::kDeleteAccount);
  EXPECT_FALSE(a.suspended);
  auto b = account(5, 0, 100, 10, true);
  EXPECT_EQ(*finalize(b), FinalizeOutcome::kResumed);
  EXPECT_FALSE(b.suspended);
}

TEST(Finalize, ResumesOnlyWhenOneBlockIsFunded) {
  auto short_by_one = account(199, 2, 100, 10, true);
  EXPECT_EQ(*finalize(short_by_one), FinalizeOutcome::kKept);
  EXPECT_TRUE(short_by_one.suspended);
  auto funded = account(200, 2, 100, 10, true);
  EXPECT_EQ(*finalize(funded), FinalizeOutcome::kResumed);
  EXPECT_FALSE(funded.suspended);
}

TEST(Distribute, NinetyPercentToTheProviderRoundedDown) {
  EXPECT_EQ(distribute(1'000).provider_share, 900u);
  EXPECT_EQ(distribute(1'000).platform_share, 100u);
  EXPECT_EQ(distribute(7).provider_share, 6u);  // 7 * 9000 / 10000 = 6.3
  EXPECT_EQ(distribute(7).platform_share, 1u);
  u128 max = ~u128{0};
  Shares s = distribute(max);  // no overflow forming paid * 9000
  EXPECT_EQ(s.provider_share + s.platform_share, max);
  EXPECT_EQ(s.provider_share, max / 10'000 * 9'000 + (max % 10'000) * 9'000 / 10'000);
}

TEST(Solvency, PredicateOfSection6_2) {
  auto a = account(1'000, 2, 100, 10);
  EXPECT_TRUE(solvent(a, 15));   // due 1,000 == balance
  EXPECT_FALSE(solvent(a, 16));  // due 1,200
  EXPECT_FALSE(solvent(account(1'000, 2, 100, 10, true), 10));  // suspended
  EXPECT_FALSE(solvent(a, 9));  // regressed snapshot fails closed
  EXPECT_FALSE(solvent(account(~u128{0}, UINT64_MAX, ~u128{0}, 0), 2));  // overflow fails closed
  EXPECT_TRUE(solvent(account(0, 0, 100, 10), 1'000'000));  // no streams, nothing due
}

}  // namespace
}  // namespace cowboy::cbqs
