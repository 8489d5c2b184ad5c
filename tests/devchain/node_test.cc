// The in-process node: blocks, nonces, receipts, queries, persistence.
#include "devchain/node.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/high_s.h"
#include "../support/poll.h"
#include "../support/temp_dir.h"
#include "scenario.h"

namespace cowboy::devchain {
namespace {

using testing::secret;

class NodeTest : public ::testing::Test {
 protected:
  cowboy::testing::TempDir dir;
  NodeConfig config{dir.path(), std::chrono::milliseconds(5)};
  GenesisSpec genesis = testing::genesis_for(secret(1));

  std::unique_ptr<Node> open() {
    auto node = Node::open(config, genesis);
    EXPECT_TRUE(node.ok()) << (node.ok() ? "" : node.error());
    return node.ok() ? std::move(*node) : nullptr;
  }
};

TEST_F(NodeTest, GenesisIsHeightZeroAndTheChainIdIsDerivedFromIt) {
  auto node = open();
  EXPECT_EQ(*node->height(), 0u);
  EXPECT_EQ(*node->chain_instance_id(), chain_instance_id_of(genesis));
  GenesisSpec other = genesis;
  other.chain_name = "another";
  EXPECT_NE(chain_instance_id_of(other), chain_instance_id_of(genesis));
  EXPECT_EQ(node->account_info(genesis.governance_admin)->balance, testing::kGenesisFunds);
}

TEST_F(NodeTest, NonceMustBeTheSendersNext) {
  auto node = open();
  Transaction tx{*node->chain_instance_id(), 17, Transfer{Address{}, 1}, {}};  // more than 16 ahead
  ASSERT_TRUE(sign_tx(tx, secret(1)));
  auto r = node->submit(tx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ApiErrorCode::kBadNonce);
  tx.nonce = 0;
  ASSERT_TRUE(sign_tx(tx, secret(1)));
  auto hash = node->submit(tx);
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(*node->submit(tx), *hash);  // the same transaction again is the same submission (§10.3 rebroadcasts)
  Transaction other{*node->chain_instance_id(), 0, Transfer{Address{}, 2}, {}};
  ASSERT_TRUE(sign_tx(other, secret(1)));
  EXPECT_EQ(node->submit(other).error().code, ApiErrorCode::kBadNonce);  // another one on a used nonce is refused
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_EQ(node->account_info(genesis.governance_admin)->next_nonce, 1u);  // applied once
}

// Result frames travel on separate QUIC streams, so a runner's transactions
// can reach the chain out of nonce order (§10.3): a short way ahead waits.
TEST_F(NodeTest, ANonceAShortWayAheadWaitsForTheGapToFill) {
  auto node = open();
  auto signed_tx = [&](std::uint64_t nonce) {
    Transaction tx{*node->chain_instance_id(), nonce, Transfer{Address{}, nonce + 1}, {}};
    EXPECT_TRUE(sign_tx(tx, secret(1)));
    return tx;
  };
  auto third = node->submit(signed_tx(2));
  auto second = node->submit(signed_tx(1));
  ASSERT_TRUE(third && second);
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_FALSE(*node->receipt(*third));  // waiting for nonce 0, not applied
  EXPECT_EQ(node->account_info(genesis.governance_admin)->next_nonce, 0u);
  EXPECT_EQ(*node->submit(signed_tx(2)), *third);  // a queued transaction again is the same submission
  EXPECT_TRUE(node->submit(signed_tx(3)));  // 3 may queue too
  ASSERT_TRUE(node->submit(signed_tx(0)));
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_EQ(node->account_info(genesis.governance_admin)->next_nonce, 4u);  // 0, 1, 2, 3 in one block, in order
  EXPECT_EQ((*node->receipt(*second))->index + 1, (*node->receipt(*third))->index);
}

TEST_F(NodeTest, WrongChainAndBadSignatureAreRefusedAtSubmission) {
  auto node = open();
  Transaction tx{Bytes32{}, 0, Transfer{Address{}, 1}, {}};
  ASSERT_TRUE(sign_tx(tx, secret(1)));
  EXPECT_EQ(node->submit(tx).error().code, ApiErrorCode::kWrongChain);
  tx.chain_instance_id = *node->chain_instance_id();
  tx.signature.fill(0);
  EXPECT_EQ(node->submit(tx).error().code, ApiErrorCode::kBadSignature);
}

TEST_F(NodeTest, TheHighSTwinOfASignedTransactionIsRefused) {
  auto node = open();
  Transaction tx{*node->chain_instance_id(), 0, Transfer{Address{7}, 1}, {}};
  ASSERT_TRUE(sign_tx(tx, secret(1)));
  Transaction twin = tx;
  cowboy::testing::make_high_s_twin(twin.signature);
  EXPECT_EQ(node->submit(twin).error().code, ApiErrorCode::kBadSignature);  // before: accepted, another hash
  auto hash = node->submit(tx);
  ASSERT_TRUE(hash.ok());  // the original keeps its nonce and its hash
  ASSERT_TRUE(node->produce_block().ok());
  auto receipt = node->receipt(*hash);
  ASSERT_TRUE(receipt.ok());
  EXPECT_TRUE(receipt->has_value());
}

TEST_F(NodeTest, DeploymentProducesStateEventsAndASnapshot) {
  auto node = open();
  node->start();
  Wallet admin(*node, secret(1));
  auto d = testing::deploy(*node, admin);
  auto stream = node->stream(d.stream_id);
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(stream->owner, d.owner);
  auto snapshot = node->provider_snapshot(d.provider);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->provider.provider, d.provider);
  ASSERT_EQ(snapshot->streams.size(), 1u);
  EXPECT_EQ(snapshot->streams[0].stream_id, d.stream_id);
  ASSERT_EQ(snapshot->accounts.size(), 1u);
  EXPECT_EQ(snapshot->accounts[0].owner, d.owner);
  EXPECT_EQ(snapshot->chain_instance_id, *node->chain_instance_id());
  EXPECT_GE(snapshot->height, 5u);

  auto events = node->events(1, *node->height());
  ASSERT_TRUE(events.ok());
  std::vector<std::string> names;
  for (const auto& b : *events)
    for (const auto& e : b.events) names.emplace_back(cbqs::event_name(e));
  EXPECT_NE(std::find(names.begin(), names.end(), "ProviderRegistered"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "AccountCreated"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "StreamCreated"), names.end());
  EXPECT_EQ(node->events(5, 4).error().code, ApiErrorCode::kBadRequest);
  EXPECT_EQ(node->events(0, kMaxEventBlocksPerQuery).error().code, ApiErrorCode::kBadRequest);
}

TEST_F(NodeTest, RejectionsAreReceiptsWithTypedErrorsAndConsumeTheNonce) {
  auto node = open();
  node->start();
  Wallet admin(*node, secret(1));
  Wallet poor(*node, secret(9));
  ASSERT_TRUE(admin.send_and_wait(Transfer{poor.address(), 1'000})->ok());
  auto r = poor.send_instruction(testing::registration());  // cannot pay the registration charge
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error, "InsufficientFunds");
  EXPECT_EQ(node->account_info(poor.address())->next_nonce, 1u);
  auto bad = admin.send_instruction(testing::registration("https://nope/"));
  EXPECT_EQ(bad->error, "InvalidEndpoints");
  auto unknown = admin.send_instruction(cbqs::TopUpAccountV2{admin.address(), Address{7}, 1'000'000'000});
  EXPECT_EQ(unknown->error, "UnknownProvider");
  auto gov = admin.send_and_wait(ParameterWrite{"cbqs.retention_ms", 0});
  EXPECT_EQ(gov->error, "InvalidParameter");
  auto gov_ok = admin.send_and_wait(ParameterWrite{"cbqs.visibility_ms", 60'000});
  EXPECT_TRUE(gov_ok->ok());
  EXPECT_EQ(node->params()->visibility_ms, 60'000u);
}

TEST_F(NodeTest, ReopenResumesAtTheSameHeightAndState) {
  std::uint64_t height;
  Bytes state_before;
  {
    auto node = open();
    node->start();
    Wallet admin(*node, secret(1));
    testing::deploy(*node, admin);
    node->stop();
    height = *node->height();
  }
  auto node = open();
  EXPECT_EQ(*node->height(), height);
  EXPECT_EQ(node->account_info(genesis.governance_admin)->next_nonce, 2u);
  auto again = node->produce_block();
  EXPECT_EQ(*again, height + 1);
}

TEST_F(NodeTest, ADataDirOfAnotherChainIsRefused) {
  { open(); }
  GenesisSpec other = genesis;
  other.chain_name = "other";
  auto node = Node::open(config, other);
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.error().find("different chain"), std::string::npos);
}

TEST_F(NodeTest, GenesisRuleOfSection18) {
  nlohmann::json bad = genesis_to_json(genesis);
  bad["parameters"]["cbqs.max_quotes"] = 1;
  EXPECT_FALSE(genesis_from_json(bad).ok());
  nlohmann::json good = genesis_to_json(genesis);
  good["parameters"]["cbqs.retention_ms"] = 604'800'000;
  EXPECT_TRUE(genesis_from_json(good).ok());
}

}  // namespace
}  // namespace cowboy::devchain
