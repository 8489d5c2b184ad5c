// `devchain cip11-tx`: builds and signs one CIP-11 transaction for a running
// devchain and prints the body `POST /v1/tx` takes, so that curl can submit it
// (docs/devchain.md, "CIP-11 with curl"). The chain id and nonce come from the
// node; the key never leaves this process.
#include "cip11_tx.h"

#include <cstdio>

#include "cip11/chain/instructions.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"

namespace cowboy::devchain {
namespace chain = cip11::chain;

Cip11TxCommand::Cip11TxCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("cip11-tx", "sign a CIP-11 transaction and print {\"tx\": …} for POST /v1/tx");
  cmd_->add_option("--key-file", key_file_, "the sender's secp256k1 key (hex, 0600)")->required();
  cmd_->add_option("--node", node_, "the devchain's HTTP API")->capture_default_str();
  auto* reg = cmd_->add_subcommand("register", "RegisterRunner with the key's own public key");
  reg->add_option("--stake", stake_, "stake moved from the native balance")->capture_default_str();
  reg->add_option("--kinds", kinds_, "job kinds (§9.4 names)")->capture_default_str();
  reg->add_option("--max-concurrent", max_concurrent_)->capture_default_str();
  reg->add_option("--price", price_, "price per job")->capture_default_str();
  cmd_->add_subcommand("heartbeat", "RunnerHeartbeat (the §7.1 floor)");
  cmd_->add_subcommand("deregister", "DeregisterRunner (the stake returns)");
  auto* job = cmd_->add_subcommand("submit-job", "SubmitJob; the receipt names the job_id");
  job->add_option("--kind", kind_)->capture_default_str();
  job->add_option("--spec", spec_, "the job spec bytes, as text")->capture_default_str();
  job->add_option("--timeout-blocks", timeout_,
                  "blocks from the submit to the deadline; where the genesis names F it must exceed F "
                  "(M = 1; F + 1 for M > 1 without CIP-11 selection) or K + 2 + F (M > 1 under CIP-11 "
                  "selection), else TimeoutTooShort (docs/cip11.md choices 160, 165); with F left at 64 a "
                  "job of 64 or fewer is taken but expires before it is final, unpushed")
      ->capture_default_str();
  job->add_option("--runners", runners_, "verification.runners (M)")->capture_default_str();
  job->add_option("--max-price", max_price_)->capture_default_str();
  for (const char* name : {"commit", "submit-result"}) {
    auto* r = cmd_->add_subcommand(name, name == std::string("commit") ? "JobResultCommit" : "JobResultSubmit");
    r->add_option("--job", job_id_, "job_id (hex)")->required();
    r->add_option("--result", result_, "the result, as text")->required();
    r->add_option("--salt", salt_, "32 bytes of hex")->capture_default_str();
  }
  cmd_->require_subcommand(1);
}

int Cip11TxCommand::run() const {
  auto fail = [](const std::string& why) {
    std::fprintf(stderr, "devchain cip11-tx: %s\n", why.c_str());
    return 2;
  };
  auto secret = load_key(key_file_);
  if (!secret) return fail(secret.error());
  auto salt = fixed_from_hex<32>(salt_);
  if (!salt) return fail("--salt must be 32 bytes of hex");
  const Address sender = *crypto::secp256k1_address(*secret);
  const std::string what = cmd_->get_subcommands().front()->get_name();

  chain::Instruction instruction = chain::RunnerHeartbeat{};
  if (what == "register") {
    chain::RegisterRunner r;
    r.key = *crypto::secp256k1_public_key(*secret);
    auto stake = u128_from_string(stake_), price = u128_from_string(price_);
    if (!stake || !price) return fail("--stake and --price are decimal amounts");
    r.stake = *stake;
    r.price = *price;
    for (const auto& name : kinds_) {
      auto kind = cip11::job_kind_named(name);
      if (!kind) return fail("unknown job kind " + name);
      r.job_kinds |= 1u << static_cast<unsigned>(*kind);
    }
    r.max_concurrent = max_concurrent_;
    instruction = r;
  } else if (what == "deregister") {
    instruction = chain::DeregisterRunner{};
  } else if (what == "submit-job") {
    auto kind = cip11::job_kind_named(kind_);
    auto max_price = u128_from_string(max_price_);
    if (!kind || !max_price) return fail("--kind is a §9.4 name and --max-price a decimal amount");
    instruction = chain::SubmitJob{*kind, Bytes(spec_.begin(), spec_.end()), timeout_, runners_, *max_price};
  } else if (what == "commit" || what == "submit-result") {
    auto hex = fixed_from_hex<32>(job_id_);
    if (!hex) return fail("--job must be 32 bytes of hex");
    const cip11::JobId id{*hex};
    Bytes result(result_.begin(), result_.end());
    if (what == "commit") instruction = chain::JobResultCommit{id, chain::result_commitment(id, sender, result, *salt)};
    else instruction = chain::JobResultSubmit{id, result, *salt};
  }

  auto client = HttpClient::from_url(node_);
  if (!client) return fail("--node must be http://host:port");
  auto chain_id = client->chain_instance_id();
  auto account = client->account_info(sender);
  if (!chain_id || !account) return fail("cannot read the chain at " + node_);
  Transaction tx{*chain_id, account->next_nonce, Cip11Call{chain::encode_instruction(instruction)}, {}};
  if (!sign_tx(tx, *secret)) return fail("cannot sign with this key");
  std::printf("{\"tx\": \"%s\"}\n", json::hex0x(encode_tx(tx)).c_str());
  return 0;
}

}  // namespace cowboy::devchain
