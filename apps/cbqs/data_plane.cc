#include "data_plane.h"

#include <fstream>

#include "cbqs/client/dialing.h"
#include "cbqs/client/request_ids.h"
#include "cbqs/client/wss_connection.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/errors.h"
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

// A grant file: the hex of a canonical StreamGrantV2.
Result<StreamGrantV2, std::string> read_grant(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string hex;
  in >> hex;
  auto bytes = from_hex(hex);
  if (!bytes) return Err{"cannot read a grant from " + file.string()};
  auto grant = decode<StreamGrantV2>(*bytes);
  if (!grant) return Err{"the grant file does not hold a StreamGrantV2: " + std::string(codec::to_string(grant.error()))};
  return *grant;
}

Result<Session, std::string> open(const SessionOptions& o) {
  auto endpoint = client::parse_endpoint(o.endpoint);
  if (!endpoint) return Err{"not a wss:// endpoint: " + o.endpoint};
  if (auto checked = client::resolve_checked(endpoint->host, o.allow_private); !checked)  // §11.4, before anything else
    return Err{"refused destination: " + checked.error()};
  auto grant = read_grant(o.grant_file);
  if (!grant) return Err{grant.error()};
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

namespace {

json group_json(const GroupConfigV2& g) {
  json start = std::holds_alternative<StartHead>(g.start) ? json("head") : json(std::get<StartAt>(g.start).sequence);
  return {{"group_id", g.group_id},
          {"lane_id", g.lane_id},
          {"start", start},
          {"visibility_timeout_ms", g.visibility_timeout_ms},
          {"max_visibility_ms", g.max_visibility_ms},
          {"max_in_flight", g.max_in_flight},
          {"max_in_flight_per_holder", g.max_in_flight_per_holder},
          {"max_attempts", g.max_attempts},
          {"record_deadline_ms", g.record_deadline_ms}};
}

void apply(GroupConfigV2& g, const GroupFields& f) {
  if (f.visibility_timeout_ms) g.visibility_timeout_ms = *f.visibility_timeout_ms;
  if (f.max_visibility_ms) g.max_visibility_ms = *f.max_visibility_ms;
  if (f.max_in_flight) g.max_in_flight = *f.max_in_flight;
  if (f.max_in_flight_per_holder) g.max_in_flight_per_holder = *f.max_in_flight_per_holder;
  if (f.max_attempts) g.max_attempts = *f.max_attempts;
  if (f.record_deadline_ms) g.record_deadline_ms = *f.record_deadline_ms;
}

// One request whose answer must be `Body`; `what` names it in the error.
template <typename Body>
Result<Body, std::string> expect_answer(Session& s, CbqsRequestBodyV2 body, const char* what) {
  auto r = s.call(std::move(body));
  if (!r) return Err{r.error()};
  const auto* b = body_of<Body>(*r);
  if (!b) return Err{std::string(what) + " refused: " + describe(*r)};
  return *b;
}

Result<GroupConfigV2, std::string> fetch_group(Session& s, std::uint64_t group) {
  auto g = expect_answer<resp::Group>(s, req::GetGroup{group}, "GetGroup");
  if (!g) return Err{g.error()};
  return g->config;
}

}  // namespace

std::string dev_stream_hex(const std::filesystem::path& dir) {
  auto grant = read_grant(dir / "dev-grant.hex");
  return grant ? to_hex(grant->stream_id) : std::string{};
}

Result<json, std::string> group_create(const SessionOptions& o, std::uint64_t lane, const GroupFields& f) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  GroupConfigV2 g;  // defaults: a 30 s lease, 5 attempts, a one-hour deadline
  g.lane_id = lane;
  g.start = f.start_at ? StartPosition{StartAt{*f.start_at}} : StartPosition{StartHead{}};
  g.visibility_timeout_ms = 30'000;
  g.max_visibility_ms = 30'000;
  g.max_in_flight = 1'000;
  g.max_in_flight_per_holder = 100;
  g.max_attempts = 5;
  g.record_deadline_ms = 3'600'000;
  apply(g, f);
  auto created = expect_answer<resp::GroupCreated>(*s, req::CreateGroup{g}, "CreateGroup");
  if (!created) return Err{created.error()};
  auto stored = fetch_group(*s, created->group_id);
  if (!stored) return Err{stored.error()};
  return group_json(*stored);
}

Result<json, std::string> group_get(const SessionOptions& o, std::uint64_t group) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  auto g = fetch_group(*s, group);
  if (!g) return Err{g.error()};
  return group_json(*g);
}

Result<json, std::string> group_update(const SessionOptions& o, std::uint64_t group, const GroupFields& f) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  auto g = fetch_group(*s, group);
  if (!g) return Err{g.error()};
  apply(*g, f);
  auto updated = expect_answer<resp::Group>(*s, req::UpdateGroup{*g}, "UpdateGroup");
  if (!updated) return Err{updated.error()};
  return group_json(updated->config);
}

Result<json, std::string> group_delete(const SessionOptions& o, std::uint64_t group) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  auto done = expect_answer<resp::Ok>(*s, req::DeleteGroup{group}, "DeleteGroup");
  if (!done) return Err{done.error()};
  return json{{"deleted", group}};
}

Result<json, std::string> consume(const SessionOptions& o, const ConsumeOptions& c) {
  auto s = open(o);
  if (!s) return Err{s.error()};
  auto g = fetch_group(*s, c.group);
  if (!g) return Err{g.error()};
  constexpr std::uint64_t kWindowBytes = 1 << 20;  // deliveries in flight to this consumer, in bytes
  auto subscribed = expect_answer<resp::Ok>(*s, req::Subscribe{SourceGroup{g->lane_id, c.group}, kWindowBytes}, "Subscribe");
  if (!subscribed) return Err{subscribed.error()};
  const Bytes32 subscription = request_id(s->next_request - 1);
  json out = json::array();
  auto idle = c.idle_ms == 0 ? std::chrono::milliseconds(std::chrono::hours(24)) : std::chrono::milliseconds(c.idle_ms);
  while (c.count == 0 || out.size() < c.count) {
    auto f = s->connection->receive(idle);
    if (!f) {
      if (f.error() == "timeout") break;  // idle: the group has nothing more for us now
      return Err{f.error()};
    }
    if (const auto* e = std::get_if<ErrorFrame>(&*f)) {
      if (e->code == static_cast<std::uint16_t>(ErrorCode::kBackpressure)) continue;
      return Err{describe(*f)};
    }
    const auto* d = std::get_if<Delivery>(&*f);
    if (!d || !d->lease) continue;  // answers to our Acks and AddCredits
    std::string payload(d->payload.begin(), d->payload.end());
    bool ok = true;
    if (!c.exec.empty()) {
      FILE* child = ::popen(c.exec.c_str(), "w");
      if (!child) return Err{"cannot run " + c.exec};
      std::fwrite(payload.data(), 1, payload.size(), child);
      int status = ::pclose(child);
      ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    CbqsRequestBodyV2 action = ok ? CbqsRequestBodyV2{req::Ack{subscription, *d->lease}}
                                  : CbqsRequestBodyV2{req::Nack{subscription, *d->lease}};
    auto sent = s->connection->send(Request{request_id(s->next_request++), s->id, std::move(action)});
    if (sent) sent = s->connection->send(Request{request_id(s->next_request++), s->id,
                                                 req::AddCredit{subscription, 152 + d->payload.size()}});
    if (!sent) return Err{sent.error()};
    out.push_back({{"sequence", d->sequence}, {"lane", d->header.lane_id}, {"payload", payload},
                   {"action", ok ? "ack" : "nack"}});
  }
  // Wait for the answers of the last actions, so none is lost with the connection.
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       std::chrono::steady_clock::now() < deadline;) {
    auto f = s->connection->receive(std::chrono::milliseconds(200));
    if (!f) break;
    if (const auto* r = std::get_if<Response>(&*f); r && r->request_id == request_id(s->next_request - 1)) break;
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
