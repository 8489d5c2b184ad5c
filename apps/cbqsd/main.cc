// cbqsd: the CBQS broker. The broker data plane (sessions, lanes, durable
// appends) is not built yet; until it is, `cbqsd --dev` runs the embedded
// registry plane through the path a dev deployment takes - genesis, provider
// registration, account top-up, stream creation, a grant - and prints what it
// derived, so the chain half of the embedded default can be seen working.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cbqs/chain/registry.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

using namespace cowboy;
using namespace cowboy::cbqs;

namespace {

int fail(const char* step, const Receipt& r) {
  std::fprintf(stderr, "cbqsd: %s rejected: %s\n", step, std::string(chain_error_name(*r.error)).c_str());
  return 1;
}

int run_dev() {
  crypto::init();
  std::array<std::uint8_t, 32> seed{};
  crypto::random_bytes(seed);
  Address owner{}, provider{};
  owner[0] = 0x0a;
  provider[0] = 0x0b;
  Genesis g;
  g.chain_instance_id = crypto::keccak256(as_bytes("cbqsd --dev"));
  g.balances = {{owner, u128{100'000'000'000}}, {provider, u128{100'000'000'000}}};
  auto state = make_genesis(g);
  if (!state) return 1;

  RegisterProviderV2 reg;
  reg.signing_key = ed25519_public_key(seed);
  reg.endpoints = {Bytes{'w', 's', 's', ':', '/', '/', 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't', '/'}};
  reg.max_streams = 16;
  reg.accepts_new = true;
  if (auto r = apply_instruction(*state, {provider, 1}, reg); !r.ok()) return fail("RegisterProviderV2", r);
  if (auto r = apply_instruction(*state, {owner, 2}, TopUpAccountV2{owner, provider, 10'000'000'000}); !r.ok())
    return fail("TopUpAccountV2", r);
  CreateStreamV2 create{0, provider, ed25519_public_key(seed)};
  if (auto r = apply_instruction(*state, {owner, 3}, create); !r.ok()) return fail("CreateStreamV2", r);

  Bytes32 sid = stream_id(g.chain_instance_id, owner, 0);
  const auto* account = state->account(owner, provider);
  std::printf("cbqsd --dev: embedded registry plane\n");
  std::printf("  chain_instance_id  %s\n", to_hex(g.chain_instance_id).c_str());
  std::printf("  provider           0x%s (registered at height 1)\n", to_hex(provider).c_str());
  std::printf("  stream_id          %s\n", to_hex(sid).c_str());
  std::printf("  account balance    %s nano-CBY, rate %s/block, solvent at height 4: %s\n",
              u128_to_string(account->balance).c_str(), u128_to_string(account->rate_per_block).c_str(),
              solvent(*account, 4) ? "yes" : "no");
  std::printf("The broker data plane (wss://) is not implemented yet; see docs/architecture.md.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cbqsd: the CBQS (CIP-39) broker"};
  bool dev = false;
  app.add_flag("--dev", dev, "embedded default: in-process devchain and dev credentials");
  CLI11_PARSE(app, argc, argv);
  if (!dev) {
    std::fprintf(stderr, "cbqsd: only --dev is available in this build\n");
    return 2;
  }
  return run_dev();
}
