// The §14 phases as the services live them, each flag set in a chain's
// genesis (§13): no transport before Phase 1, the Phase-1 shadow draw, and
// Phase 3's retired poll endpoint. Phase 2 (present-first) is the `cip11d
// --dev` default every other service test runs under.
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using testing::eventually;
using testing::hex;
using testing::LocalChain;
using testing::LocalChainOptions;

// CIP11_TRANSPORT_ENABLED off: there is no QUIC transport - cip11d's service
// refuses to start, and a runner does not connect even to a validator that
// listens at its genesis endpoint - and runners take their jobs from the poll endpoint.
TEST(Cip11Phases, WithTheTransportOffThereIsNoValidatorServiceAndRunnersPoll) {
  LocalChainOptions options;
  options.service = false;
  options.flags = [](chain::ChainParams& p) { p.transport_enabled = false; };
  LocalChain local(options);
  ValidatorServiceConfig config;
  config.key = local.validator_seed;
  devchain::Cip11Port port(*local.node, *local.node);
  auto service = ValidatorService::open(config, port);
  ASSERT_FALSE(service.ok());
  EXPECT_NE(service.error().find("CIP11_TRANSPORT_ENABLED"), std::string::npos) << service.error();

  testing::InProcessValidator listening(local.validator_seed, local.genesis, local.quic_port, local.dir.path() / "tls");
  auto runner = local.runner(0, {"--poll-ms", "200"});
  auto id = local.submit(R"({"echo":"polled"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(runner->wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(runner->saw({"event=accepted", hex(*id), "via=poll"}));
  EXPECT_EQ(runner->count("event=connected"), 0u);
  EXPECT_EQ(listening.admitted.load(), 0);
}

// CIP11_PRESENCE_SHADOW_ENABLED with present-first off: blocks carry the
// validator's PresenceInput, the CIP-11 draw is computed beside the live one
// and counted, and live selection is CIP-2 v2's.
TEST(Cip11Phases, ShadowModeComputesTheCip11DrawAsTelemetryOnly) {
  LocalChainOptions options;
  options.flags = [](chain::ChainParams& p) {
    p.present_first_enabled = false;
    p.presence_shadow_enabled = true;
  };
  LocalChain local(options);
  auto runner = local.runner(0);
  ASSERT_TRUE(local.metric_is("cip11d_present_runners 1"));
  auto id = local.submit(R"({"echo":"shadowed"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(runner->wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(local.metric_is("cip11d_shadow_draws_total 1"));
  EXPECT_TRUE(local.metric_is("cip11d_shadow_present_members_total 1"));  // the runner was present
  EXPECT_TRUE(local.metric_is("cip11d_shadow_agreements_total 1"));       // one runner: the same committee
  auto job = local.node->job(*id);
  ASSERT_TRUE(job && job->selection_seed);
  auto block = local.node->block_presence(job->assignment_height.value);
  ASSERT_TRUE(block);
  EXPECT_TRUE(block->field.has_value());
  EXPECT_EQ(block->present, std::vector<std::uint32_t>{0});
  // R_{S-1}: the parent round's seed; a lone producer's views are its heights.
  auto parent_seed = local.node->round_seed(View{(job->submitted_at - 1).value});
  ASSERT_TRUE(parent_seed);
  // The producer proved it, unless it is Round(0, 0): the configured genesis beacon.
  EXPECT_EQ(parent_seed->proof.has_value(), job->submitted_at > Height{1});
  const Bytes32 beacon = *beacon_hash_v1(chain::beacon_of(*parent_seed));
  EXPECT_EQ(*job->selection_seed, selection_seed_v2(beacon, *id, job->submitted_at.value));  // live selection is v2
}

// CIP11_POLL_DISABLED: a runner that could only poll refuses to start; one
// with the transport lives on pushes alone.
TEST(Cip11Phases, WithThePollEndpointRetiredRunnersLiveOnPushAlone) {
  LocalChainOptions options;
  options.flags = [](chain::ChainParams& p) { p.poll_disabled = true; };
  LocalChain local(options);
  {
    const auto err = local.dir.path() / "poll-only.err";
    cowboy::testing::ChildProcess poll_only({std::string(COWBOY_BIN_DIR) + "/cip11-runner", "--chain-url", local.url(),
                                             "--key", (local.dir.path() / "runner-0.key").string(), "--state-dir",
                                             (local.dir.path() / "poll-only-state").string(), "--poll-only"},
                                            err.string());
    EXPECT_FALSE(poll_only.wait_for_line("started"));  // it exits instead
    const int status = poll_only.kill(SIGKILL);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    std::ifstream in(err);
    std::string message((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(message.find("CIP11_POLL_DISABLED"), std::string::npos) << message;
  }
  auto runner = local.runner(0);
  ASSERT_TRUE(runner->wait_for({"event=connected"}));
  ASSERT_TRUE(local.metric_is("cip11d_present_runners 1"));
  auto id = local.submit(R"({"echo":"pushed"})");
  ASSERT_TRUE(id);
  ASSERT_TRUE(runner->wait_for({"event=included", hex(*id)}));
  EXPECT_TRUE(runner->saw({"event=accepted", hex(*id), "via=push"}));
  EXPECT_EQ(runner->count("via=poll"), 0u);
}

}  // namespace
}  // namespace cowboy::cip11
