// Four validators of one devchain as four `cip11d --genesis` processes over
// 127.0.0.1 (docs/devchain.md "Several validators"), and runner processes
// registered in their genesis: the fixture of chain_validators_test.cc and
// scale_test.cc. Waits are on conditions with generous deadlines.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <thread>

#include "../support/cip11_processes.h"
#include "../support/poll.h"
#include "../support/ports.h"
#include "../support/temp_dir.h"
#include "chain_harness.h"
#include "cip11/chain/consumed_seeds.h"
#include "cip11/chain/seed.h"
#include "cip11/presence.h"
#include "cip11/presence_gossip.h"
#include "cip11/subset.h"
#include "devchain/keyfile.h"
#include "devchain/genesis.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "devchain/validator_set_tx.h"
#include "devchain/wallet.h"

namespace cowboy::cip11::testing {

using namespace std::chrono_literals;
using cowboy::testing::ChildProcess;
using cowboy::testing::RunnerProcess;
using cowboy::testing::eventually;

constexpr std::size_t kValidators = 4;

/// `cip11d --genesis` for validator `i` (index into the genesis list, not the canonical order).
class ValidatorProcess {
 public:
  ValidatorProcess(const std::filesystem::path& data, const std::filesystem::path& genesis,
                   const std::filesystem::path& key, const std::filesystem::path& vrf_key, std::uint16_t chain_port,
                   std::vector<std::string> peers, int view_timeout_ms = 500, std::vector<std::string> extra = {})
      : child_([&] {
          std::string joined;
          for (const auto& p : peers) joined += (joined.empty() ? "" : ",") + p;
          std::vector<std::string> args{std::string(COWBOY_BIN_DIR) + "/cip11d", "--data-dir", data.string(),
                                        "--genesis", genesis.string(), "--key", key.string(),
                                        "--vrf-key", vrf_key.string(), "--peers", joined,
                                        "--chain-listen", "127.0.0.1:" + std::to_string(chain_port),
                                        "--admin-listen", "127.0.0.1:0", "--block-ms", "100",
                                        "--view-timeout-ms", std::to_string(view_timeout_ms)};
          args.insert(args.end(), extra.begin(), extra.end());
          return args;
        }()) {
    auto line = child_.wait_for_line("cip11d listening on quic://", 30s);
    admin_port_ = cowboy::testing::port_in(line, R"(admin http://127\.0\.0\.1:(\d+))");
  }
  bool up() const { return admin_port_ != 0; }
  std::uint16_t admin_port() const { return admin_port_; }
  std::optional<double> metric(const std::string& series) const { return metric_at(admin_port_, series); }
  void kill9() { child_.kill(SIGKILL); }

  /// The /metrics line at `admin_port` of the series with exactly these labels, e.g. `x{reason="A"}`; nullopt when absent.
  static std::optional<double> metric_at(std::uint16_t admin_port, const std::string& series) {
    devchain::HttpClient admin("127.0.0.1", admin_port);
    auto text = admin.get_text("/metrics");
    if (!text) return std::nullopt;
    auto at = text->body.find("\n" + series + " ");
    if (at == std::string::npos) return std::nullopt;
    return std::stod(text->body.substr(at + series.size() + 2));
  }

 private:
  ChildProcess child_;
  std::uint16_t admin_port_ = 0;
};

/// `cip11d --follow`: a follower of the validators' chain (docs/devchain.md
/// D14), no key, its chain API on `chain_port`, asking `peers` for blocks.
class FollowerProcess {
 public:
  FollowerProcess(const std::filesystem::path& data, const std::filesystem::path& genesis, std::uint16_t chain_port,
                  const std::vector<std::string>& peers)
      : child_([&] {
          std::string joined;
          for (const auto& p : peers) joined += (joined.empty() ? "" : ",") + p;
          return std::vector<std::string>{std::string(COWBOY_BIN_DIR) + "/cip11d", "--follow", "--data-dir",
                                          data.string(), "--genesis", genesis.string(), "--peers", joined,
                                          "--chain-listen", "127.0.0.1:" + std::to_string(chain_port),
                                          "--admin-listen", "127.0.0.1:0", "--block-ms", "100"};
        }()) {
    auto line = child_.wait_for_line("cip11d following with no key", 30s);
    admin_port_ = cowboy::testing::port_in(line, R"(admin http://127\.0\.0\.1:(\d+))");
  }
  bool up() const { return admin_port_ != 0; }
  std::optional<double> metric(const std::string& series) const {
    return ValidatorProcess::metric_at(admin_port_, series);
  }
  void kill9() { child_.kill(SIGKILL); }

 private:
  ChildProcess child_;
  std::uint16_t admin_port_ = 0;
};

struct Cip11Validators : ::testing::Test {
  cowboy::testing::TempDir dir;
  std::vector<crypto::Ed25519Seed> seeds;  // genesis order
  std::vector<crypto::ecvrf::PublicKey> vrf_keys;  // genesis order: each validator's genesis vrf_key
  std::vector<std::uint16_t> chain_ports;
  std::vector<std::unique_ptr<ValidatorProcess>> processes;
  std::vector<crypto::Ed25519Public> canonical;
  std::vector<std::string> endpoints;  // each validator's QUIC host:port, genesis order
  crypto::Secp256k1Secret submitter{};
  std::filesystem::path genesis_path;
  std::size_t runner_count = 0;  // runners registered at genesis, each excluding one validator from its Sub(R)
  // A view with no block after this long passes to the next leader. A block
  // later than that forks one height, which is resolved (docs/devchain.md
  // D11); a suite that loads the machine (many runner processes) still gives a
  // block longer to arrive.
  int view_timeout_ms = 500;
  static constexpr std::uint64_t kFinalityDepth = 4, kSeedDelay = kFinalityDepth + 1;  // the genesis F and K
  std::vector<chain::testing::Key> runner_keys;
  std::vector<std::size_t> excluded;  // by runner: the validator (genesis order) its Sub(R) leaves out
  std::vector<std::string> more_peers;  // chain APIs beyond the genesis validators' (one that joins later)

  void SetUp() override {
    crypto::init();
    submitter[31] = 0x77;
    devchain::GenesisSpec g;
    g.chain_name = "four-validators";
    g.governance_admin = *crypto::secp256k1_address(submitter);
    g.balances.emplace_back(g.governance_admin, u128{1'000'000'000});
    std::filesystem::create_directories(dir.path() / "keys");
    std::filesystem::create_directories(dir.path() / "v");
    devchain::Cip11Genesis c;
    c.params.chain_id = 11;
    c.params.transport_enabled = true;
    c.params.present_first_enabled = true;
    c.params.multi_validator = true;  // as the genesis JSON derives it
    // Final 4 blocks deep, K = F + 1 (docs/cip11.md choice 156): a block
    // held past a view timeout forks one height, two under load (scale_test.cc),
    // and a fork deeper than F would stall a validator; 4 leaves that margin
    // and keeps an M > 1 job's wait for its committee's push short.
    c.finality_depth = kFinalityDepth;
    c.params.selection_seed_delay_views = kSeedDelay;
    chain_ports = cowboy::testing::free_ports(SOCK_STREAM, kValidators);
    const auto quic_ports = cowboy::testing::free_ports(SOCK_DGRAM, kValidators);
    for (std::size_t i = 0; i < kValidators; ++i) {
      auto seed = load_or_create_secret(key_path(i));
      ASSERT_TRUE(seed.ok());
      seeds.push_back(*seed);
      // Each its own ECVRF key, apart from its peer key (docs/cip11.md choice 100).
      auto vrf = load_or_create_secret(vrf_key_path(i));
      ASSERT_TRUE(vrf.ok());
      vrf_keys.push_back(crypto::ecvrf::keypair_from_seed(*vrf).public_key);
      c.validators.push_back({crypto::ed25519_from_seed(*seed).public_key, "127.0.0.1:" + std::to_string(quic_ports[i]),
                              vrf_keys.back()});
      endpoints.push_back(c.validators.back().endpoint);
    }
    configure(c);
    canonical = devchain::canonical_validator_keys(c);
    // Runners chosen so that every validator is left out of as many subsets
    // (k = 3 of 4), so every proposer has runners only its peers hold.
    const auto snapshot = devchain::validator_peer_keys(c);
    std::vector<std::size_t> per_validator(kValidators, 0);
    for (std::uint8_t n = 1; runner_keys.size() < runner_count; ++n) {
      ASSERT_NE(n, 0) << "no balanced runner keys";
      auto k = chain::testing::key(n);
      auto sub = subset_of(k.pub, snapshot, c.params.subset);
      ASSERT_EQ(sub.size(), kValidators - 1);
      std::size_t out = 0;
      while (std::find(sub.begin(), sub.end(), out) != sub.end()) ++out;
      if (per_validator[out] >= runner_count / kValidators) continue;
      ++per_validator[out];
      runner_keys.push_back(k);
      excluded.push_back(out);
      c.runners.push_back(chain::testing::registration(k));
    }
    g.cip11 = c;
    genesis_path = dir.path() / "genesis.json";
    std::ofstream(genesis_path) << devchain::genesis_to_json(g).dump();
    for (std::size_t i = 0; i < kValidators; ++i) processes.push_back(start(i));
    for (auto& p : processes) ASSERT_TRUE(p->up());
  }

  /// Registers `n` runners (kind Custom) in `c` with keys in dir/runners/<i>.key, created here.
  std::vector<crypto::Secp256k1Secret> register_runners(devchain::Cip11Genesis& c, std::size_t n) {
    std::filesystem::create_directories(dir.path() / "runners");
    std::vector<crypto::Secp256k1Secret> keys;
    for (std::size_t i = 0; i < n; ++i) {
      auto key = devchain::load_or_create_key(dir.path() / "runners" / (std::to_string(i) + ".key"));
      EXPECT_TRUE(key.ok());
      if (!key) return keys;
      keys.push_back(*key);
      c.runners.push_back({*crypto::secp256k1_public_key(*key), 1000,
                           1u << static_cast<unsigned>(JobKind::kCustom), {}, 2, 0});
    }
    return keys;
  }
  /// Schedules ValidatorSetSnapshot(1) at `activation` in `c`: every genesis
  /// validator but `leaving`, with an overlap window of `overlap` blocks.
  static void schedule_without(devchain::Cip11Genesis& c, std::size_t leaving, std::uint64_t activation,
                               std::uint64_t overlap) {
    chain::ValidatorSetChange change{Height{activation}, {}};
    for (std::size_t i = 0; i < c.validators.size(); ++i)
      if (i != leaving) change.peer_keys.push_back(c.validators[i].peer_key);
    std::sort(change.peer_keys.begin(), change.peer_keys.end());
    c.validator_set_changes.push_back(change);
    c.overlap_blocks = overlap;
  }

  /// A subclass's additions to the CIP-11 genesis (runners, a validator-set schedule).
  virtual void configure(devchain::Cip11Genesis&) {}
  /// A subclass's further flags for validator `i` (genesis order), e.g. a test hook.
  virtual std::vector<std::string> extra_args(std::size_t) const { return {}; }

  std::unique_ptr<ValidatorProcess> start(std::size_t i) {
    std::vector<std::string> peers;
    for (std::size_t j = 0; j < kValidators; ++j)
      if (j != i) peers.push_back(url(j));
    peers.insert(peers.end(), more_peers.begin(), more_peers.end());
    return std::make_unique<ValidatorProcess>(dir.path() / "v" / std::to_string(i), genesis_path,
                                              key_path(i), vrf_key_path(i), chain_ports[i],
                                              peers, view_timeout_ms, extra_args(i));
  }
  /// A fifth validator no genesis names, following the chain: `cip11d
  /// --genesis` with keys of its own (dir/keys/fifth, vrf-fifth), --listen
  /// on `quic_port` (where its change will say), its chain API on
  /// `chain_port` and --peers the four genesis validators' (index 4 of
  /// processes and chain_ports). Its entry for a change; with
  /// `name_chain_api` the entry names that API (docs/cip11.md choice 130).
  chain::ValidatorEntry start_fifth(std::uint16_t quic_port, std::uint16_t chain_port, bool name_chain_api) {
    auto seed = load_or_create_secret(dir.path() / "keys" / "fifth");
    auto vrf = load_or_create_secret(dir.path() / "keys" / "vrf-fifth");
    EXPECT_TRUE(seed.ok() && vrf.ok());
    if (!seed || !vrf) return {};
    chain::ValidatorEntry entry{crypto::ed25519_from_seed(*seed).public_key,
                                "127.0.0.1:" + std::to_string(quic_port),
                                crypto::ecvrf::keypair_from_seed(*vrf).public_key,
                                name_chain_api ? "127.0.0.1:" + std::to_string(chain_port) : ""};
    std::vector<std::string> peers;
    for (std::size_t i = 0; i < kValidators; ++i) peers.push_back(url(i));
    chain_ports.push_back(chain_port);
    processes.push_back(std::make_unique<ValidatorProcess>(
        dir.path() / "v" / "fifth", genesis_path, dir.path() / "keys" / "fifth", dir.path() / "keys" / "vrf-fifth",
        chain_port, peers, view_timeout_ms, std::vector<std::string>{"--listen", entry.endpoint}));
    return entry;
  }
  /// Sends `change` as the governance admin through validator 0 and waits for
  /// its receipt; `included` is the height that took it. A change must be
  /// included a full overlap before it activates (its lead).
  void schedule(const devchain::ScheduleValidatorSet& change, std::uint64_t overlap, std::uint64_t& included) {
    auto api = chain(0);
    devchain::Wallet admin(api, submitter);
    auto receipt = admin.send_and_wait(devchain::ValidatorSetCall{devchain::encode_schedule_validator_set(change)});
    ASSERT_TRUE(receipt.ok()) << receipt.error().message;
    ASSERT_TRUE(receipt->ok()) << *receipt->error;
    included = receipt->height;
    ASSERT_LE(included + overlap, change.activation_height) << "the chain ran past the lead; raise the activation";
  }
  std::filesystem::path key_path(std::size_t i) const { return dir.path() / "keys" / std::to_string(i); }
  std::filesystem::path vrf_key_path(std::size_t i) const { return dir.path() / "keys" / ("vrf-" + std::to_string(i)); }
  /// `cip11-runner` for runner `r`, reading the chain through validator `via`'s API (default `r mod 4`).
  std::unique_ptr<RunnerProcess> start_runner(std::size_t r, std::optional<std::size_t> via = std::nullopt) {
    const auto key = dir.path() / "keys" / ("runner-" + std::to_string(r));
    std::ofstream(key) << to_hex(runner_keys[r].secret) << "\n";
    std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return std::make_unique<RunnerProcess>(std::vector<std::string>{
        "--chain-url", url(via.value_or(r % kValidators)), "--key", key.string(), "--state-dir",
        (dir.path() / ("runner-" + std::to_string(r) + "-state")).string(), "--block-ms", "100"});
  }
  std::string url(std::size_t i) const { return "http://127.0.0.1:" + std::to_string(chain_ports[i]); }
  devchain::HttpClient chain(std::size_t i) const { return devchain::HttpClient("127.0.0.1", chain_ports[i], 2s); }
  std::uint64_t height(std::size_t i) const {
    auto h = chain(i).chain_head();
    return h ? h->height : 0;
  }
  /// Validator `i`'s canonical index (what blocks name as proposer).
  std::uint32_t index_of(std::size_t i) const {
    auto pub = crypto::ed25519_from_seed(seeds[i]).public_key;
    return static_cast<std::uint32_t>(std::find(canonical.begin(), canonical.end(), pub) - canonical.begin());
  }
  const crypto::Ed25519Seed& seed_of_index(std::uint32_t index) const {
    for (std::size_t i = 0; i < kValidators; ++i)
      if (index_of(i) == index) return seeds[i];
    throw std::logic_error("no such validator");
  }
  /// A block forged one way, sealed by `key` (docs/cip11.md choice 76): the
  /// refusal every node names for it (docs/devchain.md D4).
  struct Forgery {
    const char* reason;
    std::function<void(devchain::SignedBlock&, const crypto::Ed25519Seed&)> forge;
  };
  static std::vector<Forgery> forgeries() {
    return {
        {"BadPresence",  // a bit past the registry (it is empty): decoded from the literal bytes, refused
         [](devchain::SignedBlock& b, const crypto::Ed25519Seed& k) {
           b.block.presence = Bytes{0x01, 0x00, 0x01};
           b = devchain::seal_block(b.block, k);
         }},
        {"BadDigest",  // a valid presence field swapped in under the digest of another
         [](devchain::SignedBlock& b, const crypto::Ed25519Seed& k) {
           b = devchain::seal_block(b.block, k);
           b.block.presence = Bytes{0x01, 0x01, 0x00, 0x00, 0x00, 0x00};
         }},
        {"SeedsMismatch",  // a consumed seed no record consumed
         [](devchain::SignedBlock& b, const crypto::Ed25519Seed& k) {
           b.block.consumed_seeds =
               chain::encode_consumed_seeds({chain::ConsumedSeed{RoundEpoch{0}, View{1}, Bytes(48, 0xab)}});
           b = devchain::seal_block(b.block, k);
         }},
    };
  }
  /// Posts `f` to node `i` (a validator, or a follower past them) on its own
  /// head, sealed by the next view's leader (the view after when that is `i`
  /// itself), and answers the refusal's message ("" after a failure it
  /// reports). A head that moved meanwhile (NotNext, WrongParent, StaleView)
  /// is tried again, and so is a node busy with a block of its own, which
  /// answers Unavailable at once (docs/devchain.md D7; seen in CI).
  std::string refusal_of(std::size_t i, const Forgery& f) {
    std::string refused;
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto api = chain(i);
      auto head = api.chain_head();
      if (!head) {
        ADD_FAILURE() << f.reason << ": node " << i << "'s head: " << head.error().message;
        return "";
      }
      devchain::SignedBlock b;
      b.block.chain_instance_id = *api.chain_instance_id();
      b.block.height = head->height + 1;
      b.block.view = head->view + 1;
      b.block.proposer = devchain::leader_of(b.block.view, kValidators);
      if (i < kValidators && b.block.proposer == index_of(i))
        ++b.block.view, b.block.proposer = devchain::leader_of(b.block.view, kValidators);
      b.block.parent = head->digest;
      b.block.presence = encode_presence(PresentSet(0));
      b.block.consumed_seeds = chain::encode_consumed_seeds({});
      f.forge(b, seed_of_index(b.block.proposer));
      auto r = api.accept_block(b);
      if (r.ok()) {
        ADD_FAILURE() << f.reason << ": node " << i << " took the forged block";
        return "";
      }
      if (r.error().code == devchain::ApiErrorCode::kUnavailable) {
        std::this_thread::sleep_for(20ms);
        continue;
      }
      if (r.error().code != devchain::ApiErrorCode::kBlockRefused) {
        ADD_FAILURE() << f.reason << ": node " << i << " answered " << r.error().message;
        return "";
      }
      refused = r.error().message;
      if (!refused.starts_with("NotNext") && !refused.starts_with("WrongParent") && !refused.starts_with("StaleView"))
        break;
    }
    return refused;
  }
  /// The present set of block `h` as validator `i` holds it, over a registry
  /// of `registry` runners (default: those registered at genesis).
  std::optional<PresentSet> presence_at(std::size_t i, std::uint64_t h, std::optional<std::uint32_t> registry = {}) {
    auto b = chain(i).block_at(h);
    if (!b || !b->block.presence) return std::nullopt;
    auto set = decode_presence(*b->block.presence, registry.value_or(static_cast<std::uint32_t>(runner_count)));
    if (!set) return std::nullopt;
    return *set;
  }
  /// POSTs `bytes` as a presence view to validator `i`: the refusal's message, "" when kept, "not newer".
  std::string post_view(std::size_t i, const Bytes& bytes) {
    auto r = chain(i).post_presence_view(bytes);
    if (r) return *r ? "" : "not newer";
    EXPECT_EQ(r.error().code, devchain::ApiErrorCode::kViewRefused) << r.error().message;
    return r.error().message;
  }
  /// Every listed validator holds the same block at every height up to `to`,
  /// compared once `to` is final at each (F blocks above it): at the tip two
  /// validators may still hold the two sides of a fork the next blocks
  /// resolve (a block held past a view timeout, docs/devchain.md D11), and a
  /// final block is the one they must agree on (docs/cip11.md choice 156).
  void expect_same_blocks(const std::vector<std::size_t>& who, std::uint64_t to) {
    ASSERT_TRUE(eventually([&] { return all_at_least(who, to + kFinalityDepth); }, 60s))
        << "the validators did not reach block " << to << " + F";
    for (std::uint64_t h = 1; h <= to; ++h) {
      auto first = chain(who[0]).block_at(h);
      ASSERT_TRUE(first.ok()) << "height " << h;
      for (std::size_t i : who) {
        auto b = chain(i).block_at(h);
        ASSERT_TRUE(b.ok()) << "validator " << i << " height " << h;
        EXPECT_EQ(b->digest, first->digest) << "validator " << i << " height " << h;
      }
    }
  }
  bool all_at_least(const std::vector<std::size_t>& who, std::uint64_t h) const {
    return std::all_of(who.begin(), who.end(), [&](std::size_t i) { return height(i) >= h; });
  }
};

}  // namespace cowboy::cip11::testing
