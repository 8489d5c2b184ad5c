// The registry plane admits and rejects exactly the §4-§6 instructions, with
// their state effects and events (conformance clause 1).
#include <gtest/gtest.h>

#include "registry_fixture.h"

namespace cowboy::cbqs {
namespace {

using testing::addr;
using RegistryTest = testing::RegistryFixture;

template <typename E>
const E* find_event(const Receipt& r) {
  for (const auto& e : r.events)
    if (auto* p = std::get_if<E>(&e)) return p;
  return nullptr;
}

TEST_F(RegistryTest, RegisterProviderSeedsSection4_1FieldsAndCharges) {
  auto r = apply(provider, registration());
  ASSERT_TRUE(r.ok());
  const auto& p = state.providers.at(provider);
  EXPECT_EQ(p.chain_instance_id, state.chain_instance_id);
  EXPECT_EQ(p.signing_key, key(1));
  EXPECT_EQ(p.signing_key_since, height);
  EXPECT_FALSE(p.previous_signing_key);
  EXPECT_EQ(p.previous_signing_key_since, 0u);
  EXPECT_EQ(p.assigned_streams, 0u);
  EXPECT_EQ(state.native_balance(provider), testing::kFunds - CBQS_PROVIDER_REGISTRATION_CHARGE);
  EXPECT_EQ(state.native_balance(platform_treasury_address()), CBQS_PROVIDER_REGISTRATION_CHARGE);
  EXPECT_EQ(state.singleton.providers, 1u);
  ASSERT_NE(find_event<event::ProviderRegistered>(r), nullptr);
  EXPECT_EQ(apply(provider, registration()).error, ChainError::kProviderExists);
}

TEST_F(RegistryTest, RegisterProviderRefusesBadEndpointsAndPoorSenders) {
  auto reg = registration();
  reg.endpoints = {Bytes{'h', 't', 't', 'p', 's', ':', '/', '/', 'p'}};
  RegistryState before = state;
  EXPECT_EQ(apply(provider, reg).error, ChainError::kInvalidEndpoints);
  EXPECT_EQ(state, before);
  EXPECT_EQ(apply(addr(0x77), registration()).error, ChainError::kInsufficientFunds);
  EXPECT_EQ(state, before);
}

TEST_F(RegistryTest, SigningKeyRotationKeepsThePreviousKeyWithItsInterval) {
  ASSERT_TRUE(apply(provider, registration()).ok());  // key(1) since 100
  height = 250;
  UpdateProviderV2 u;
  u.signing_key = key(9);
  auto r = apply(provider, u);
  ASSERT_TRUE(r.ok());
  const auto& p = state.providers.at(provider);
  EXPECT_EQ(p.signing_key, key(9));
  EXPECT_EQ(p.signing_key_since, 250u);
  EXPECT_EQ(p.previous_signing_key, key(1));
  EXPECT_EQ(p.previous_signing_key_since, 100u);
  EXPECT_TRUE(find_event<event::ProviderUpdated>(r)->signing_key_rotated);
  EXPECT_EQ(apply(provider, UpdateProviderV2{}).error, ChainError::kEmptyUpdate);
  EXPECT_EQ(apply(owner, u).error, ChainError::kUnknownProvider);
}

TEST_F(RegistryTest, CreateStreamDerivesTheIdCountsAndCharges) {
  ASSERT_TRUE(apply(provider, registration()).ok());
  EXPECT_EQ(apply(owner, CreateStreamV2{0, provider, key(2)}).error, ChainError::kUnknownAccount);
  ASSERT_TRUE(apply(owner, TopUpAccountV2{owner, provider, 10'000'000'000}).ok());
  u128 provider_before = state.native_balance(provider);
  auto r = apply(owner, CreateStreamV2{0, provider, key(2)});
  ASSERT_TRUE(r.ok());
  Bytes32 id = stream_id(state.chain_instance_id, owner, 0);
  const auto& s = state.streams.at(id);
  EXPECT_EQ(s.owner, owner);
  EXPECT_EQ(s.provider, provider);
  EXPECT_EQ(s.admin_key, key(2));
  EXPECT_EQ(s.authorization_generation, 0u);
  EXPECT_EQ(s.status, StreamStatusV2::kActive);
  EXPECT_EQ(state.providers.at(provider).assigned_streams, 1u);
  const auto* a = state.account(owner, provider);
  EXPECT_EQ(a->active_streams, 1u);
  EXPECT_EQ(a->rate_per_block, state.params.stream_rate_per_block);  // rent snapshot
  EXPECT_EQ(state.native_balance(owner), testing::kFunds - 10'000'000'000 - CBQS_STREAM_CREATION_CHARGE);
  EXPECT_EQ(state.native_balance(provider) - provider_before, CBQS_STREAM_CREATION_CHARGE * 9 / 10);
  EXPECT_EQ(find_event<event::StreamCreated>(r)->stream_id, id);
  // Ids are never reused, Closed or not.
  EXPECT_EQ(apply(owner, CreateStreamV2{0, provider, key(2)}).error, ChainError::kStreamExists);
  EXPECT_TRUE(custody_balanced());
}

TEST_F(RegistryTest, CreateStreamHonoursAcceptsNewAndMaxStreams) {
  auto reg = registration();
  reg.max_streams = 1;
  ASSERT_TRUE(apply(provider, reg).ok());
  ASSERT_TRUE(apply(owner, TopUpAccountV2{owner, provider, 10'000'000'000}).ok());
  ASSERT_TRUE(apply(owner, CreateStreamV2{0, provider, key(2)}).ok());
  EXPECT_EQ(apply(owner, CreateStreamV2{1, provider, key(2)}).error, ChainError::kProviderFull);
  UpdateProviderV2 u;
  u.max_streams = 5;
  u.accepts_new = false;
  ASSERT_TRUE(apply(provider, u).ok());
  EXPECT_EQ(apply(owner, CreateStreamV2{1, provider, key(2)}).error, ChainError::kProviderNotAccepting);
}

TEST_F(RegistryTest, UpdateStreamRotatesTheAdminKeyAndBumpsTheGeneration) {
  Bytes32 id = stream_ready();
  EXPECT_EQ(apply(other_owner, UpdateStreamV2{id, key(3), false}).error, ChainError::kNotAuthorized);
  auto r = apply(owner, UpdateStreamV2{id, key(3), true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(state.streams.at(id).admin_key, key(3));
  EXPECT_EQ(state.streams.at(id).authorization_generation, 1u);
  EXPECT_EQ(*find_event<event::StreamUpdated>(r), (event::StreamUpdated{id, true, 1}));
  EXPECT_EQ(apply(owner, UpdateStreamV2{id, key(3), false}).error, ChainError::kEmptyUpdate);
}

TEST_F(RegistryTest, OwnerCloseSettlesAndDecrementsCounters) {
  Bytes32 id = stream_ready();
  height += 10;
  auto r = apply(owner, CloseStreamV2{id});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(state.streams.at(id).status, StreamStatusV2::kClosed);
  EXPECT_EQ(state.providers.at(provider).assigned_streams, 0u);
  const auto* a = state.account(owner, provider);
  ASSERT_NE(a, nullptr);  // balance remains, so the account stays
  EXPECT_EQ(a->active_streams, 0u);
  EXPECT_EQ(a->balance, 10'000'000'000 - 10 * state.params.stream_rate_per_block);
  EXPECT_EQ(find_event<event::AccountSettled>(r)->paid, 10 * state.params.stream_rate_per_block);
  EXPECT_EQ(apply(owner, CloseStreamV2{id}).error, ChainError::kStreamClosed);
  EXPECT_TRUE(custody_balanced());
}

// §5.1 both ways: refused while the account funds one more block, allowed once it cannot.
TEST_F(RegistryTest, ProviderCloseOnlyWhenTheAccountCannotFundABlock) {
  Bytes32 id = stream_ready(1'000'000'000);  // the minimum top-up; rate 1,000/block
  height += 10;
  RegistryState before = state;
  EXPECT_EQ(apply(provider, CloseStreamV2{id}).error, ChainError::kProviderCloseRefused);
  EXPECT_EQ(state, before);  // rejected without effect, the settlement included

  height += 1'000'000;  // due now exceeds the balance: settle suspends and empties it
  auto r = apply(provider, CloseStreamV2{id});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(find_event<event::StreamClosed>(r)->by_provider);
  EXPECT_EQ(state.streams.at(id).status, StreamStatusV2::kClosed);
  EXPECT_EQ(state.account(owner, provider), nullptr);  // balance 0, no streams: deleted
  EXPECT_NE(find_event<event::AccountDeleted>(r), nullptr);
  EXPECT_TRUE(custody_balanced());
}

TEST_F(RegistryTest, StrangersCannotClose) {
  Bytes32 id = stream_ready();
  EXPECT_EQ(apply(other_owner, CloseStreamV2{id}).error, ChainError::kNotAuthorized);
}

// Conformance clause 1's distinguishing case: settle -> effects -> finalize.
TEST_F(RegistryTest, ClosingTheLastStreamOfASuspendedZeroBalanceAccountDeletesIt) {
  Bytes32 id = stream_ready(1'000'000'000);
  height += 2'000'000;  // due 2e9 > balance 1e9: the partial branch
  auto settle_r = apply(owner, SettleAccountV2{owner, provider});
  ASSERT_TRUE(settle_r.ok());
  ASSERT_NE(find_event<event::AccountSuspended>(settle_r), nullptr);
  EXPECT_EQ(find_event<event::AccountSuspended>(settle_r)->written_off, 1'000'000'000u);
  const auto* a = state.account(owner, provider);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->suspended);
  ASSERT_EQ(a->balance, 0u);

  height += 5;
  auto r = apply(owner, CloseStreamV2{id});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(state.account(owner, provider), nullptr);
  ASSERT_NE(find_event<event::AccountDeleted>(r), nullptr);
  EXPECT_TRUE(custody_balanced());
}

TEST_F(RegistryTest, TopUpCreatesWithSection4_3InitialFields) {
  ASSERT_TRUE(apply(provider, registration()).ok());
  EXPECT_EQ(apply(owner, TopUpAccountV2{owner, provider, 999'999'999}).error, ChainError::kTopUpBelowMinimum);
  EXPECT_EQ(apply(owner, TopUpAccountV2{owner, addr(0x55), 1'000'000'000}).error, ChainError::kUnknownProvider);
  // A sponsor may top up someone else's account.
  auto r = apply(other_owner, TopUpAccountV2{owner, provider, 1'000'000'000});
  ASSERT_TRUE(r.ok());
  const auto* a = state.account(owner, provider);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*a, (CbqsAccountV2{owner, provider, 1'000'000'000, 0, 0, height, false}));
  EXPECT_EQ(state.native_balance(other_owner), testing::kFunds - 1'000'000'000);
  EXPECT_NE(find_event<event::AccountCreated>(r), nullptr);
  EXPECT_TRUE(custody_balanced());
}

TEST_F(RegistryTest, TopUpResumesASuspendedAccount) {
  Bytes32 id = stream_ready(1'000'000'000);
  (void)id;
  height += 2'000'000;
  ASSERT_TRUE(apply(owner, SettleAccountV2{owner, provider}).ok());
  ASSERT_TRUE(state.account(owner, provider)->suspended);
  auto r = apply(owner, TopUpAccountV2{owner, provider, 1'000'000'000});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(state.account(owner, provider)->suspended);
  EXPECT_NE(find_event<event::AccountResumed>(r), nullptr);
}

TEST_F(RegistryTest, WithdrawKeepsOneBlockInReserveAndAbsentMeansAll) {
  stream_ready(2'000'000'000);
  const u128 rate = state.params.stream_rate_per_block;
  EXPECT_EQ(apply(owner, WithdrawAccountV2{provider, std::nullopt}).error, ChainError::kWithdrawBelowReserve);
  EXPECT_EQ(apply(owner, WithdrawAccountV2{provider, u128{0}}).error, ChainError::kWithdrawTooLarge);
  u128 before = state.native_balance(owner);
  ASSERT_TRUE(apply(owner, WithdrawAccountV2{provider, u128{2'000'000'000} - rate}).ok());
  EXPECT_EQ(state.account(owner, provider)->balance, rate);
  EXPECT_EQ(state.native_balance(owner), before + 2'000'000'000 - rate);
  EXPECT_TRUE(custody_balanced());
}

TEST_F(RegistryTest, WithdrawAllWithNoStreamsDeletesTheAccount) {
  ASSERT_TRUE(apply(provider, registration()).ok());
  ASSERT_TRUE(apply(owner, TopUpAccountV2{owner, provider, 3'000'000'000}).ok());
  auto r = apply(owner, WithdrawAccountV2{provider, std::nullopt});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(find_event<event::AccountWithdrawn>(r)->amount, 3'000'000'000u);
  EXPECT_EQ(state.account(owner, provider), nullptr);
  EXPECT_EQ(state.native_balance(owner), testing::kFunds);
  EXPECT_EQ(apply(owner, WithdrawAccountV2{provider, std::nullopt}).error, ChainError::kUnknownAccount);
}

TEST_F(RegistryTest, SettlePaysTheProviderNinetyPercent) {
  stream_ready();
  u128 provider_before = state.native_balance(provider);
  u128 treasury_before = state.native_balance(platform_treasury_address());
  height += 1'000;
  auto r = apply(other_owner, SettleAccountV2{owner, provider});  // anyone may settle
  ASSERT_TRUE(r.ok());
  u128 paid = 1'000 * state.params.stream_rate_per_block;
  EXPECT_EQ(*find_event<event::AccountSettled>(r),
            (event::AccountSettled{owner, provider, height, paid, paid * 9 / 10, paid / 10}));
  EXPECT_EQ(state.native_balance(provider) - provider_before, paid * 9 / 10);
  EXPECT_EQ(state.native_balance(platform_treasury_address()) - treasury_before, paid / 10);
  EXPECT_TRUE(custody_balanced());
}

TEST_F(RegistryTest, RentRateIsSnapshottedAtEachSettlement) {
  stream_ready();
  ASSERT_TRUE(apply_parameter_write(state, {admin, height}, "cbqs.stream_rate_per_block", 5'000).ok());
  EXPECT_EQ(state.account(owner, provider)->rate_per_block, 1'000u);  // not until the next billing run
  height += 10;
  auto r = apply(owner, SettleAccountV2{owner, provider});
  EXPECT_EQ(find_event<event::AccountSettled>(r)->paid, 10'000u);  // the old rate up to now
  EXPECT_EQ(state.account(owner, provider)->rate_per_block, 5'000u);
}

TEST_F(RegistryTest, HeightRegressionFailsClosed) {
  stream_ready();
  height -= 1;
  RegistryState before = state;
  EXPECT_EQ(apply(owner, SettleAccountV2{owner, provider}).error, ChainError::kHeightRegression);
  EXPECT_EQ(state, before);
}

TEST_F(RegistryTest, PayloadVersionRuleOfSection18) {
  Bytes payload = encode(CbqsInstructionV2{registration()});
  payload[0] = 1;
  auto r = apply_payload(state, {provider, height}, payload);
  EXPECT_EQ(r.error, ChainError::kUnsupportedVersion);
  payload[0] = 2;
  payload.push_back(0);
  EXPECT_EQ(apply_payload(state, {provider, height}, payload).error, ChainError::kMalformedPayload);
  payload.pop_back();
  EXPECT_TRUE(apply_payload(state, {provider, height}, payload).ok());
}

TEST_F(RegistryTest, StoredRecordVersionRuleOfSection18) {
  stream_ready();
  Bytes stored = encode(state.streams.begin()->second);
  stored[0] = 1;
  EXPECT_EQ(decode<StreamRecordV2>(stored).error(), DecodeError::kBadVersion);
  Bytes account = encode(state.accounts.begin()->second);
  account[0] = 3;
  EXPECT_EQ(decode<CbqsAccountV2>(account).error(), DecodeError::kBadVersion);
}

}  // namespace
}  // namespace cowboy::cbqs
