// cbqsd: the CBQS broker. The broker data plane (wss sessions, lanes, durable
// appends) is not built yet. Until it is, `cbqsd --dev` brings up the embedded
// default's chain half: an in-process devchain (HTTP API on 127.0.0.1:7545), a
// funded dev owner, this provider registered with its keys, an account and one
// stream - then serves the chain until SIGINT/SIGTERM.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>

#include "cbqs/wire/ids.h"
#include "devchain/http_server.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"
#include "devchain/node.h"
#include "devchain/wallet.h"

using namespace cowboy;
using namespace cowboy::devchain;

namespace {

constexpr u128 kDevFunds = u128{1'000'000'000} * 1'000'000;  // 1,000,000 CBY
constexpr u128 kProviderFunds = u128{100'000'000'000};         // 100 CBY
constexpr u128 kAccountTopUp = u128{10'000'000'000};           // 10 CBY

int fail(const std::string& what) {
  std::fprintf(stderr, "cbqsd: %s\n", what.c_str());
  return 1;
}

std::string describe(const ApiResult<TxReceipt>& r) {
  if (!r) return std::string(api_error_name(r.error().code)) + ": " + r.error().message;
  return r->error.value_or("applied");
}

// Keys of the dev provider: its chain account (secp256k1) and its checkpoint
// signing key (Ed25519), both kept in the data directory with mode 0600.
struct ProviderKeys {
  crypto::Secp256k1Secret chain;
  crypto::Ed25519Seed signing;
};

Result<ProviderKeys, std::string> provider_keys(const std::filesystem::path& dir) {
  auto chain = load_or_create_key(dir / "provider-chain-key");
  if (!chain) return Err{chain.error()};
  auto signing = load_or_create_key(dir / "provider-signing-key");  // 32 random bytes serve as an Ed25519 seed
  if (!signing) return Err{signing.error()};
  return ProviderKeys{*chain, *signing};
}

int run_dev(const std::filesystem::path& data_dir, const std::string& chain_host, std::uint16_t chain_port) {
  crypto::init();
  auto dev_key = load_or_create_key(default_dev_key_path());
  if (!dev_key) return fail(dev_key.error());
  Address dev = *crypto::secp256k1_address(*dev_key);
  auto keys = provider_keys(data_dir);
  if (!keys) return fail(keys.error());

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  GenesisSpec genesis{"cbqsd-dev", dev, {{dev, kDevFunds}}, {}};
  auto node = Node::open(NodeConfig{data_dir / "chain", std::chrono::milliseconds(200)}, genesis);
  if (!node) return fail(node.error());
  (*node)->start();
  std::unique_ptr<HttpServer> server;
  try {
    server = std::make_unique<HttpServer>(**node, chain_host, chain_port);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  server->start();
  ChainApi& chain = **node;

  // Idempotent: a restart finds everything in place and creates nothing twice.
  Wallet owner(chain, *dev_key);
  Wallet provider(chain, keys->chain);
  if (!chain.provider(provider.address())) {
    auto funded = owner.send_and_wait(Transfer{provider.address(), kProviderFunds});
    if (!funded || !funded->ok()) return fail("funding the provider: " + describe(funded));
    std::string endpoint = "wss://127.0.0.1:7447/";
    cbqs::RegisterProviderV2 reg{cbqs::ed25519_public_key(keys->signing), {Bytes(endpoint.begin(), endpoint.end())},
                                 1'000, true, Bytes32{}};
    auto registered = provider.send_instruction(reg);
    if (!registered || !registered->ok()) return fail("registering the provider: " + describe(registered));
  }
  Bytes32 stream_id = cbqs::stream_id(*chain.chain_instance_id(), dev, 0);
  if (!chain.stream(stream_id)) {
    auto topped = owner.send_instruction(cbqs::TopUpAccountV2{dev, provider.address(), kAccountTopUp});
    if (!topped || !topped->ok()) return fail("topping up the account: " + describe(topped));
    auto created = owner.send_instruction(cbqs::CreateStreamV2{0, provider.address(), cbqs::ed25519_public_key(*dev_key)});
    if (!created || !created->ok()) return fail("creating the stream: " + describe(created));
  }

  auto account = chain.account(dev, provider.address());
  std::printf("cbqsd --dev: embedded devchain on http://%s:%u (data in %s)\n", chain_host.c_str(), server->port(),
              data_dir.c_str());
  std::printf("  chain_instance_id  %s\n", json::hex0x(*chain.chain_instance_id()).c_str());
  std::printf("  dev owner          %s (key %s)\n", json::hex0x(dev).c_str(), default_dev_key_path().c_str());
  std::printf("  provider           %s\n", json::hex0x(provider.address()).c_str());
  std::printf("  stream_id          %s\n", json::hex0x(stream_id).c_str());
  if (account)
    std::printf("  account balance    %s nano-CBY at %s/block\n", u128_to_string(account->balance).c_str(),
                u128_to_string(account->rate_per_block).c_str());
  std::printf("The wss:// broker data plane is not implemented yet; the chain runs until Ctrl-C.\n");
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  server->stop();
  (*node)->stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cbqsd: the CBQS (CIP-39) broker"};
  bool dev = false;
  std::string data_dir = "cbqsd-dev";
  std::string chain_host = "127.0.0.1";
  std::uint16_t chain_port = 7545;
  app.add_flag("--dev", dev, "embedded default: in-process devchain, dev keys, a registered provider and a stream");
  app.add_option("--data-dir", data_dir, "where --dev keeps its chain and keys")->capture_default_str();
  app.add_option("--chain-port", chain_port, "port of the embedded devchain's HTTP API (127.0.0.1)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!dev) {
    std::fprintf(stderr, "cbqsd: only --dev is available in this build\n");
    return 2;
  }
  return run_dev(data_dir, chain_host, chain_port);
}
