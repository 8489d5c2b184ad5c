// §15.1 metering vectors: tests/vectors/cbqs-gas-vectors-v2.json lists a chain
// history as SYS_CBQS payloads (hex) with the outcome and metered cost of each
// step, starting from the genesis below with no prior governance write. The
// test replays the file's payloads, not the C++ below, so the file stands on
// its own for any implementation. Regenerate deliberately with
//   COWBOY_WRITE_VECTORS=1 build/bin/cbqs_chain_tests --gtest_filter='Metering.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "registry_fixture.h"

namespace cowboy::cbqs {
namespace {

using nlohmann::json;
using testing::addr;

std::string vectors_path() { return std::string(COWBOY_SOURCE_DIR) + "/tests/vectors/cbqs-gas-vectors-v2.json"; }

struct Step {
  std::string name;
  Address sender;
  std::uint64_t height;
  std::optional<CbqsInstructionV2> instruction;       // a SYS_CBQS payload, or
  std::optional<std::pair<std::string, std::uint64_t>> parameter_write;  // a governance write
};

Genesis vector_genesis() {
  Genesis g;
  g.chain_instance_id = crypto::keccak256(as_bytes("cbqs-gas-vectors-v2"));
  g.governance_admin = addr(0xad);
  g.balances = {{addr(0xb0), testing::kFunds}, {addr(0x0a), testing::kFunds}, {addr(0x0c), testing::kFunds}};
  return g;
}

std::vector<Step> scenario() {
  const Address provider = addr(0xb0), owner = addr(0x0a), sponsor = addr(0x0c), admin = addr(0xad);
  auto key = [](std::uint8_t s) {
    crypto::Ed25519Seed seed{};
    seed[0] = s;
    return ed25519_public_key(seed);
  };
  auto endpoints = [](std::string_view uri) { return std::vector<Bytes>{Bytes(uri.begin(), uri.end())}; };
  Bytes32 stream0 = stream_id(crypto::keccak256(as_bytes("cbqs-gas-vectors-v2")), owner, 0);
  Bytes32 stream1 = stream_id(crypto::keccak256(as_bytes("cbqs-gas-vectors-v2")), owner, 1);
  UpdateProviderV2 rotate;
  rotate.signing_key = key(9);
  return {
      {"register_provider/bad_endpoint", provider, 10, RegisterProviderV2{key(1), endpoints("https://p"), 10, true, {}}, {}},
      {"register_provider/ok", provider, 10, RegisterProviderV2{key(1), endpoints("wss://p/ws"), 10, true, {}}, {}},
      {"register_provider/exists", provider, 11, RegisterProviderV2{key(1), endpoints("wss://p/ws"), 10, true, {}}, {}},
      {"update_provider/rotate_key", provider, 12, rotate, {}},
      {"update_provider/empty", provider, 12, UpdateProviderV2{}, {}},
      {"top_up/below_minimum", owner, 13, TopUpAccountV2{owner, provider, 999'999'999}, {}},
      {"top_up/create_account", owner, 13, TopUpAccountV2{owner, provider, 1'000'000'000}, {}},
      {"top_up/existing_by_sponsor", sponsor, 14, TopUpAccountV2{owner, provider, 1'000'000'000}, {}},
      {"top_up/existing_other_amount", sponsor, 14, TopUpAccountV2{owner, provider, 1'234'567'890}, {}},
      {"create_stream/no_account", sponsor, 15, CreateStreamV2{0, provider, key(2)}, {}},
      {"create_stream/ok", owner, 15, CreateStreamV2{0, provider, key(2)}, {}},
      {"create_stream/exists", owner, 16, CreateStreamV2{0, provider, key(2)}, {}},
      {"create_stream/second", owner, 16, CreateStreamV2{1, provider, key(2)}, {}},
      {"update_stream/bump", owner, 17, UpdateStreamV2{stream0, std::nullopt, true}, {}},
      {"update_stream/not_owner", sponsor, 17, UpdateStreamV2{stream0, key(3), false}, {}},
      {"settle/full", sponsor, 1'017, SettleAccountV2{owner, provider}, {}},
      {"close_stream/provider_refused", provider, 1'018, CloseStreamV2{stream1}, {}},
      {"close_stream/owner", owner, 1'018, CloseStreamV2{stream1}, {}},
      {"withdraw/below_reserve", owner, 1'019, WithdrawAccountV2{provider, std::nullopt}, {}},
      {"withdraw/some", owner, 1'019, WithdrawAccountV2{provider, u128{1'000'000'000}}, {}},
      {"governance/stream_rate", admin, 1'020, std::nullopt, std::pair{std::string("cbqs.stream_rate_per_block"), 1'000'000}},
      {"governance/zero_refused", admin, 1'020, std::nullopt, std::pair{std::string("cbqs.retention_ms"), 0}},
      {"settle/rate_snapshot", owner, 1'021, SettleAccountV2{owner, provider}, {}},
      {"settle/partial_suspends", owner, 10'000, SettleAccountV2{owner, provider}, {}},
      {"settle/suspended", owner, 20'000, SettleAccountV2{owner, provider}, {}},
      {"close_stream/provider_allowed_deletes_account", provider, 20'001, CloseStreamV2{stream0}, {}},
      {"settle/unknown_account", owner, 20'002, SettleAccountV2{owner, provider}, {}},
  };
}

json receipt_json(const Receipt& r) {
  return json{{"outcome", r.ok() ? std::string("ok") : std::string(chain_error_name(*r.error))},
              {"charged_reads", r.metering.charged_reads},
              {"charged_writes", r.metering.charged_writes},
              {"cells", r.metering.cells}};
}

void write_vectors() {
  auto state = *make_genesis(vector_genesis());
  json steps = json::array();
  for (const auto& s : scenario()) {
    json step{{"name", s.name}, {"sender", to_hex(s.sender)}, {"height", s.height}};
    Receipt r;
    if (s.instruction) {
      Bytes payload = encode(*s.instruction);
      step["payload"] = to_hex(payload);
      r = apply_payload(state, {s.sender, s.height}, payload);
    } else {
      step["parameter_write"] = {{"name", s.parameter_write->first}, {"value", s.parameter_write->second}};
      r = apply_parameter_write(state, {s.sender, s.height}, s.parameter_write->first, s.parameter_write->second);
    }
    step["expect"] = receipt_json(r);
    steps.push_back(step);
  }
  json doc{{"description",
            "CBQS v2 metering vectors (docs/protocol.md §G). Replay the steps in order from the genesis: "
            "chain_instance_id = keccak256(\"cbqs-gas-vectors-v2\"), every §15 parameter at its default, "
            "balances 10^12 nano-CBY for 0xb0.., 0x0a.., 0x0c.. (first byte, rest zero), governance admin 0xad.."},
           {"steps", steps}};
  std::ofstream(vectors_path()) << doc.dump(2) << "\n";
}

TEST(Metering, VectorFileIsReproduced) {
  if (std::getenv("COWBOY_WRITE_VECTORS")) write_vectors();
  std::ifstream in(vectors_path());
  ASSERT_TRUE(in) << vectors_path();
  json doc = json::parse(in);
  auto state = *make_genesis(vector_genesis());
  std::size_t ok_steps = 0, rejected_steps = 0;
  for (const auto& step : doc.at("steps")) {
    Address sender = *fixed_from_hex<20>(step.at("sender").get<std::string>());
    std::uint64_t height = step.at("height");
    Receipt r;
    if (step.contains("payload")) {
      r = apply_payload(state, {sender, height}, *from_hex(step.at("payload").get<std::string>()));
    } else {
      const auto& w = step.at("parameter_write");
      r = apply_parameter_write(state, {sender, height}, w.at("name").get<std::string>(), w.at("value"));
    }
    EXPECT_EQ(receipt_json(r), step.at("expect")) << step.at("name");
    (r.ok() ? ok_steps : rejected_steps)++;
  }
  EXPECT_GE(ok_steps, 15u);
  EXPECT_GE(rejected_steps, 8u);
}

TEST(Metering, BranchesThatDifferOnlyByAmountsMeterIdentically) {
  auto state = *make_genesis(vector_genesis());
  const Address provider = addr(0xb0), owner = addr(0x0a);
  ASSERT_TRUE(apply_instruction(state, {provider, 1}, RegisterProviderV2{{}, {Bytes{'w', 's', 's', ':', '/', '/'}}, 5, true, {}}).ok());
  ASSERT_TRUE(apply_instruction(state, {owner, 1}, TopUpAccountV2{owner, provider, 1'000'000'000}).ok());
  auto a = apply_instruction(state, {owner, 2}, TopUpAccountV2{owner, provider, 1'000'000'000});
  auto b = apply_instruction(state, {owner, 2}, TopUpAccountV2{owner, provider, 77'777'777'777});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.metering, b.metering);
  EXPECT_GT(a.metering.charged_reads, 0u);
  EXPECT_GT(a.metering.cells, 0u);
}

}  // namespace
}  // namespace cowboy::cbqs
