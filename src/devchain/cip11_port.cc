#include "devchain/cip11_port.h"

#include "devchain/http_client.h"
#include "devchain/tx.h"

namespace cowboy::devchain {

namespace port = cip11::chain;

namespace {

port::PortError port_error(const ApiError& e) {
  switch (e.code) {
    case ApiErrorCode::kNotFound: return {port::PortErrc::kNotFound, e.message};
    case ApiErrorCode::kGone: return {port::PortErrc::kGone, e.message};
    case ApiErrorCode::kUnavailable:
    case ApiErrorCode::kInternal: return {port::PortErrc::kUnavailable, e.message};
    case ApiErrorCode::kMalformedTx:
    case ApiErrorCode::kTxTooLarge:
    case ApiErrorCode::kWrongChain:
    case ApiErrorCode::kBadSignature:
    case ApiErrorCode::kBadNonce:
    case ApiErrorCode::kMempoolFull:
    case ApiErrorCode::kBlockRefused:
    case ApiErrorCode::kViewRefused:
    case ApiErrorCode::kBadRequest: return {port::PortErrc::kRefused, e.message};
  }
  return {port::PortErrc::kUnavailable, e.message};
}

/// The API's answer as the port's, converted by `f` when it is a value.
template <typename T, typename F = std::identity>
auto answer(ApiResult<T> r, F f = {}) -> port::PortResult<std::decay_t<decltype(f(std::move(*r)))>> {
  if (!r) return Err{port_error(r.error())};
  return f(std::move(*r));
}

}  // namespace

port::SignedTx Cip11TxFormat::sign(const crypto::Secp256k1Secret& secret, std::uint64_t nonce, Bytes payload) const {
  Transaction tx{chain_, nonce, Cip11Call{std::move(payload)}, {}};
  sign_tx(tx, secret);  // an invalid secret leaves a signature that recovers no sender: the chain refuses it
  return {encode_tx(tx), tx_hash(tx), nonce};
}

std::optional<port::OpenedTx> Cip11TxFormat::open(ByteView bytes) const {
  auto tx = decode_tx(bytes);
  if (!tx || tx->chain_instance_id != chain_) return std::nullopt;
  auto sender = recover_sender(*tx);
  if (!sender) return std::nullopt;
  port::OpenedTx out{*sender, tx->nonce, std::nullopt};
  if (const auto* call = std::get_if<Cip11Call>(&tx->body)) out.cip11_payload = call->payload;
  return out;
}

struct Cip11Port::Owned {
  HttpClient client;
};

std::unique_ptr<Cip11Port> Cip11Port::over_http(const std::string& url) {
  auto client = HttpClient::from_url(url);
  if (!client) return nullptr;
  auto owned = std::make_shared<Owned>(Owned{std::move(*client)});
  HttpClient& c = owned->client;
  return std::unique_ptr<Cip11Port>(new Cip11Port(std::move(owned), c, c));
}

port::PortResult<port::ChainSetup> Cip11Port::setup() {
  auto genesis = cip11_.cip11_genesis();
  if (!genesis) return Err{port_error(genesis.error())};
  auto id = chain_.chain_instance_id();
  if (!id) return Err{port_error(id.error())};
  return port::ChainSetup{*id,
                          genesis->params,
                          genesis->validators,
                          std::make_shared<Cip11TxFormat>(*id),
                          genesis->validator_set_changes,
                          genesis->overlap_blocks,
                          finality_depth_of(*genesis)};
}

// The one place a devchain height enters CIP-11 (docs/cip11.md choice 137): its
// u64 becomes a cip11::Height here, and back on the way to the devchain's API.
port::PortResult<cip11::Height> Cip11Port::height() {
  return answer(chain_.height(), [](std::uint64_t h) { return cip11::Height{h}; });
}
port::PortResult<port::RunnerRecord> Cip11Port::runner(const Address& r) { return answer(cip11_.runner(r)); }
port::PortResult<std::vector<port::RunnerRecord>> Cip11Port::runners() { return answer(cip11_.runners()); }
port::PortResult<port::JobRecord> Cip11Port::job(const cip11::JobId& id) { return answer(cip11_.job(id)); }
port::PortResult<std::vector<port::JobRecord>> Cip11Port::runner_jobs(const Address& r) {
  return answer(cip11_.runner_jobs(r));
}
port::PortResult<port::Effects> Cip11Port::block_effects(cip11::Height h) {
  return answer(cip11_.block_assignments(h.value));
}

port::PortResult<std::vector<port::ValidatorSetChange>> Cip11Port::validator_set_changes() {
  return answer(cip11_.validator_set_changes());
}

port::PortResult<std::vector<port::ValidatorEntry>> Cip11Port::validators() { return answer(cip11_.validators()); }

port::PortResult<std::uint64_t> Cip11Port::next_nonce(const Address& account) {
  return answer(chain_.account_info(account), [](AccountInfo a) { return a.next_nonce; });
}

port::PortResult<std::optional<port::Inclusion>> Cip11Port::inclusion(const Bytes32& tx_hash) {
  return answer(chain_.receipt(tx_hash), [](std::optional<TxReceipt> r) -> std::optional<port::Inclusion> {
    if (!r) return std::nullopt;
    return port::Inclusion{cip11::Height{r->height}, r->error};
  });
}

port::PortResult<Bytes32> Cip11Port::submit(ByteView signed_tx) {
  auto tx = decode_tx(signed_tx);
  if (!tx) return Err{port::PortError{port::PortErrc::kRefused, "the bytes are no devchain transaction"}};
  return answer(chain_.submit(*tx));
}

}  // namespace cowboy::devchain
