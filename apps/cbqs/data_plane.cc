#include "data_plane.h"

#include <fstream>

#include "cbqs/client/dialing.h"
#include "cbqs/client/request_ids.h"
#include "cbqs/client/wss_connection.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"

namespace cowboy::cbqs_cli {

using namespace cowboy::cbqs;
using nlohmann::json;

void SessionOptions::use_dev_dir(const std::filesystem::path& dir) {
  if (ca_file.empty()) ca_file = dir / "tls" / "dev-cert.pem";
  if (grant_file.empty()) grant_file = dir / "dev-grant.hex";
  if (holder_key.empty()) holder_key = dir / "dev-holder-key";
  allow_private = true;
}

namespace {

using client::request_id;

std::string describe(const CbqsServerFrameV2& f) {
  if (const auto* e = std::get_if<ErrorFrame>(&f)) return std::string(e->message.begin(), e->message.end());
  return "an unexpected frame";
}

// A connection with an open session, and a counter for request ids.
struct Session {
  std::unique_ptr<client::WssConnection> connection;
  Bytes32 id{};
  StreamGrantV2 grant;
  std::uint64_t next_request = 10;

  Result<CbqsServerFrameV2, std::string> call(CbqsRequestBodyV2 body) {
    if (auto sent = connection->send(Request{request_id(next_request++), id, std::move(body)}); !sent) return Err{sent.error()};
    return connection->receive(std::chrono::seconds(10));
  }
};

Result<Session, std::string> open(const SessionOptions& o) {
  auto endpoint = client::parse_endpoint(o.endpoint);
  if (!endpoint) return Err{"not a wss:// endpoint: " + o.endpoint};
  if (auto checked = client::resolve_checked(endpoint->host, o.allow_private); !checked)  // §11.4, before anything else
    return Err{"refused destination: " + checked.error()};
  std::ifstream grant_in(o.grant_file);
  std::string grant_hex;
  grant_in >> grant_hex;
  auto grant_bytes = from_hex(grant_hex);
  if (!grant_bytes) return Err{"cannot read a grant from " + o.grant_file.string()};
  auto grant = decode<StreamGrantV2>(*grant_bytes);
  if (!grant) return Err{"the grant file does not hold a StreamGrantV2: " + std::string(codec::to_string(grant.error()))};
  auto holder = devchain::load_secret(o.holder_key);
  if (!holder) return Err{holder.error()};

  client::ConnectOptions c;
  c.host = endpoint->host;
  c.port = endpoint->port;
  c.ca_file = o.ca_file;
  c.server_name = endpoint->host == "127.0.0.1" ? "localhost" : endpoint->host;
  c.allow_private_destinations = o.allow_private;
  auto connection = client::WssConnection::connect(c);
  if (!connection) return Err{connection.error()};
  Session s{std::move(*connection), {}, *grant};
  if (auto sent = s.connection->send(OpenSession{request_id(1), *grant}); !sent) return Err{sent.error()};
  auto challenge = s.connection->receive(std::chrono::seconds(10));
  if (!challenge) return Err{challenge.error()};
  const auto* ch = std::get_if<SessionChallenge>(&*challenge);
  if (!ch) return Err{"OpenSession refused: " + describe(*challenge)};
  SessionProofV2 proof{grant->chain_instance_id, grant->stream_id, grant_id(*grant), ch->session_id, ch->challenge, {}};
  sign_proof(proof, *holder);
  if (auto sent = s.connection->send(CompleteSession{request_id(2), proof}); !sent) return Err{sent.error()};
  auto opened = s.connection->receive(std::chrono::seconds(10));
  if (!opened) return Err{opened.error()};
  if (!std::holds_alternative<SessionOpened>(*opened)) return Err{"CompleteSession refused: " + describe(*opened)};
  s.id = ch->session_id;
  return s;
}

template <typename Body>
const Body* body_of(const CbqsServerFrameV2& f) {
  if (const auto* r = std::get_if<Response>(&f)) return std::get_if<Body>(&r->body);
  return nullptr;
}

}  // namespace

Result<json, std::string> append(const SessionOptions& o, std::uint64_t lane, const std::vector<std::string>& messages) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  if (lane == 0) {
    auto created = s->call(req::CreateLane{});
    if (!created) return Err{created.error()};
    const auto* c = body_of<resp::LaneCreated>(*created);
    if (!c) return Err{"CreateLane refused: " + describe(*created)};
    lane = c->lane_id;
  }
  json out = json::array();
  for (const auto& m : messages) {
    auto r = s->call(req::Append{{lane, Bytes(m.begin(), m.end())}});
    if (!r) return Err{r.error()};
    const auto* a = body_of<resp::Appended>(*r);
    if (!a) return Err{"Append refused: " + describe(*r)};
    out.push_back({{"sequence", a->sequence}, {"lane", lane}});
  }
  return out;
}

Result<json, std::string> tail(const SessionOptions& o, std::uint64_t from, std::uint64_t count, bool follow) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  StartPosition start = from == 0 ? StartPosition{StartHead{}} : StartPosition{StartAt{from}};
  auto subscribed = s->call(req::Subscribe{SourceCursor{LaneScopeAny{}, start}, 1ULL << 30});
  if (!subscribed) return Err{subscribed.error()};
  if (!body_of<resp::CursorProgress>(*subscribed)) return Err{"Subscribe refused: " + describe(*subscribed)};
  json out = json::array();
  while (count == 0 || out.size() < count) {
    auto f = s->connection->receive(follow ? std::chrono::hours(24) : std::chrono::seconds(10));
    if (!f) return Err{f.error()};
    if (const auto* d = std::get_if<Delivery>(&*f)) {
      out.push_back({{"sequence", d->sequence}, {"lane", d->header.lane_id},
                     {"payload", std::string(d->payload.begin(), d->payload.end())}});
    } else if (body_of<resp::CursorProgress>(*f) && !follow) {
      break;  // the replay reached the head
    } else if (std::holds_alternative<ErrorFrame>(*f)) {
      return Err{describe(*f)};
    }
  }
  return out;
}

Result<json, std::string> checkpoint(const SessionOptions& o, std::uint64_t sequence) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  auto r = s->call(req::GetCheckpoint{sequence == 0 ? std::nullopt : std::optional<std::uint64_t>(sequence)});
  if (!r) return Err{r.error()};
  const auto* c = body_of<resp::Checkpoint>(*r);
  if (!c) return Err{"GetCheckpoint refused: " + describe(*r)};
  auto chain = devchain::HttpClient::from_url(o.chain_url);
  if (!chain) return Err{std::string("--chain-url must be http://host:port")};
  auto provider = chain->provider(c->receipt.provider);
  if (!provider) return Err{"cannot read the provider record: " + provider.error().message};
  auto verdict = verify_checkpoint(c->receipt, *provider);
  const char* names[] = {"valid", "invalid", "unverifiable"};
  const auto& receipt = c->receipt;
  return json{{"verdict", names[static_cast<int>(verdict)]},
              {"first_sequence", receipt.first_sequence},
              {"last_sequence", receipt.last_sequence},
              {"snapshot_height", receipt.snapshot_height},
              {"committed_at_ms", receipt.committed_at_ms},
              {"checkpoint_id", devchain::json::hex0x(checkpoint_id(receipt))},
              {"previous_checkpoint", devchain::json::hex0x(receipt.previous_checkpoint)}};
}

}  // namespace cowboy::cbqs_cli
