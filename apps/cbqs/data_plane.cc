#include "data_plane.h"

#include <sys/wait.h>

#include <atomic>
#include <ctime>
#include <fstream>
#include <mutex>
#include <thread>

#include "cbqs/checkpoints.h"
#include "cbqs/rooms.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "net/prometheus_text.h"
#include "progress.h"

namespace cowboy::cbqs_cli {

using namespace cowboy::cbqs;
using sdk::Client;

namespace {

std::string why(const sdk::Error& e) { return e.describe(); }

constexpr auto kStopPoll = std::chrono::milliseconds(200);  // how soon a stop request is seen
constexpr auto kSettle = std::chrono::seconds(10);          // for the last pipelined acks' answers

// JSON strings must be UTF-8: other payloads go out as base64 (README, "cbqs").
json record_json(const sdk::Record& r, bool hex) {
  json j{{"sequence", r.sequence}, {"lane", r.lane_id}};
  if (hex) j["payload_hex"] = to_hex(r.payload);
  else if (is_utf8(r.payload)) j["payload"] = std::string(r.payload.begin(), r.payload.end());
  else j["payload_base64"] = to_base64(r.payload);
  return j;
}

json group_json(const GroupConfigV2& g) {
  json start = std::holds_alternative<StartHead>(g.start) ? json("head") : json(std::get<StartAt>(g.start).sequence.value);
  return {{"group", g.group_id},
          {"lane", g.lane_id},
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

Answer<ProviderRecordV2> provider_record(const SessionOptions& o, const Address& provider) {
  auto chain = devchain::HttpClient::from_url(o.chain_url);
  if (!chain) return Err{std::string("--chain-url must be http://host:port")};
  auto record = chain->provider(provider);
  if (!record) return Err{"cannot read the provider record: " + record.error().message};
  return *record;
}

}  // namespace

namespace {

std::string utc_time(std::uint64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1'000);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

// What to do about the errors people meet first, after what went wrong.
std::string with_hint(const sdk::Error& e, const SessionOptions& o, const sdk::ClientOptions* options) {
  std::string out = why(e);
  if (e.kind == sdk::Error::Kind::kRefusedDestination)
    return out + "\n  loopback and private addresses are refused by default (CIP-39 §11.4); for a development broker add"
                 " --allow-private, or use --dev DIR";
  if (e.message.find("cannot connect") != std::string::npos)
    return out + "\n  is cbqsd running at " + o.endpoint + "? `make run` (cbqsd --dev) starts one; --endpoint or --dev DIR"
                 " says where it listens";
  if (e.message.find("certificate verify failed") != std::string::npos)
    return out + "\n  the broker's certificate is not trusted: give its CA with --ca FILE, or use --dev DIR for a cbqsd --dev"
                 " (its certificate is pinned)";
  if (e.is(ErrorCode::kGrantExpired)) {
    std::string when = options ? " (it expired at " + utc_time(options->grant.expires_at_ms) + ")" : "";
    return out + when + "\n  mint a new grant with `cbqs grant mint --admin-key ... --stream ... --holder-key ... --out grant.hex`;"
                        " a restarted cbqsd --dev writes a fresh dev-grant.hex";
  }
  return out;
}

}  // namespace

Answer<std::unique_ptr<Client>> connect(const SessionOptions& o) {
  // §11.4 before anything else: a refused destination is the first thing to hear about.
  if (auto allowed = sdk::check_destination(o.endpoint, o.allow_private || !o.dev_dir.empty()); !allowed)
    return Err{with_hint(allowed.error(), o, nullptr)};
  auto options = o.dev_dir.empty() ? sdk::ClientOptions::from_files(o.endpoint, o.grant_file, o.holder_key)
                                   : sdk::ClientOptions::from_dev_dir(o.dev_dir, o.endpoint);
  if (!options) return Err{why(options.error())};
  if (!o.dev_dir.empty() && !o.grant_file.empty()) {  // --grant (and --holder-key) win over the dev dir's
    auto given = sdk::ClientOptions::from_files(o.endpoint, o.grant_file,
                                                o.holder_key.empty() ? o.dev_dir / "dev-holder-key" : o.holder_key);
    if (!given) return Err{why(given.error())};
    options->grant = given->grant;
    options->holder = given->holder;
  }
  if (!o.ca_file.empty()) {
    options->ca_file = o.ca_file;
    options->pinned_certificate.clear();
  }
  options->allow_private_destinations |= o.allow_private;
  auto client = Client::connect(*options);
  if (!client) return Err{with_hint(client.error(), o, &*options)};
  return std::move(*client);
}

json dev_endpoints(const std::filesystem::path& dir) {
  if (dir.empty()) return json::object();
  std::ifstream in(dir / "dev-endpoints.json");
  auto j = json::parse(in, nullptr, false);
  return j.is_object() ? j : json::object();
}

std::string dev_stream_hex(const std::filesystem::path& dir) {
  auto options = sdk::ClientOptions::from_dev_dir(dir);
  return options ? to_hex(options->grant.stream_id) : std::string{};
}

// ---- lanes -----------------------------------------------------------------

Answer<json> lane_create(const SessionOptions& o, const std::string& room_id, const std::string& seat_id) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  if (room_id.empty()) {
    auto lane = (*c)->create_lane();
    if (!lane) return Err{why(lane.error())};
    return json{{"lane", *lane}};
  }
  auto room = fixed_from_hex<32>(room_id);
  auto seat = seat_id.empty() ? std::optional<Bytes32>(Bytes32{}) : fixed_from_hex<32>(seat_id);
  if (!room || !seat) return Err{std::string("--room and --seat take 32 bytes of hex")};
  RoomLaneV2 r = seat_id.empty() ? sdk::room_messages(*room) : sdk::room_inbox(*room, *seat);
  auto lane = (*c)->open_room_lane(r);
  if (!lane) return Err{why(lane.error())};
  return json{{"lane", *lane}, {"room", room_id}, {"kind", seat_id.empty() ? "messages" : "inbox"}};
}

Answer<json> lane_close(const SessionOptions& o, LaneId lane) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  if (auto closed = (*c)->close_lane(lane); !closed) return Err{why(closed.error())};
  return json{{"closed", lane}};
}

Answer<json> lane_list(const SessionOptions& o) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto lanes = (*c)->list_lanes();
  if (!lanes) return Err{why(lanes.error())};
  json out = json::array();
  for (const auto& l : *lanes)
    out.push_back({{"lane", l.lane_id}, {"status", l.status == LaneStatusV2::kActive ? "active" : "closed"}});
  return out;
}

// ---- producing and reading ---------------------------------------------------

namespace {
// `lane`, or a new one when it is 0.
// No --lane: the stream's first open lane, so repeated appends land together
// (the first one on a fresh stream creates it).
Answer<LaneId> lane_or_default(Client& c, LaneId lane) {
  if (lane != LaneId{0}) return lane;
  auto lanes = c.list_lanes();
  if (!lanes) return Err{"ListLanes refused: " + why(lanes.error())};
  for (const auto& l : *lanes)
    if (l.status == LaneStatusV2::kActive) return l.lane_id;
  auto created = c.create_lane();
  if (!created) return Err{"CreateLane refused: " + why(created.error())};
  return *created;
}
}  // namespace

Answer<json> append(const SessionOptions& o, LaneId lane, const std::vector<std::string>& messages) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto target = lane_or_default(**c, lane);
  if (!target) return Err{target.error()};
  lane = *target;
  std::vector<std::future<sdk::Outcome<Sequence>>> answers;
  for (const auto& m : messages) answers.push_back((*c)->append(lane, Bytes(m.begin(), m.end())));
  json out = json::array();
  for (auto& a : answers) {
    auto r = a.get();
    if (!r) return Err{"Append refused: " + why(r.error())};
    out.push_back({{"sequence", *r}, {"lane", lane}});
  }
  return out;
}

Answer<json> produce(const SessionOptions& o, LaneId lane, std::istream& in, std::optional<std::uint64_t> total,
                     bool progress) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto target = lane_or_default(**c, lane);
  if (!target) return Err{target.error()};
  lane = *target;
  constexpr std::uint64_t kWindow = 1'024;  // appends outstanding: enough to fill a commit batch
  std::mutex m;
  std::condition_variable cv;
  std::uint64_t sent = 0, answered = 0, first = 0, last = 0;
  std::optional<std::string> failure;
  Progress bar("produced", total, progress);
  auto start = std::chrono::steady_clock::now();
  for (std::string line; std::getline(in, line);) {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return sent - answered < kWindow || failure; });
    if (failure) break;
    ++sent;
    lock.unlock();
    (*c)->append(lane, Bytes(line.begin(), line.end()), [&](sdk::Outcome<Sequence> r) {
      std::lock_guard guard(m);
      ++answered;
      if (!r && !failure) failure = "Append refused: " + why(r.error());
      if (r) {
        first = first == 0 ? r->value : std::min(first, r->value);
        last = std::max(last, r->value);
      }
      cv.notify_all();
    });
    bar.update(answered);
  }
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return answered == sent; });
  bar.update(answered);
  bar.finish();
  if (failure) return Err{*failure};
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return json{{"lane", lane}, {"records", answered}, {"first_sequence", first}, {"last_sequence", last},
              {"seconds", seconds}, {"records_per_sec", seconds > 0 ? static_cast<double>(answered) / seconds : 0}};
}

// The next record, flushing what was printed before waiting for one.
template <typename Source>
auto next_flushing(Source& source, const Sink& out, std::chrono::milliseconds wait) {
  auto got = source.next(std::chrono::milliseconds(0));
  if (got && !*got) {
    out.flush();
    got = source.next(wait);
  }
  return got;
}

Answer<std::uint64_t> tail(const SessionOptions& o, const TailOptions& t, const Sink& out, const Stopped& stopped) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  StartPosition start = t.from == 0 ? StartPosition{StartHead{}} : StartPosition{StartAt{Sequence{t.from}}};
  LaneScope scope = t.lane == 0 ? LaneScope{LaneScopeAny{}} : LaneScope{LaneScopeExact{LaneId{t.lane}}};
  auto reader = (*c)->read({scope, start});
  if (!reader) return Err{"Subscribe refused: " + why(reader.error())};
  std::uint64_t n = 0;
  while ((t.count == 0 || n < t.count) && !stopped()) {
    auto r = next_flushing(**reader, out, kStopPoll);
    if (!r) return Err{why(r.error())};
    if (*r) {
      out.record(record_json(**r, t.hex));
      ++n;
    } else if (!t.follow && (*reader)->caught_up()) {
      break;  // the replay reached the head
    }
  }
  out.flush();
  return n;
}

// ---- consumer groups --------------------------------------------------------------

Answer<json> group_create(const SessionOptions& o, LaneId lane, const GroupFields& f) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  GroupConfigV2 g;  // what the flags leave unset takes sdk::with_group_defaults
  g.lane_id = lane;
  g.start = f.start_at ? StartPosition{StartAt{Sequence{*f.start_at}}} : StartPosition{StartHead{}};
  apply(g, f);
  auto created = (*c)->create_group(g);
  if (!created) return Err{"CreateGroup refused: " + why(created.error())};
  auto stored = (*c)->get_group(*created);
  if (!stored) return Err{why(stored.error())};
  return group_json(*stored);
}

Answer<json> group_get(const SessionOptions& o, GroupId group) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto g = (*c)->get_group(group);
  if (!g) return Err{"GetGroup refused: " + why(g.error())};
  return group_json(*g);
}

Answer<json> group_update(const SessionOptions& o, GroupId group, const GroupFields& f) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto g = (*c)->get_group(group);
  if (!g) return Err{"GetGroup refused: " + why(g.error())};
  apply(*g, f);
  auto updated = (*c)->update_group(*g);
  if (!updated) return Err{"UpdateGroup refused: " + why(updated.error())};
  return group_json(*updated);
}

Answer<json> group_delete(const SessionOptions& o, GroupId group) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  if (auto done = (*c)->delete_group(group); !done) return Err{"DeleteGroup refused: " + why(done.error())};
  return json{{"deleted", group}};
}

namespace {

// Runs --exec with the payload on stdin: exit 0 acks. A command that does not
// read its input closes the pipe early (EPIPE; SIGPIPE is ignored): only its
// exit status decides.
Answer<bool> run_exec(const std::string& command, const Bytes& payload) {
  FILE* child = ::popen(command.c_str(), "w");
  if (!child) return Err{"cannot run " + command};
  std::fwrite(payload.data(), 1, payload.size(), child);
  int status = ::pclose(child);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The first refusal among pipelined lease actions; written on the client's io thread.
struct FirstFailure {
  std::mutex m;
  std::optional<std::string> why;
  void note(std::string what) {
    std::lock_guard lock(m);
    if (!why) why = std::move(what);
  }
  std::optional<std::string> get() {
    std::lock_guard lock(m);
    return why;
  }
};

}  // namespace

// The records on hand (up to kBatch) are run and printed, the output flushed,
// then their acks or nacks pipelined: a record is shown before its ack is
// sent, and the broker sees acks as fast as they are made. A stop request is
// seen between records, at most kStopPoll late.
Answer<std::uint64_t> consume(const SessionOptions& o, const ConsumeOptions& opts, const Sink& out,
                              const Stopped& stopped) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto consumer = (*c)->consume({.group = GroupId{opts.group}, .window_bytes = 4 << 20, .auto_extend = opts.auto_extend});
  if (!consumer) return Err{"Subscribe refused: " + why(consumer.error())};
  const std::size_t batch_limit = opts.exec.empty() ? 256 : 1;  // a command's record is acked when it ends
  auto idle = opts.idle_ms == 0 ? std::chrono::milliseconds(std::chrono::hours(24)) : std::chrono::milliseconds(opts.idle_ms);
  auto failure = std::make_shared<FirstFailure>();
  std::vector<std::pair<sdk::Lease, bool>> batch;  // (lease, ack?)
  std::uint64_t n = 0;
  auto idle_since = std::chrono::steady_clock::now();
  while ((opts.count == 0 || n < opts.count) && !stopped()) {
    if (auto f = failure->get()) return Err{*f};
    auto lease = next_flushing(**consumer, out, std::min<std::chrono::milliseconds>(idle, kStopPoll));
    if (!lease) return Err{why(lease.error())};
    if (!*lease) {
      if (std::chrono::steady_clock::now() - idle_since >= idle) break;  // the group has nothing more for us now
      continue;
    }
    batch.clear();
    while (true) {
      bool ok = true;
      if (!opts.exec.empty()) {
        auto ran = run_exec(opts.exec, (*lease)->record.payload);
        if (!ran) return Err{ran.error()};
        ok = *ran;
      }
      json j = record_json((*lease)->record, false);
      j["action"] = ok ? "ack" : "nack";
      out.record(j);
      batch.emplace_back(std::move(**lease), ok);
      if (batch.size() == batch_limit || (opts.count != 0 && n + batch.size() == opts.count) || stopped()) break;
      lease = (*consumer)->next(std::chrono::milliseconds(0));
      if (!lease || !*lease) break;  // an error shows again at the next wait
    }
    out.flush();  // before the acks: an acked record has always been shown
    for (auto& [l, ok] : batch) {
      auto done = [failure, ok = ok](sdk::Outcome<Unit> r) {
        if (!r) failure->note(std::string(ok ? "Ack" : "Nack") + " refused: " + why(r.error()));
      };
      if (ok) (*consumer)->ack(l, done);
      else (*consumer)->nack(l, done);
    }
    n += batch.size();
    idle_since = std::chrono::steady_clock::now();
  }
  if (auto settled = (*consumer)->flush(kSettle); !settled) return Err{why(settled.error())};
  if (auto f = failure->get()) return Err{*f};
  return n;
}

// ---- checkpoints --------------------------------------------------------------------

Answer<json> checkpoint_get(const SessionOptions& o, std::optional<Sequence> sequence) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto receipt = (*c)->checkpoint(sequence);
  if (!receipt) return Err{"GetCheckpoint refused: " + why(receipt.error())};
  auto provider = provider_record(o, receipt->provider);
  if (!provider) return Err{provider.error()};
  return json{{"verdict", sdk::verdict_name(verify_checkpoint(*receipt, *provider))},
              {"first_sequence", receipt->first_sequence},
              {"last_sequence", receipt->last_sequence},
              {"snapshot_height", receipt->snapshot_height},
              {"committed_at_ms", receipt->committed_at_ms},
              {"checkpoint_id", devchain::json::hex0x(checkpoint_id(*receipt))},
              {"previous_checkpoint", devchain::json::hex0x(receipt->previous_checkpoint)}};
}

Answer<json> checkpoint_verify(const SessionOptions& o, bool progress) {
  auto c = connect(o);
  if (!c) return Err{c.error()};
  auto latest = (*c)->checkpoint();
  if (!latest && latest.error().is(ErrorCode::kCheckpointNotFound))  // nothing committed: trivially valid
    return json{{"verdict", sdk::verdict_name(CheckpointVerdict::kValid)}, {"receipts", 0}, {"verified_through", 0}};
  if (!latest) return Err{"GetCheckpoint refused: " + why(latest.error())};
  auto provider = provider_record(o, latest->provider);
  if (!provider) return Err{provider.error()};
  Progress bar("verified records", latest->last_sequence.value, progress);
  auto report = sdk::verify_chain(**c, *provider, [&](const sdk::ChainReport& r) { bar.update(r.last_sequence.value); });
  bar.finish();
  if (!report) return Err{why(report.error())};
  json out{{"verdict", sdk::verdict_name(report->verdict)}, {"receipts", report->receipts},
           {"verified_through", report->last_sequence}};
  if (!report->problem.empty()) out["problem"] = report->problem;
  return out;
}

// ---- load and health ------------------------------------------------------------------

Answer<json> bench(const SessionOptions& o, const BenchOptions& b) {
  auto admin = connect(o);
  if (!admin) return Err{admin.error()};
  auto lane = (*admin)->create_lane();
  if (!lane) return Err{"CreateLane refused: " + why(lane.error())};
  GroupId group;
  if (b.consumers > 0) {
    GroupConfigV2 g;
    g.lane_id = *lane;
    g.start = StartAt{Sequence{1}};
    g.visibility_timeout_ms = g.max_visibility_ms = 30'000;
    g.max_in_flight = 65'536;  // room for pipelined acks: consumers are not held back by the group
    g.max_in_flight_per_holder = 4'096;
    g.max_attempts = 5;
    g.record_deadline_ms = 3'600'000;
    auto created = (*admin)->create_group(g);
    if (!created) return Err{"CreateGroup refused: " + why(created.error())};
    group = *created;
  }
  using Clock = std::chrono::steady_clock;
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(b.seconds));
  std::mutex m;
  std::vector<double> latencies_ms;
  std::atomic<std::uint64_t> appended{0}, consumed{0};
  std::optional<std::string> failure;
  std::vector<std::thread> threads;
  for (int p = 0; p < b.producers; ++p) {
    threads.emplace_back([&] {
      auto c = connect(o);
      if (!c) {
        std::lock_guard guard(m);
        failure = c.error();
        return;
      }
      std::mutex pm;
      std::condition_variable cv;
      int outstanding = 0;
      std::vector<double> mine;
      Bytes payload(b.payload, 0x5a);
      while (Clock::now() < end) {
        std::unique_lock lock(pm);
        cv.wait(lock, [&] { return outstanding < b.window; });
        ++outstanding;
        lock.unlock();
        auto sent = Clock::now();
        (*c)->append(*lane, payload, [&, sent](sdk::Outcome<Sequence> r) {
          std::lock_guard guard(pm);
          --outstanding;
          if (r) {
            ++appended;
            mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
          }
          cv.notify_all();
        });
      }
      std::unique_lock lock(pm);
      cv.wait(lock, [&] { return outstanding == 0; });
      std::lock_guard guard(m);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (int k = 0; k < b.consumers; ++k) {
    threads.emplace_back([&] {
      auto c = connect(o);
      if (!c) return;
      auto consumer = (*c)->consume({.lane = *lane, .group = group, .window_bytes = 4 << 20});
      if (!consumer) return;
      while (Clock::now() < end + std::chrono::seconds(1)) {
        auto l = (*consumer)->next(std::chrono::milliseconds(100));
        if (!l || !*l) continue;
        (*consumer)->ack(**l, [&](sdk::Outcome<Unit> r) { consumed += r.ok(); });  // pipelined
      }
      (void)(*consumer)->flush(kSettle);
    });
  }
  for (auto& t : threads) t.join();
  if (failure) return Err{*failure};
  double seconds = b.seconds;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double q) {
    return latencies_ms.empty() ? 0.0 : latencies_ms[static_cast<std::size_t>(q * static_cast<double>(latencies_ms.size() - 1))];
  };
  return json{{"producers", b.producers},
              {"consumers", b.consumers},
              {"payload_bytes", b.payload},
              {"seconds", seconds},
              {"appends", appended.load()},
              {"appends_per_sec", static_cast<double>(appended.load()) / seconds},
              {"append_latency_ms", {{"p50", pct(0.50)}, {"p99", pct(0.99)}, {"max", pct(1.0)}}},
              {"acked", consumed.load()},
              {"acked_per_sec", static_cast<double>(consumed.load()) / seconds}};
}

Answer<json> status(const std::string& admin_url) {
  auto http = devchain::HttpClient::from_url(admin_url);
  if (!http) return Err{"not an http:// URL: " + admin_url};
  auto health = http->get_text("/healthz");
  if (!health) return Err{"cbqsd's admin listener is unreachable at " + admin_url + ": " + health.error().message};
  auto ready = http->get_text("/readyz");
  auto metrics = http->get_text("/metrics");
  if (!ready || !metrics) return Err{std::string("cbqsd's admin listener stopped answering")};
  // The series a person looks at first; summed over their labels.
  const char* kMain[] = {"cbqs_connections",       "cbqs_sessions",          "cbqs_subscriptions",
                         "cbqs_appends_total",     "cbqs_deliveries_total",  "cbqs_commit_batches_total",
                         "cbqs_errors_total",      "cbqs_sync_failures_total", "cbqs_snapshot_height",
                         "cbqs_stream_retained_bytes", "cbqs_group_in_flight", "cbqs_group_dead_letters"};
  auto sums = net::sum_series(metrics->body);
  json main = json::object();
  for (const char* name : kMain) main[name] = sums.contains(name) ? sums[name] : 0.0;
  std::string why_not = ready->body;
  while (!why_not.empty() && why_not.back() == '\n') why_not.pop_back();
  return json{{"healthy", health->status == 200}, {"ready", ready->status == 200},
              {"readiness", why_not}, {"metrics", main}};
}

}  // namespace cowboy::cbqs_cli
