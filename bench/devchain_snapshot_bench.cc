// The provider snapshot a broker reads every cbqs.snapshot_refresh_ms, for a
// provider with 1,000 streams (1,000 owners, one stream each): in process, and
// over the HTTP API (JSON + hex records, one connection per call).
//   build/bin/devchain_snapshot_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <filesystem>

#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "devchain/http_client.h"
#include "devchain/http_server.h"
#include "devchain/node.h"

using namespace cowboy;
using namespace cowboy::devchain;

namespace {

crypto::Secp256k1Secret secret(std::uint32_t n) {
  crypto::Secp256k1Secret s{};
  s[28] = static_cast<std::uint8_t>(n >> 24);
  s[29] = static_cast<std::uint8_t>(n >> 16);
  s[30] = static_cast<std::uint8_t>(n >> 8);
  s[31] = static_cast<std::uint8_t>(n);
  return s;
}

struct Chain {
  std::filesystem::path dir;
  std::unique_ptr<Node> node;
  std::unique_ptr<HttpServer> server;
  Address provider;

  explicit Chain(int streams) {
    dir = std::filesystem::temp_directory_path() / ("devchain-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    Address admin = *crypto::secp256k1_address(secret(1));
    GenesisSpec genesis{"bench", admin, {{admin, u128{1} << 100}}, {}, std::nullopt};
    node = *Node::open(NodeConfig{dir, std::chrono::milliseconds(1000), 100'000, 100'000}, genesis);
    Bytes32 chain_id = *node->chain_instance_id();
    std::map<Address, std::uint64_t> nonces;
    auto submit = [&](std::uint32_t key, TxBody body) {
      Address a = *crypto::secp256k1_address(secret(key));
      Transaction tx{chain_id, nonces[a]++, std::move(body), {}};
      sign_tx(tx, secret(key));
      if (!node->submit(tx)) std::abort();
    };
    provider = *crypto::secp256k1_address(secret(2));
    submit(1, Transfer{provider, u128{100'000'000'000}});
    if (!node->produce_block()) std::abort();
    crypto::Ed25519Seed seed{};
    cbqs::RegisterProviderV2 reg{cbqs::ed25519_public_key(seed), {Bytes{'w', 's', 's', ':', '/', '/', 'p'}}, 1'000'000, true, {}};
    submit(2, CbqsCall{cbqs::encode(cbqs::CbqsInstructionV2{reg})});
    for (int i = 0; i < streams; ++i) submit(1, Transfer{*crypto::secp256k1_address(secret(1000 + i)), u128{100'000'000'000}});
    if (!node->produce_block()) std::abort();
    for (int i = 0; i < streams; ++i) {
      Address owner = *crypto::secp256k1_address(secret(1000 + i));
      submit(1000 + i, CbqsCall{cbqs::encode(cbqs::CbqsInstructionV2{cbqs::TopUpAccountV2{owner, provider, 10'000'000'000}})});
      submit(1000 + i, CbqsCall{cbqs::encode(cbqs::CbqsInstructionV2{cbqs::CreateStreamV2{0, provider, cbqs::ed25519_public_key(seed)}})});
    }
    if (!node->produce_block()) std::abort();
    if (node->provider_snapshot(provider)->streams.size() != static_cast<std::size_t>(streams)) std::abort();
    server = std::make_unique<HttpServer>(*node, "127.0.0.1", 0);
    server->start();
  }
  ~Chain() {
    server->stop();
    node.reset();
    std::filesystem::remove_all(dir);
  }
};

Chain& chain() {
  static Chain c(1'000);
  return c;
}

void BM_SnapshotInProcess(benchmark::State& state) {
  auto& c = chain();
  for (auto _ : state) benchmark::DoNotOptimize(c.node->provider_snapshot(c.provider));
}
BENCHMARK(BM_SnapshotInProcess)->Unit(benchmark::kMillisecond);

void BM_SnapshotOverHttp(benchmark::State& state) {
  auto& c = chain();
  HttpClient client("127.0.0.1", c.server->port());
  for (auto _ : state) {
    auto s = client.provider_snapshot(c.provider);
    if (!s || s->streams.size() != 1'000) state.SkipWithError("bad snapshot");
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SnapshotOverHttp)->Unit(benchmark::kMillisecond);

}  // namespace
