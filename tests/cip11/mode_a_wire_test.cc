// Mode A's wire side (docs/cip11.md choice 73) over real QUIC: a runner (the
// runner library, in this process) asks its validator (ValidatorService on a
// devchain, in this process) for PresenceReceipts with a CapabilityDelta,
// collects the receipts that come with its Pongs, and submits a
// SubmitPresenceCertificate through its chain port; the chain applies it, and
// a later one moves the anchor on before the first proof runs out. The
// devchain's HTTP route answers the same proof.
#include "cip11/chain/mode_a.h"
#include "cip11/runner.h"
#include "devchain/http_client.h"
#include "service_world.h"

namespace cowboy::cip11 {
namespace {

using testing::eventually;

std::uint64_t metric(const std::string& text, const std::string& name) {
  const auto at = text.find("\n" + name + " ");
  return at == std::string::npos ? 0 : std::stoull(text.substr(at + name.size() + 2));
}

TEST(Cip11ModeAWire, ARunnerCollectsReceiptsAndItsCertificateIsApplied) {
  testing::LocalChainOptions o;
  o.flags = [](chain::ChainParams& p) { p.presence_hard_exclude_enabled = true; };  // |V| = 1, t_hard = 1
  testing::LocalChain c(o);
  RunnerOptions ro;
  ro.key = c.runner_keys[0];
  ro.state_dir = c.dir.path() / "runner-state";
  ro.block_time = std::chrono::milliseconds(100);
  ro.height_poll = std::chrono::milliseconds(20);
  auto runner = Runner::start(ro, std::make_unique<devchain::Cip11Port>(*c.node, *c.node));
  ASSERT_TRUE(runner) << runner.error();
  const Address me = (*runner)->address();

  ASSERT_TRUE(eventually([&] { return c.node->presence_proof(me).ok(); }, std::chrono::seconds(30)))
      << "no certificate applied; receipts sent: " << metric(c.service->metrics(), "cip11d_presence_receipts_total");
  const chain::PresenceProof first = *c.node->presence_proof(me);
  EXPECT_GT(first.anchor, Height{0});
  EXPECT_EQ(first.proven_until, first.anchor + chain::kPresenceProofTtlBlocks);
  EXPECT_GE(metric(c.service->metrics(), "cip11d_presence_receipts_total"), 1u);
  EXPECT_GE((*runner)->status().receipts, 1u);  // one validator: one newest receipt held

  // Half way through the TTL the runner certifies its newer receipts.
  ASSERT_TRUE(eventually([&] {
    auto p = c.node->presence_proof(me);
    return p && p->anchor > first.anchor;
  }, std::chrono::seconds(30)));
  const chain::PresenceProof second = *c.node->presence_proof(me);
  EXPECT_EQ(second.proven_until, second.anchor + chain::kPresenceProofTtlBlocks);
  // GET /v1/cip11/runners/<address>/presence-proof answers the same record
  // (the anchor only moves up: at least the one read above), and NotFound for
  // a runner with no certificate.
  devchain::HttpClient http("127.0.0.1", c.api->port());
  auto over_http = http.presence_proof(me);
  ASSERT_TRUE(over_http.ok()) << over_http.error().message;
  EXPECT_GE(over_http->anchor, second.anchor);
  EXPECT_EQ(over_http->proven_until, over_http->anchor + chain::kPresenceProofTtlBlocks);
  EXPECT_EQ(*over_http, *c.node->presence_proof(me));
  auto raw = http.get_json("/v1/cip11/runners/" + to_hex0x(me) + "/presence-proof");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ((*raw)["anchor"], over_http->anchor.value);
  EXPECT_EQ((*raw)["runner"], to_hex0x(me));
  EXPECT_EQ(http.presence_proof(Address{}).error().code, devchain::ApiErrorCode::kNotFound);
  EXPECT_TRUE(eventually([&] { return (*runner)->status().certificates >= 2; }, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace cowboy::cip11
