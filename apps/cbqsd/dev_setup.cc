#include "dev_setup.h"

#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/verbs.h"
#include "common/clock.h"
#include "devchain/keyfile.h"
#include "devchain/wallet.h"

namespace cowboy::cbqsd {

namespace {
constexpr u128 kProviderFunds = u128{100'000'000'000};  // 100 CBY
constexpr u128 kAccountTopUp = u128{10'000'000'000};    // 10 CBY

std::string describe(const devchain::ApiResult<devchain::TxReceipt>& r) {
  if (!r) return std::string(devchain::api_error_name(r.error().code)) + ": " + r.error().message;
  return r->error.value_or("applied");
}
}  // namespace

Result<DevDeployment, std::string> deploy_dev(devchain::ChainApi& chain, const std::filesystem::path& dir,
                                              std::uint16_t wss_port) {
  using namespace devchain;
  auto dev_key = load_or_create_key(default_dev_key_path());
  auto provider_chain_key = load_or_create_key(dir / "provider-chain-key");
  auto provider_signing = load_or_create_secret(dir / "provider-signing-key");
  auto stream_admin = load_or_create_secret(dir / "stream-admin-key");
  auto holder = load_or_create_secret(dir / "dev-holder-key");
  for (const auto* k : {&dev_key, &provider_chain_key, &provider_signing, &stream_admin, &holder})
    if (!*k) return Err{k->error()};

  Wallet owner(chain, *dev_key), provider(chain, *provider_chain_key);
  DevDeployment d;
  d.provider.address = provider.address();
  d.provider.signing_seed = *provider_signing;
  d.owner = owner.address();
  // The dev key governs the dev chain: it lifts the two per-stream rate
  // ceilings to their §15 maximums, so that a developer's load (cbqs bench, the
  // peer benchmark) meets the broker's limits rather than the default policy of
  // 1 MiB/s appended and 4 MiB/s delivered.
  for (auto [name, value] : {std::pair<const char*, std::uint64_t>{"cbqs.max_append_bytes_per_sec", 268'435'456},
                             {"cbqs.max_delivered_bytes_per_sec", 1'073'741'824}}) {
    auto params = chain.params();
    if (!params) return Err{"reading the parameters: " + params.error().message};
    std::uint64_t current = std::string_view(name) == "cbqs.max_append_bytes_per_sec" ? params->max_append_bytes_per_sec
                                                                                       : params->max_delivered_bytes_per_sec;
    if (current == value) continue;
    auto written = owner.send_and_wait(ParameterWrite{name, value});
    if (!written || !written->ok()) return Err{std::string("raising ") + name + ": " + describe(written)};
  }
  std::string endpoint = "wss://127.0.0.1:" + std::to_string(wss_port) + "/";
  if (!chain.provider(provider.address())) {
    auto funded = owner.send_and_wait(Transfer{provider.address(), kProviderFunds});
    if (!funded || !funded->ok()) return Err{"funding the provider: " + describe(funded)};
    cbqs::RegisterProviderV2 reg{cbqs::ed25519_public_key(*provider_signing), {Bytes(endpoint.begin(), endpoint.end())},
                                 1'000, true, Bytes32{}};
    auto registered = provider.send_instruction(reg);
    if (!registered || !registered->ok()) return Err{"registering the provider: " + describe(registered)};
  }
  Bytes32 chain_id = *chain.chain_instance_id();
  d.stream_id = cbqs::stream_id(chain_id, owner.address(), 0);
  if (!chain.stream(d.stream_id)) {
    auto topped = owner.send_instruction(cbqs::TopUpAccountV2{owner.address(), provider.address(), kAccountTopUp});
    if (!topped || !topped->ok()) return Err{"topping up the account: " + describe(topped)};
    auto created = owner.send_instruction(cbqs::CreateStreamV2{0, provider.address(), cbqs::ed25519_public_key(*stream_admin)});
    if (!created || !created->ok()) return Err{"creating the stream: " + describe(created)};
  }

  // A fresh 24-hour grant with every verb, for the holder key in the data dir.
  auto stream = chain.stream(d.stream_id);
  if (!stream) return Err{std::string("the dev stream is missing")};
  cbqs::GrantTerms terms;
  crypto::random_bytes(terms.nonce);
  terms.not_before_ms = SystemClock().now_ms() - 60'000;
  terms.expires_at_ms = terms.not_before_ms + cbqs::Params{}.max_grant_ttl_ms;
  cbqs::StreamGrantV2 g = cbqs::mint_grant(*stream, cbqs::ed25519_public_key(*holder), std::move(terms), *stream_admin);
  d.grant_file = dir / "dev-grant.hex";
  d.holder_key_file = dir / "dev-holder-key";
  auto written = data_dir::write_file(d.grant_file, to_hex(cbqs::encode(g)) + "\n", 0644, data_dir::IfExists::kReplace);
  if (!written) return Err{written.error()};
  return d;
}

}  // namespace cowboy::cbqsd
