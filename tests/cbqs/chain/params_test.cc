#include "cbqs/chain/params.h"

#include <gtest/gtest.h>

#include "cbqs/chain/registry.h"

namespace cowboy::cbqs {
namespace {

TEST(Params, TableNamesEveryParameterTheSeedUses) {
  for (auto name : {"max_snapshot_age_blocks", "max_grant_ttl_ms", "max_clock_skew_ms", "max_lane_ids_per_grant",
                    "max_provider_endpoints", "max_provider_endpoint_uri_bytes", "max_sessions_per_connection",
                    "session_handshake_timeout_ms", "max_lanes_per_stream", "max_groups_per_stream", "visibility_ms",
                    "max_attempts", "max_in_flight_per_group", "retention_ms", "max_message_bytes",
                    "max_retained_bytes_per_stream", "max_append_bytes_per_sec", "max_delivered_bytes_per_sec",
                    "max_lane_list_page", "snapshot_refresh_ms", "slow_consumer_timeout_ms", "commit_batch_max_ms",
                    "commit_batch_max_records", "stream_rate_per_block"}) {
    EXPECT_NE(find_param(name), nullptr) << name;
    EXPECT_NE(find_param(std::string("cbqs.") + name), nullptr) << name;
  }
}

TEST(Params, EveryRowIsConsistent) {
  for (const auto& p : param_table()) {
    EXPECT_LE(p.minimum, p.default_value) << p.name;
    EXPECT_LE(p.default_value, p.maximum) << p.name;
    if (p.param_class == ParamClass::kCodec) {
      EXPECT_EQ(p.default_value, p.maximum) << p.name;
    }
    EXPECT_FALSE(validate_param_write(p.name, p.default_value)) << p.name << ": default must be writable";
  }
}

// Every zero-value hazard §15 lists is refused by the governance-write rule.
TEST(Params, EverySection15ZeroValueHazardIsRefused) {
  for (auto name : {"retention_ms", "visibility_ms", "max_attempts", "max_in_flight_per_group", "max_message_bytes",
                    "max_retained_bytes_per_stream", "max_append_bytes_per_sec", "max_delivered_bytes_per_sec",
                    "max_grant_ttl_ms", "session_handshake_timeout_ms", "max_lane_list_page", "snapshot_refresh_ms",
                    "slow_consumer_timeout_ms", "commit_batch_max_ms", "commit_batch_max_records",
                    "stream_rate_per_block"}) {
    EXPECT_EQ(validate_param_write(name, 0), ParamWriteError::kBelowMinimum) << name;
    EXPECT_FALSE(validate_param_write(name, 1)) << name << ": 1 must be writable";
  }
  EXPECT_FALSE(validate_param_write("max_clock_skew_ms", 0));  // zero skew is a legitimate setting
}

TEST(Params, CodecRowsAcceptOnlyTheirDefault) {
  EXPECT_EQ(validate_param_write("max_lane_ids_per_grant", 255), ParamWriteError::kCodecImmovable);
  EXPECT_EQ(validate_param_write("max_frame_bytes", 0), ParamWriteError::kCodecImmovable);
  EXPECT_FALSE(validate_param_write("max_provider_endpoints", 8));
}

TEST(Params, AboveMaximumAndUnknownNamesAreRefused) {
  EXPECT_EQ(validate_param_write("visibility_ms", 43'200'001), ParamWriteError::kAboveMaximum);
  EXPECT_EQ(validate_param_write("cbqs.no_such_parameter", 1), ParamWriteError::kUnknownParameter);
}

TEST(Genesis, SeedsEveryParameterAtItsDefault) {
  Genesis g;
  for (const auto& p : param_table()) g.parameters.emplace_back("cbqs." + std::string(p.name), p.default_value);
  auto state = make_genesis(g);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->params, Params{});
  EXPECT_EQ(state->native_balance(registry_address()), 0u);
  EXPECT_TRUE(state->providers.empty() && state->streams.empty() && state->accounts.empty());
}

TEST(Genesis, RejectsUnknownCbqsKeysNonDefaultsAndAFundedRegistry) {
  Genesis unknown;
  unknown.parameters = {{"cbqs.max_quotes_per_stream", 1}};  // a version-1 style key
  EXPECT_EQ(make_genesis(unknown).error(), ChainError::kInvalidGenesis);
  Genesis moved;
  moved.parameters = {{"cbqs.retention_ms", 1}};
  EXPECT_EQ(make_genesis(moved).error(), ChainError::kInvalidGenesis);
  Genesis unprefixed;
  unprefixed.parameters = {{"retention_ms", 604'800'000}};
  EXPECT_EQ(make_genesis(unprefixed).error(), ChainError::kInvalidGenesis);
  Genesis funded;
  funded.balances = {{registry_address(), 1}};
  EXPECT_EQ(make_genesis(funded).error(), ChainError::kInvalidGenesis);
}

TEST(GovernanceWrite, OnlyTheAdminAndOnlyAdmissibleValues) {
  Genesis g;
  g.governance_admin[0] = 0xad;
  auto state = *make_genesis(g);
  Address stranger{};
  stranger[0] = 0x01;
  EXPECT_EQ(apply_parameter_write(state, {stranger, 5}, "cbqs.visibility_ms", 60'000).error,
            ChainError::kNotAuthorized);
  RegistryState before = state;
  EXPECT_EQ(apply_parameter_write(state, {g.governance_admin, 5}, "cbqs.retention_ms", 0).error,
            ChainError::kInvalidParameter);
  EXPECT_EQ(state, before);  // a refused write changes nothing
  auto r = apply_parameter_write(state, {g.governance_admin, 5}, "cbqs.visibility_ms", 60'000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(state.params.visibility_ms, 60'000u);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(std::get<event::ParameterChanged>(r.events[0]),
            (event::ParameterChanged{"cbqs.visibility_ms", 30'000, 60'000}));
}

}  // namespace
}  // namespace cowboy::cbqs
