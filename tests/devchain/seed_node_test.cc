// The devchain's round seeds through a Node (docs/cip11.md choice 65): each
// block carries its round's ECVRF proof, the seeds are replayed from the stored
// blocks at open, and a stored proof that does not verify refuses the store.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <nlohmann/json.hpp>

#include "../cip11/chain_harness.h"
#include "../support/temp_dir.h"
#include "cip11/chain/seed.h"
#include "devchain/json.h"
#include "devchain/block.h"
#include "devchain/fork.h"
#include "devchain/layout.h"
#include "devchain/node.h"
#include "scenario.h"

namespace cowboy::devchain {
namespace {

namespace chain = cip11::chain;
namespace vrf = crypto::ecvrf;

crypto::Ed25519Seed validator_seed(std::uint8_t n) {
  crypto::Ed25519Seed s{};
  s.fill(n);
  return s;
}

struct SeedNodeFixture : ::testing::Test {
  cowboy::testing::TempDir dir;
  const crypto::Ed25519Seed producer = validator_seed(7);

  std::vector<chain::testing::Key> runners{chain::testing::key(1), chain::testing::key(2)};
  chain::testing::Key submitter = chain::testing::key(9);

  GenesisSpec genesis() const {
    GenesisSpec g = testing::genesis_for(testing::secret(1));
    for (const auto& k : runners) g.balances.emplace_back(k.address, 1'000'000);
    g.balances.emplace_back(submitter.address, 1'000'000);
    Cip11Genesis c;
    c.params.chain_id = 7;
    c.params.present_first_enabled = true;
    c.params.multi_validator = true;  // as the stored genesis reads back (two validators): Node::open compares them
    c.finality_depth = 4;  // K = F + 1: the genesis §9.2 invariant (docs/cip11.md choice 157)
    c.params.selection_seed_delay_views = 5;
    c.validators.push_back({crypto::ed25519_from_seed(producer).public_key, "127.0.0.1:7443"});
    c.validators.push_back({crypto::ed25519_from_seed(validator_seed(8)).public_key, "127.0.0.1:7444"});
    g.cip11 = c;
    return g;
  }
  Result<std::unique_ptr<Node>, std::string> open(std::optional<crypto::Ed25519Seed> key) {
    NodeConfig c{dir.path() / "chain", std::chrono::milliseconds(5)};
    c.validator_key = key;
    return Node::open(c, genesis());
  }
  std::unique_ptr<Node> open_ok(std::optional<crypto::Ed25519Seed> key) {
    auto node = open(key);
    EXPECT_TRUE(node.ok()) << (node.ok() ? "" : node.error());
    return node.ok() ? std::move(*node) : nullptr;
  }
  /// Edits stored block h's JSON (the node closed).
  void edit_block(std::uint64_t h, const std::function<void(nlohmann::json&)>& edit) {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), (dir.path() / "chain" / "chain.rocksdb").string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value;
    ASSERT_TRUE(db->Get({}, layout::block_key(h), &value).ok());
    auto block = nlohmann::json::parse(value);
    edit(block);
    ASSERT_TRUE(db->Put({}, layout::block_key(h), block.dump()).ok());
  }
  /// Edits stored block h as signed (the node closed): its seed_evidence is
  /// what the replay at open reads.
  void edit_signed_block(std::uint64_t h, const std::function<void(Block&)>& edit) {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), (dir.path() / "chain" / "chain.rocksdb").string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value;
    ASSERT_TRUE(db->Get({}, layout::chain_block_key(h), &value).ok());
    auto sealed = decode_signed_block(as_bytes(value));
    ASSERT_TRUE(sealed.ok());
    edit(sealed->block);
    ASSERT_TRUE(db->Put({}, layout::chain_block_key(h), std::string(layout::as_sv(encode_signed_block(*sealed)))).ok());
  }
  /// Replaces block h's stored proof where the replay reads it and in its
  /// record's copy alike (none: erased from both).
  void set_proof(std::uint64_t h, const std::optional<Bytes>& proof) {
    edit_signed_block(h, [&](Block& b) { b.seed_evidence = proof.value_or(Bytes{}); });
    edit_block(h, [&](nlohmann::json& block) {
      if (proof)
        block["seed_proof"] = json::hex0x(*proof);
      else
        block.erase("seed_proof");
    });
  }
  static Bytes bytes_of(const vrf::Proof& p) { return Bytes(p.begin(), p.end()); }
  /// Submits `instruction` signed by `k` and produces a block.
  static TxReceipt run(Node& node, const chain::testing::Key& k, const chain::Instruction& instruction) {
    Transaction tx{*node.chain_instance_id(), node.account_info(k.address)->next_nonce,
                   Cip11Call{chain::encode_instruction(instruction)}, {}};
    EXPECT_TRUE(sign_tx(tx, k.secret));
    auto hash = node.submit(tx);
    EXPECT_TRUE(hash.ok());
    EXPECT_TRUE(node.produce_block().ok());
    return **node.receipt(*hash);
  }
  std::optional<vrf::Proof> stored_proof(std::uint64_t h) {
    std::optional<vrf::Proof> out;
    edit_block(h, [&](nlohmann::json& block) {
      if (block.contains("seed_proof")) out = fixed_from_hex<80>(block["seed_proof"].get<std::string>());
    });
    return out;
  }
};

TEST_F(SeedNodeFixture, EachBlockCarriesItsRoundsProofChainedOnThePreviousSeed) {
  auto node = open_ok(producer);
  const Bytes32 chain_id = *node->chain_instance_id();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(node->produce_block().ok());
  const vrf::PublicKey leader = crypto::ed25519_from_seed(producer).public_key;
  std::vector<chain::RoundSeed> seen;
  for (std::uint64_t h = 0; h <= 4; ++h) seen.push_back(*node->round_seed(cip11::View{h}));
  node.reset();
  EXPECT_EQ(seen[0], (chain::RoundSeed{chain::devchain_round(cip11::View{0}), std::nullopt, chain::genesis_seed(chain_id)}));
  for (std::uint64_t h = 1; h <= 4; ++h) {
    auto proof = stored_proof(h);
    ASSERT_TRUE(proof) << h;
    auto checked = chain::verify_round_seed(leader, chain_id, chain::devchain_round(cip11::View{h}), seen[h - 1].output, *proof);
    ASSERT_TRUE(checked.ok()) << h;
    EXPECT_EQ(*checked, seen[h]);
  }
  // A restart replays the same seeds from the stored proofs alone.
  node = open_ok(producer);
  for (std::uint64_t h = 0; h <= 4; ++h) EXPECT_EQ(*node->round_seed(cip11::View{h}), seen[h]) << h;
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_TRUE(node->round_seed(cip11::View{5})->proof.has_value());
}

TEST_F(SeedNodeFixture, ATamperedStoredProofRefusesTheStore) {
  { auto node = open_ok(producer); for (int i = 0; i < 4; ++i) ASSERT_TRUE(node->produce_block().ok()); }
  const auto good = *stored_proof(3);
  vrf::Proof bad = good;
  bad[40] ^= 0x01;  // the challenge
  set_proof(3, bytes_of(bad));
  auto refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 3's seed proof is refused"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("proof does not verify"), std::string::npos) << refused.error();
  set_proof(3, Bytes{0x00});
  refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 3's seed: seed_proof: proof not 80 bytes"), std::string::npos)
      << refused.error();
  edit_block(3, [&](nlohmann::json& block) { block["seed_proof"] = json::hex0x(good); });  // the record alone
  refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 3's seed: seed_evidence: proof not 80 bytes"), std::string::npos)
      << refused.error();
  set_proof(3, bytes_of(good));
  EXPECT_TRUE(open(producer).ok());
}

TEST_F(SeedNodeFixture, ARestartReplaysOnlyTheLastRoundsOnTheOutputStoredBeforeThem) {
  constexpr std::uint64_t kBlocks = 1100;  // past the 1,024 rounds a restart replays
  std::optional<chain::RoundSeed> last;
  {
    auto node = open_ok(producer);
    for (std::uint64_t h = 0; h < kBlocks; ++h) ASSERT_TRUE(node->produce_block().ok());
    last = node->round_seed(cip11::View{kBlocks});
    ASSERT_TRUE(last && last->proof);
  }
  vrf::Proof early = *stored_proof(2);
  early[40] ^= 0x01;
  set_proof(2, bytes_of(early));
  {
    // Block 2 is below the floor: the restart starts from block 75's stored output and never reads it.
    auto node = open_ok(producer);
    ASSERT_TRUE(node);
    EXPECT_EQ(node->round_seed(cip11::View{kBlocks}), last);
    EXPECT_FALSE(node->round_seed(cip11::View{2}).has_value());
    ASSERT_TRUE(node->produce_block().ok());
    EXPECT_TRUE(node->round_seed(cip11::View{kBlocks + 1})->proof.has_value());
  }
  // A block above the floor is still replayed, and its proof still checked.
  vrf::Proof recent = *stored_proof(kBlocks - 10);
  recent[40] ^= 0x01;
  set_proof(kBlocks - 10, bytes_of(recent));
  auto refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 1090's seed proof is refused"), std::string::npos) << refused.error();
}

TEST_F(SeedNodeFixture, AnotherValidatorsProofForTheRoundIsRefused) {
  Bytes32 chain_id{};
  chain::SeedOutput previous{};
  {
    auto node = open_ok(producer);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(node->produce_block().ok());
    chain_id = *node->chain_instance_id();
    previous = node->round_seed(cip11::View{1})->output;
  }
  // Validator 1's proof over exactly the right message: not the round's leader.
  const auto other = chain::prove_round_seed(validator_seed(8), chain_id, chain::devchain_round(cip11::View{2}), previous);
  set_proof(2, bytes_of(*other.proof));
  auto refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 2's seed proof is refused"), std::string::npos) << refused.error();
}

TEST_F(SeedNodeFixture, DroppingAProofChangesThatSeedSoEveryLaterProofFails) {
  { auto node = open_ok(producer); for (int i = 0; i < 4; ++i) ASSERT_TRUE(node->produce_block().ok()); }
  set_proof(2, std::nullopt);  // round 2 now derived
  auto refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 3's seed proof is refused"), std::string::npos) << refused.error();
}

// The replay reads each proof from the signed block's seed_evidence, the
// bytes under its digest, not from the record's copy: a copy that differs
// refuses the store, even where the copy alone would replay (choice 101).
TEST_F(SeedNodeFixture, TheReplayReadsTheSignedBlocksEvidenceAndRefusesARecordThatDiffers) {
  { auto node = open_ok(producer); for (int i = 0; i < 4; ++i) ASSERT_TRUE(node->produce_block().ok()); }
  const vrf::Proof good = *stored_proof(4);
  // The last block's evidence says it carried no proof; its record still
  // holds the proof, which verifies: only the comparison refuses this store.
  edit_signed_block(4, [](Block& b) { b.seed_evidence.clear(); });  // the evidence says: no proof
  auto refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 4's seed: the record's seed_proof differs from the signed block's seed_evidence"),
            std::string::npos)
      << refused.error();
  // The other way: the record lost its copy, the signed block holds the proof.
  edit_signed_block(4, [&](Block& b) { b.seed_evidence = bytes_of(good); });
  edit_block(4, [](nlohmann::json& block) { block.erase("seed_proof"); });
  refused = open(producer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("block 4's seed: the record's seed_proof differs"), std::string::npos)
      << refused.error();
  edit_block(4, [&](nlohmann::json& block) { block["seed_proof"] = json::hex0x(good); });
  auto node = open_ok(producer);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->round_seed(cip11::View{4})->proof, good);
}

TEST_F(SeedNodeFixture, AConsumedSeedThatIsNotItsRoundsRefusesTheStore) {
  std::uint64_t pass = 0;
  {
    auto node = open_ok(producer);
    for (const auto& k : runners) ASSERT_TRUE(run(*node, k, chain::testing::registration(k)).ok());
    // M = 2: waits for its seed round and for S to be final (two validators, choice 153)
    auto submitted = run(*node, submitter, chain::testing::job(2, 20 + kMaxRollbackDepth));
    ASSERT_TRUE(submitted.ok() && submitted.job_id);
    while (node->job(*submitted.job_id)->state == chain::JobState::kPendingSelection) {
      auto h = node->produce_block();
      ASSERT_TRUE(h.ok());
      pass = *h;
    }
  }
  nlohmann::json entry;
  edit_block(pass, [&](nlohmann::json& block) { entry = block["consumed_seeds"].at(0); });
  EXPECT_EQ(entry["evidence"].get<std::string>().size(), 2 + 2 * vrf::kProofSize);  // the round's proof
  EXPECT_TRUE(open(producer).ok());
  for (const char* field : {"signature", "evidence"}) {
    edit_block(pass, [&](nlohmann::json& block) {
      std::string hex = entry[field].get<std::string>();
      hex[10] = hex[10] == '0' ? '1' : '0';
      block["consumed_seeds"][0][field] = hex;
    });
    auto refused = open(producer);
    ASSERT_FALSE(refused.ok()) << field;
    EXPECT_NE(refused.error().find("block " + std::to_string(pass) + "'s consumed seeds are refused"),
              std::string::npos)
        << refused.error();
    edit_block(pass, [&](nlohmann::json& block) { block["consumed_seeds"][0] = entry; });
  }
  // What a store of the former keccak dev beacon holds: 48-byte seeds, no evidence.
  edit_block(pass, [&](nlohmann::json& block) {
    block["consumed_seeds"][0]["signature"] = json::hex0x(Bytes(48, 7));
    block["consumed_seeds"][0].erase("evidence");
  });
  auto old = open(producer);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().find("consumed a seed of the former dev beacon"), std::string::npos) << old.error();
  edit_block(pass, [&](nlohmann::json& block) { block["consumed_seeds"][0] = entry; });
  EXPECT_TRUE(open(producer).ok());
}

TEST_F(SeedNodeFixture, OnlyValidatorZerosKeyMayProduce) {
  auto refused = open(validator_seed(8));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("not validator 0"), std::string::npos) << refused.error();
}

TEST_F(SeedNodeFixture, WithoutAKeyEachRoundsSeedIsDerivedByEveryone) {
  auto node = open_ok(std::nullopt);
  const Bytes32 chain_id = *node->chain_instance_id();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(node->produce_block().ok());
  chain::SeedOutput expected = chain::genesis_seed(chain_id);
  for (std::uint64_t h = 1; h <= 3; ++h) {
    expected = chain::nullified_seed(chain_id, chain::devchain_round(cip11::View{h}), expected);
    EXPECT_EQ(*node->round_seed(cip11::View{h}), (chain::RoundSeed{chain::devchain_round(cip11::View{h}), std::nullopt, expected})) << h;
  }
  node.reset();
  EXPECT_FALSE(stored_proof(2).has_value());
  // The producer's key later: its blocks carry proofs from there on.
  node = open_ok(producer);
  ASSERT_TRUE(node->produce_block().ok());
  EXPECT_TRUE(node->round_seed(cip11::View{4})->proof.has_value());
}

}  // namespace
}  // namespace cowboy::devchain
