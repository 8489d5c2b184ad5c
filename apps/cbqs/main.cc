// cbqs: the CBQS command-line tool. Human output by default; --json on every
// command prints one JSON document for scripts (tail and consume: one JSON line
// per record, as it arrives). Errors name the failing check and exit 1; usage
// errors exit 2.
//
//   cbqs keygen --out holder.key
//   cbqs chain status | params | provider ADDR | stream ID | account OWNER PROVIDER
//   cbqs chain register-provider | update-provider | top-up | create-stream | update-stream | close-stream | settle | withdraw | transfer
//   cbqs grant mint --admin-key F --stream ID --holder-key F --verbs append,replay --out grant.hex
//   cbqs lanes create|close|list --dev .cbqs-dev
//   cbqs append --dev .cbqs-dev "hello" "world"        cbqs produce --dev .cbqs-dev --lane 1 < lines.txt
//   cbqs tail --dev .cbqs-dev --from 1 [--follow]
//   cbqs groups create|get|update|delete|list|info|expired|replay    cbqs consume --dev .cbqs-dev --group 1
//   cbqs stream info --dev .cbqs-dev      cbqs settings get|set --dev .cbqs-dev --retention-ms 86400000
//   cbqs checkpoint get|verify --dev .cbqs-dev
//   cbqs bench --dev .cbqs-dev --producers 4 --consumers 2     cbqs status
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"
#include "cbqs/wire/verbs.h"
#include "common/clock.h"
#include "data_plane.h"
#include "inspect.h"
#include "tables.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"
#include "devchain/wallet.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;
using nlohmann::json;

namespace {

bool g_json = false;

// SIGINT or SIGTERM during tail or consume: the record in hand is finished and
// printed, then the command exits with 128 + the signal's number.
volatile std::sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int signal) { g_stop_signal = signal; }
void catch_stop_signals() {
  struct sigaction a{};
  a.sa_handler = on_stop_signal;
  a.sa_flags = SA_RESTART;
  sigemptyset(&a.sa_mask);
  ::sigaction(SIGINT, &a, nullptr);
  ::sigaction(SIGTERM, &a, nullptr);
}

// Human output: the command's own lines when it has a formatter, else indented JSON.
using Human = std::function<std::string(const json&)>;
int print(const json& j, const Human& human = {}) {
  if (g_json)
    std::cout << j.dump() << "\n";
  else if (human)
    std::cout << human(j);
  else
    std::cout << j.dump(2) << "\n";
  return 0;
}

std::string str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

int fail(const std::string& message) {
  if (g_json)
    std::cout << json{{"error", message}}.dump() << "\n";
  else
    std::cerr << "cbqs: " << message << "\n";
  return 1;
}

template <typename T>
std::optional<T> hex_arg(const std::string& text);
template <>
std::optional<Address> hex_arg(const std::string& t) { return fixed_from_hex<20>(t); }
template <>
std::optional<Bytes32> hex_arg(const std::string& t) { return fixed_from_hex<32>(t); }

std::uint16_t parse_verbs(const std::string& list) {
  std::uint16_t verbs = 0;
  std::stringstream in(list);
  for (std::string v; std::getline(in, v, ',');) {
    const auto* named = std::find_if(std::begin(cbqs::verb::kNames), std::end(cbqs::verb::kNames),
                                     [&](const auto& n) { return n.name == v; });
    if (named == std::end(cbqs::verb::kNames)) throw CLI::ValidationError("--verbs", "unknown verb " + v);
    verbs |= named->bits;
  }
  return verbs;
}

cbqs::LaneScope parse_lanes(const std::string& text) {
  if (text == "any") return cbqs::LaneScopeAny{};
  std::vector<cbqs::LaneId> ids;
  std::stringstream in(text);
  for (std::string v; std::getline(in, v, ',');) ids.push_back(cbqs::LaneId{std::stoull(v)});
  std::sort(ids.begin(), ids.end());
  if (ids.size() == 1) return cbqs::LaneScopeExact{ids[0]};
  return cbqs::LaneScopeSet{ids};
}

json receipt_json(const devchain::TxReceipt& r) {
  json events = json::array();
  for (const auto& e : r.events) events.push_back(devchain::json::event_to_json(e));
  return json{{"status", r.ok() ? "applied" : "rejected"}, {"error", r.error.value_or("")}, {"height", r.height},
              {"tx_hash", devchain::json::hex0x(r.tx_hash)}, {"events", events}};
}

}  // namespace

int main(int argc, char** argv) {
  crypto::init();
  // A closed pipe (an --exec command that does not read, `| head`) is an EPIPE
  // on that write, not the end of cbqs.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"cbqs: the CBQS command-line tool"};
  app.set_version_flag("--version", COWBOY_VERSION);
  app.require_subcommand(1);
  app.add_flag("--json", g_json, "print one JSON document (for scripts)");
  std::string chain_url = "http://127.0.0.1:7545";
  auto* chain_flag = app.add_option("--chain-url", chain_url, "devchain HTTP API (with --dev: that instance's)")->capture_default_str();
  int rc = 0;

  // ---- keygen ----
  auto* keygen = app.add_subcommand("keygen", "create a 32-byte key file (mode 0600) and print its public identities");
  std::string key_out;
  keygen->add_option("--out", key_out, "file to create")->required();
  keygen->callback([&] {
    if (std::filesystem::exists(key_out)) return void(rc = fail(key_out + " exists; refusing to overwrite a key"));
    auto key = devchain::load_or_create_secret(key_out);
    if (!key) return void(rc = fail(key.error()));
    rc = print({{"file", key_out},
                {"ed25519_public_key", devchain::json::hex0x(cbqs::ed25519_public_key(*key).key)},
                {"chain_address", devchain::json::hex0x(*crypto::secp256k1_address(*key))}});
  });

  // ---- chain ----
  auto* chain_cmd = app.add_subcommand("chain", "read and write the chain registry");
  chain_cmd->require_subcommand(1);
  std::string sender_key = devchain::default_dev_key_path().string();
  chain_cmd->add_option("--key", sender_key, "the sender's secp256k1 key file (for writes)")->capture_default_str();
  auto client = [&]() -> std::optional<devchain::HttpClient> { return devchain::HttpClient::from_url(chain_url); };
  auto show = [&](auto&& get, auto&& to_json) {
    auto c = client();
    if (!c) return void(rc = fail("--chain-url must be http://host:port"));
    auto r = get(*c);
    if (!r) return void(rc = fail(std::string(devchain::api_error_name(r.error().code)) + ": " + r.error().message));
    rc = print(to_json(*r));
  };
  chain_cmd->add_subcommand("status", "height and chain_instance_id")->callback([&] {
    show([](auto& c) { return c.height(); }, [&](std::uint64_t h) {
      return json{{"height", h}, {"chain_instance_id", devchain::json::hex0x(*client()->chain_instance_id())}};
    });
  });
  chain_cmd->add_subcommand("params", "every cbqs.* parameter")->callback([&] {
    show([](auto& c) { return c.params(); }, devchain::json::params_to_json);
  });
  std::string addr_arg, id_arg, addr2_arg;
  auto* provider_cmd = chain_cmd->add_subcommand("provider", "a provider record");
  provider_cmd->add_option("address", addr_arg)->required();
  provider_cmd->callback([&] {
    auto a = hex_arg<Address>(addr_arg);
    if (!a) return void(rc = fail("address must be 20 bytes of hex"));
    show([&](auto& c) { return c.provider(*a); }, devchain::json::provider_to_json);
  });
  auto* stream_cmd = chain_cmd->add_subcommand("stream", "a stream record");
  stream_cmd->add_option("stream_id", id_arg)->required();
  stream_cmd->callback([&] {
    auto id = hex_arg<Bytes32>(id_arg);
    if (!id) return void(rc = fail("stream_id must be 32 bytes of hex"));
    show([&](auto& c) { return c.stream(*id); }, devchain::json::stream_to_json);
  });
  auto* account_cmd = chain_cmd->add_subcommand("account", "the CBQS account of (owner, provider)");
  account_cmd->add_option("owner", addr_arg)->required();
  account_cmd->add_option("provider", addr2_arg)->required();
  account_cmd->callback([&] {
    auto o = hex_arg<Address>(addr_arg), p = hex_arg<Address>(addr2_arg);
    if (!o || !p) return void(rc = fail("owner and provider must be 20 bytes of hex"));
    show([&](auto& c) { return c.account(*o, *p); }, devchain::json::account_to_json);
  });

  // Writes: build an instruction, sign it with --key, wait for the receipt.
  auto submit = [&](devchain::TxBody body, const std::function<void(json&)>& decorate = {}) {
    auto c = client();
    if (!c) return void(rc = fail("--chain-url must be http://host:port"));
    auto key = devchain::load_key(sender_key);
    if (!key) return void(rc = fail(key.error()));
    devchain::Wallet wallet(*c, *key);
    auto r = wallet.send_and_wait(std::move(body));
    if (!r) return void(rc = fail(std::string(devchain::api_error_name(r.error().code)) + ": " + r.error().message));
    json out = receipt_json(*r);
    if (decorate) decorate(out);
    rc = print(out);
    if (!r->ok()) rc = 1;
  };
  auto instruction = [&](cbqs::CbqsInstructionV2 i, const std::function<void(json&)>& decorate = {}) {
    submit(devchain::CbqsCall{cbqs::encode(i)}, decorate);
  };
  std::string signing_key_file, endpoint_arg, amount_arg, admin_key_file;
  std::uint64_t max_streams = 1'000, owner_nonce = 0;
  auto* reg = chain_cmd->add_subcommand("register-provider", "register the sender as a provider");
  reg->add_option("--signing-key", signing_key_file, "Ed25519 seed file of the checkpoint signing key")->required();
  reg->add_option("--endpoint", endpoint_arg, "wss:// endpoint")->required();
  reg->add_option("--max-streams", max_streams)->capture_default_str();
  reg->callback([&] {
    auto seed = devchain::load_secret(signing_key_file);
    if (!seed) return void(rc = fail(seed.error()));
    instruction(cbqs::RegisterProviderV2{cbqs::ed25519_public_key(*seed), {Bytes(endpoint_arg.begin(), endpoint_arg.end())},
                                         max_streams, true, Bytes32{}});
  });
  std::vector<std::string> endpoints_arg;
  std::optional<std::uint64_t> new_max_streams;
  std::optional<bool> accepts_new;
  auto* upd = chain_cmd->add_subcommand("update-provider", "rotate the sender's signing key, endpoints or capacity");
  upd->add_option("--signing-key", signing_key_file, "Ed25519 seed file of the new checkpoint signing key");
  upd->add_option("--endpoint", endpoints_arg, "wss:// endpoint (repeat for several; replaces the list)");
  upd->add_option("--max-streams", new_max_streams);
  upd->add_option("--accepts-new", accepts_new, "true or false: whether new streams may be placed here");
  upd->callback([&] {
    cbqs::UpdateProviderV2 u;
    if (!signing_key_file.empty()) {
      auto seed = devchain::load_secret(signing_key_file);
      if (!seed) return void(rc = fail(seed.error()));
      u.signing_key = cbqs::ed25519_public_key(*seed);
    }
    if (!endpoints_arg.empty()) {
      u.endpoints.emplace();
      for (const auto& e : endpoints_arg) u.endpoints->push_back(Bytes(e.begin(), e.end()));
    }
    u.max_streams = new_max_streams;
    u.accepts_new = accepts_new;
    if (!u.signing_key && !u.endpoints && !u.max_streams && !u.accepts_new)
      return void(rc = fail("nothing to update: give --signing-key, --endpoint, --max-streams or --accepts-new"));
    instruction(u);
  });
  auto* topup = chain_cmd->add_subcommand("top-up", "fund the (owner, provider) account");
  topup->add_option("--owner", addr_arg)->required();
  topup->add_option("--provider", addr2_arg)->required();
  topup->add_option("--amount", amount_arg, "nano-CBY")->required();
  topup->callback([&] {
    auto o = hex_arg<Address>(addr_arg), p = hex_arg<Address>(addr2_arg);
    auto amount = u128_from_string(amount_arg);
    if (!o || !p || !amount) return void(rc = fail("--owner/--provider must be addresses and --amount a decimal"));
    instruction(cbqs::TopUpAccountV2{*o, *p, *amount});
  });
  auto* create = chain_cmd->add_subcommand("create-stream", "create a stream owned by the sender");
  create->add_option("--provider", addr_arg)->required();
  create->add_option("--admin-key", admin_key_file, "Ed25519 seed file of the stream's admin key")->required();
  create->add_option("--nonce", owner_nonce, "owner_nonce")->capture_default_str();
  create->callback([&] {
    auto p = hex_arg<Address>(addr_arg);
    auto seed = devchain::load_secret(admin_key_file);
    if (!p || !seed) return void(rc = fail("--provider must be an address and --admin-key a key file"));
    // The new stream's id on top, for scripts: the StreamCreated event's.
    instruction(cbqs::CreateStreamV2{owner_nonce, *p, cbqs::ed25519_public_key(*seed)}, [](json& out) {
      for (const auto& e : out["events"])
        if (e.contains("stream_id") && e.value("type", "") == "StreamCreated") out["stream_id"] = e["stream_id"];
    });
  });
  bool bump = false;
  auto* update = chain_cmd->add_subcommand("update-stream", "rotate the admin key and/or bump the generation");
  update->add_option("--stream", id_arg)->required();
  update->add_option("--new-admin-key", admin_key_file, "Ed25519 seed file of the new admin key");
  update->add_flag("--bump-generation", bump, "revoke every outstanding grant");
  update->callback([&] {
    auto id = hex_arg<Bytes32>(id_arg);
    if (!id) return void(rc = fail("--stream must be 32 bytes of hex"));
    std::optional<cbqs::SigningPublicKey> key;
    if (!admin_key_file.empty()) {
      auto seed = devchain::load_secret(admin_key_file);
      if (!seed) return void(rc = fail(seed.error()));
      key = cbqs::ed25519_public_key(*seed);
    }
    instruction(cbqs::UpdateStreamV2{*id, key, bump});
  });
  auto* close = chain_cmd->add_subcommand("close-stream", "close a stream");
  close->add_option("--stream", id_arg)->required();
  close->callback([&] {
    auto id = hex_arg<Bytes32>(id_arg);
    if (!id) return void(rc = fail("--stream must be 32 bytes of hex"));
    instruction(cbqs::CloseStreamV2{*id});
  });
  auto* settle = chain_cmd->add_subcommand("settle", "settle an account's rent now");
  settle->add_option("--owner", addr_arg)->required();
  settle->add_option("--provider", addr2_arg)->required();
  settle->callback([&] {
    auto o = hex_arg<Address>(addr_arg), p = hex_arg<Address>(addr2_arg);
    if (!o || !p) return void(rc = fail("--owner and --provider must be addresses"));
    instruction(cbqs::SettleAccountV2{*o, *p});
  });
  auto* withdraw = chain_cmd->add_subcommand("withdraw", "withdraw from the sender's account with a provider");
  withdraw->add_option("--provider", addr_arg)->required();
  withdraw->add_option("--amount", amount_arg, "nano-CBY (absent: the whole balance)");
  withdraw->callback([&] {
    auto p = hex_arg<Address>(addr_arg);
    if (!p) return void(rc = fail("--provider must be an address"));
    std::optional<u128> amount;
    if (!amount_arg.empty()) amount = u128_from_string(amount_arg);
    instruction(cbqs::WithdrawAccountV2{*p, amount});
  });
  auto* transfer = chain_cmd->add_subcommand("transfer", "move native balance (devchain)");
  transfer->add_option("--to", addr_arg)->required();
  transfer->add_option("--amount", amount_arg)->required();
  transfer->callback([&] {
    auto to = hex_arg<Address>(addr_arg);
    auto amount = u128_from_string(amount_arg);
    if (!to || !amount) return void(rc = fail("--to must be an address and --amount a decimal"));
    submit(devchain::Transfer{*to, *amount});
  });

  // ---- grant mint ----
  auto* grant_cmd = app.add_subcommand("grant", "stream grants");
  grant_cmd->require_subcommand(1);
  auto* mint = grant_cmd->add_subcommand("mint", "sign a StreamGrantV2 with the stream's admin key");
  std::string holder_file, verbs_arg = "append,replay", lanes_arg = "any", grant_out;
  std::uint64_t ttl_s = 3'600, group_arg = 0;
  mint->add_option("--admin-key", admin_key_file)->required();
  mint->add_option("--stream", id_arg)->required();
  mint->add_option("--holder-key", holder_file, "the holder's Ed25519 seed file (only its public key is used)")->required();
  mint->add_option("--verbs", verbs_arg, "append,consume,replay,lanes,groups,settings or all")->capture_default_str();
  mint->add_option("--lanes", lanes_arg, "any, a lane id, or a comma list")->capture_default_str();
  mint->add_option("--group", group_arg, "an exact group id (default: any)");
  mint->add_option("--ttl", ttl_s, "seconds the grant is valid (at least 1)")->check(CLI::PositiveNumber)->capture_default_str();
  mint->add_option("--out", grant_out, "file for the grant's hex (default: print it)");
  mint->callback([&] {
    auto id = hex_arg<Bytes32>(id_arg);
    auto admin = devchain::load_secret(admin_key_file);
    auto holder = devchain::load_secret(holder_file);
    if (!id || !admin || !holder) return void(rc = fail("--stream, --admin-key and --holder-key must all be valid"));
    auto c = client();
    auto stream = c ? c->stream(*id) : devchain::ApiResult<cbqs::StreamRecordV2>(Err{devchain::ApiError{}});
    if (!stream) return void(rc = fail("cannot read the stream from the chain (its generation is needed)"));
    cbqs::GrantTerms terms;
    crypto::random_bytes(terms.nonce);
    terms.verbs = parse_verbs(verbs_arg);
    terms.lanes = parse_lanes(lanes_arg);
    if (group_arg != 0) terms.groups = cbqs::GroupScopeExact{cbqs::GroupId{group_arg}};
    terms.not_before_ms = SystemClock().now_ms() - 60'000;
    terms.expires_at_ms = terms.not_before_ms + 60'000 + ttl_s * 1'000;
    cbqs::StreamGrantV2 g = cbqs::mint_grant(*stream, cbqs::ed25519_public_key(*holder), std::move(terms), *admin);
    std::string hex = to_hex(cbqs::encode(g));
    if (!grant_out.empty()) std::ofstream(grant_out) << hex << "\n";
    rc = print({{"grant_id", devchain::json::hex0x(cbqs::grant_id(g))}, {"expires_at_ms", g.expires_at_ms},
                {"grant", grant_out.empty() ? hex : grant_out}});
  });

  // ---- data plane ----
  cbqs_cli::SessionOptions so;
  std::string dev_dir;
  auto session_flags = [&](CLI::App* cmd) {
    cmd->add_option("--endpoint", so.endpoint, "the provider's wss:// endpoint")->capture_default_str();
    cmd->add_option("--ca", so.ca_file, "a CA certificate file (default: the system roots)");
    cmd->add_option("--grant", so.grant_file, "grant file (hex)");
    cmd->add_option("--holder-key", so.holder_key, "the holder's Ed25519 seed file");
    cmd->add_option("--dev", dev_dir, "use the grant, holder key and (pinned) certificate of a cbqsd --dev data dir");
    cmd->add_flag("--allow-private", so.allow_private, "allow loopback and private destinations (development only, §11.4)");
  };
  std::string admin_url = "http://127.0.0.1:7448", stream_hex;
  // --dev DIR also says where that instance listens, unless a flag says otherwise.
  auto prepare = [&](CLI::App* cmd) {
    so.dev_dir = dev_dir;
    auto where = cbqs_cli::dev_endpoints(dev_dir);
    auto given = [&](const char* flag) { return cmd->get_option_no_throw(flag) && cmd->get_option(flag)->count() > 0; };
    if (!given("--endpoint") && where.contains("endpoint")) so.endpoint = where["endpoint"];
    if (!given("--admin") && where.contains("admin")) admin_url = where["admin"];
    if (chain_flag->count() == 0 && where.contains("chain")) chain_url = where["chain"];
    so.chain_url = chain_url;
  };
  auto answer = [&](const cbqs_cli::Answer<json>& r, const Human& human = {}) {
    rc = r ? print(*r, human) : fail(r.error());
  };
  // Records stream as they arrive: a text line each, or (with --json) one
  // JSON object per line.
  bool follow = false, hex = false;
  cbqs_cli::Sink out;
  out.flush = [] { std::cout.flush(); };
  out.record = [&](const json& record) {
    if (g_json) {
      std::cout << record.dump() << '\n';
      return;
    }
    std::cout << "#" << record["sequence"] << " lane " << record["lane"] << ": ";
    if (record.contains("payload")) std::cout << str(record["payload"]);
    else if (record.contains("payload_hex")) std::cout << str(record["payload_hex"]);
    else std::cout << "(not UTF-8, base64) " << str(record["payload_base64"]);
    if (record.contains("action")) std::cout << " (" << str(record["action"]) << ")";
    std::cout << '\n';
  };
  auto stopped = [] { return g_stop_signal != 0 || !std::cout.good(); };
  auto streamed = [&](const cbqs_cli::Answer<std::uint64_t>& r) {
    if (!r) return void(rc = fail(r.error()));
    rc = g_stop_signal != 0 ? 128 + g_stop_signal : 0;
  };

  std::uint64_t lane = 0;
  std::string room, seat;
  auto* lanes_cmd = app.add_subcommand("lanes", "lanes: create (plain or room), close, list");
  lanes_cmd->require_subcommand(1);
  auto* lcreate = lanes_cmd->add_subcommand("create", "create a lane (or open a room lane: --room [--seat])");
  session_flags(lcreate);
  lcreate->add_option("--room", room, "room id (32 bytes hex): the room's message lane");
  lcreate->add_option("--seat", seat, "seat id (32 bytes hex): that seat's inbox in --room");
  lcreate->callback([&] {
    prepare(lcreate);
    answer(cbqs_cli::lane_create(so, room, seat), [](const json& j) { return "lane " + str(j["lane"]) + "\n"; });
  });
  auto* lclose = lanes_cmd->add_subcommand("close", "close a lane (no more appends; a room never reopens)");
  session_flags(lclose);
  lclose->add_option("--lane", lane, "lane id")->required();
  lclose->callback([&] {
    prepare(lclose);
    answer(cbqs_cli::lane_close(so, cbqs::LaneId{lane}));
  });
  auto* llist = lanes_cmd->add_subcommand("list", "every lane the grant's scope shows");
  session_flags(llist);
  llist->callback([&] {
    prepare(llist);
    answer(cbqs_cli::lane_list(so), [](const json& j) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& l : j) rows.push_back({str(l["lane"]), str(l["status"])});
      return rows.empty() ? std::string("no lanes yet (cbqs lanes create)\n") : cbqs_cli::table({"lane", "status"}, rows);
    });
  });

  std::vector<std::string> messages;
  auto* append_cmd = app.add_subcommand("append", "append messages durably; prints their sequences");
  session_flags(append_cmd);
  append_cmd->add_option("--lane", lane, "lane id (default: the stream's first open lane, created if none)");
  append_cmd->add_option("messages", messages, "one record per argument")->required();
  append_cmd->callback([&] {
    prepare(append_cmd);
    answer(cbqs_cli::append(so, cbqs::LaneId{lane}, messages), [](const json& j) {
      std::string out;
      for (const auto& a : j) out += "appended #" + str(a["sequence"]) + " to lane " + str(a["lane"]) + "\n";
      return out;
    });
  });
  std::string input_file;
  auto* produce_cmd = app.add_subcommand("produce", "append every line of stdin (or --file), pipelined, with progress");
  session_flags(produce_cmd);
  produce_cmd->add_option("--lane", lane, "lane id (default: the stream's first open lane, created if none)");
  produce_cmd->add_option("--file", input_file, "read lines from this file instead of stdin");
  produce_cmd->callback([&] {
    prepare(produce_cmd);
    auto human = [](const json& j) {
      return "appended " + cbqs_cli::grouped(j["records"].get<std::uint64_t>()) + " records to lane " + str(j["lane"]) +
             " (#" + str(j["first_sequence"]) + " to #" + str(j["last_sequence"]) + ") in " +
             cbqs_cli::duration(j["seconds"].get<double>()) + ", " + cbqs_cli::per_second(j["records_per_sec"].get<double>()) + "\n";
    };
    if (input_file.empty()) return answer(cbqs_cli::produce(so, cbqs::LaneId{lane}, std::cin, std::nullopt, !g_json), human);
    std::ifstream counting(input_file);
    if (!counting) return void(rc = fail("cannot read " + input_file));
    std::uint64_t lines = static_cast<std::uint64_t>(
        std::count(std::istreambuf_iterator<char>(counting), std::istreambuf_iterator<char>(), '\n'));
    std::ifstream in(input_file);
    answer(cbqs_cli::produce(so, cbqs::LaneId{lane}, in, lines, !g_json), human);
  });
  cbqs_cli::TailOptions tail_opts;
  auto* tail_cmd = app.add_subcommand("tail", "read records from a sequence: to the current end, or --follow");
  session_flags(tail_cmd);
  tail_cmd->add_option("--from", tail_opts.from, "first sequence (0: only new records)")->capture_default_str();
  tail_cmd->add_option("--count", tail_opts.count, "stop after this many");
  tail_cmd->add_option("--lane", tail_opts.lane, "only this lane's records");
  tail_cmd->add_flag("--follow", follow, "keep waiting for new records");
  tail_cmd->add_flag("--hex", hex, "show payloads as hex");
  tail_cmd->callback([&] {
    prepare(tail_cmd);
    tail_opts.follow = follow;
    tail_opts.hex = hex;
    catch_stop_signals();
    streamed(cbqs_cli::tail(so, tail_opts, out, stopped));
  });

  // ---- consumer groups ----
  cbqs_cli::GroupFields gf;
  std::uint64_t group = 0;
  auto* groups_cmd = app.add_subcommand("groups", "consumer groups: create, get, update, delete; dead letters");
  groups_cmd->require_subcommand(1);
  auto group_fields = [&](CLI::App* cmd) {
    cmd->add_option("--visibility-ms", gf.visibility_timeout_ms, "lease length before redelivery");
    cmd->add_option("--max-visibility-ms", gf.max_visibility_ms, "the most Extend can stretch a lease to");
    cmd->add_option("--max-in-flight", gf.max_in_flight, "leases outstanding in the group");
    cmd->add_option("--max-in-flight-per-holder", gf.max_in_flight_per_holder, "leases outstanding per consumer");
    cmd->add_option("--max-attempts", gf.max_attempts, "deliveries before a record is dead-lettered");
    cmd->add_option("--record-deadline-ms", gf.record_deadline_ms, "age after which a record is dead-lettered");
  };
  auto* gcreate = groups_cmd->add_subcommand("create", "create a group on a lane (prints its config)");
  session_flags(gcreate);
  group_fields(gcreate);
  gcreate->add_option("--lane", lane, "the lane the group consumes")->required();
  gcreate->add_option("--start-at", gf.start_at, "first sequence (default: records appended from now on)");
  gcreate->callback([&] {
    prepare(gcreate);
    answer(cbqs_cli::group_create(so, cbqs::LaneId{lane}, gf), [](const json& j) {
      return "group " + str(j["group"]) + " on lane " + str(j["lane"]) + " (visibility " +
             str(j["visibility_timeout_ms"]) + " ms, max attempts " + str(j["max_attempts"]) + ")\n";
    });
  });
  auto* gget = groups_cmd->add_subcommand("get", "show a group's config");
  session_flags(gget);
  gget->add_option("--group", group, "group id")->required();
  gget->callback([&] {
    prepare(gget);
    answer(cbqs_cli::group_get(so, cbqs::GroupId{group}));
  });
  auto* gupdate = groups_cmd->add_subcommand("update", "change a group's mutable fields");
  session_flags(gupdate);
  group_fields(gupdate);
  gupdate->add_option("--group", group, "group id")->required();
  gupdate->callback([&] {
    prepare(gupdate);
    answer(cbqs_cli::group_update(so, cbqs::GroupId{group}, gf));
  });
  auto* gdelete = groups_cmd->add_subcommand("delete", "delete a group with its cycles and dead letters");
  session_flags(gdelete);
  gdelete->add_option("--group", group, "group id")->required();
  gdelete->callback([&] {
    prepare(gdelete);
    answer(cbqs_cli::group_delete(so, cbqs::GroupId{group}));
  });
  auto admin_flags = [&](CLI::App* cmd) {
    cmd->add_option("--admin", admin_url, "cbqsd's admin listener")->capture_default_str();
    cmd->add_option("--stream", stream_hex, "stream id (hex; default: the --dev grant's)");
    cmd->add_option("--dev", dev_dir, "take the stream id from a cbqsd --dev data dir");
    cmd->add_option("--group", group, "group id")->required();
  };
  auto admin_call = [&](bool redrive) {
    if (stream_hex.empty() && !dev_dir.empty()) stream_hex = cbqs_cli::dev_stream_hex(dev_dir);
    auto http = devchain::HttpClient::from_url(admin_url);
    if (!http) return fail("not an http:// URL: " + admin_url);
    std::string query = "?stream=" + stream_hex + "&group=" + std::to_string(group);
    auto r = redrive ? http->post_json("/v1/groups/redrive" + query) : http->get_json("/v1/groups/dead-letters" + query);
    if (!r) return fail("cbqsd's admin listener at " + admin_url + ": " + r.error().message);
    if (redrive) return print(*r, [&](const json& j) { 
      return "redelivering " + str(j["redriven"]) + (j["redriven"] == 1 ? " dead letter" : " dead letters") + " of group " +
             std::to_string(group) + "\n";
    });
    return print(*r, [](const json& j) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& d : j["dead_letters"]) rows.push_back({str(d["sequence"]), str(d["attempts"]), str(d["reason"])});
      std::string more = j["next_after"].is_null() ? "" : "(more: --json shows next_after)\n";
      return rows.empty() ? std::string("no dead letters\n") : cbqs_cli::table({"sequence", "attempts", "reason"}, rows) + more;
    });
  };
  cbqs_cli::AdminTarget target;
  auto target_flags = [&](CLI::App* cmd) {
    session_flags(cmd);
    cmd->add_option("--admin", target.url, "cbqsd's admin listener (default: the --dev instance's)")->capture_default_str();
    cmd->add_option("--stream", target.stream_hex, "stream id (hex; default: the grant's)");
  };
  auto prepare_target = [&](CLI::App* cmd) {
    admin_url = target.url;
    prepare(cmd);
    target.url = admin_url;
  };
  auto* glist = groups_cmd->add_subcommand("list", "every group of the stream with its backlog, leases and consumers");
  target_flags(glist);
  glist->callback([&] {
    prepare_target(glist);
    answer(cbqs_cli::groups_list(so, target), [](const json& j) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& g : j["groups"])
        rows.push_back({str(g["group"]), str(g["lane"]), cbqs_cli::grouped(g["pending"]), cbqs_cli::grouped(g["in_flight"]),
                        cbqs_cli::grouped(g["redelivered"]), cbqs_cli::grouped(g["dead_letters"]), str(g["ack_floor"]),
                        g["oldest_unacked_age_seconds"].get<double>() > 0 ? cbqs_cli::duration(g["oldest_unacked_age_seconds"]) : "-",
                        str(g["consumers"])});
      if (rows.empty()) return std::string("no groups yet (cbqs groups create --lane N)\n");
      return cbqs_cli::table({"group", "lane", "pending", "in flight", "redelivered", "dead letters", "ack floor",
                              "oldest unacked", "consumers"},
                             rows);
    });
  });
  auto* ginfo = groups_cmd->add_subcommand("info", "one group: its config and its state now");
  target_flags(ginfo);
  ginfo->add_option("--group", group, "group id")->required();
  ginfo->callback([&] {
    prepare_target(ginfo);
    answer(cbqs_cli::group_info(so, target, group), [](const json& g) {
      auto n = [&](const char* k) { return cbqs_cli::grouped(g[k]); };
      auto ms = [&](const char* k) { return cbqs_cli::duration(g[k].get<double>() / 1'000); };
      double oldest = g["oldest_unacked_age_seconds"];
      return "group " + str(g["group"]) + " on lane " + str(g["lane"]) + ", starting at " + str(g["start"]) + "\n" +
             "  pending          " + n("pending") + "\n  in flight        " + n("in_flight") + " of " + n("max_in_flight") +
             " (" + n("max_in_flight_per_holder") + " per consumer)\n  consumers        " + n("consumers") +
             "\n  ack floor        #" + str(g["ack_floor"]) + "\n  oldest unacked   " +
             (oldest > 0 ? cbqs_cli::duration(oldest) : std::string("-")) + "\n  delivered        " + n("delivered") +
             "\n  redelivered      " + n("redelivered") + "\n  acked            " + n("acked") + "\n  dead letters     " +
             n("dead_letters") + " (" + n("expired") + " expired in all)\n  visibility       " + ms("visibility_timeout_ms") +
             " (extendable to " + ms("max_visibility_ms") + ")\n  max attempts     " + n("max_attempts") +
             "\n  record deadline  " + ms("record_deadline_ms") + "\n";
    });
  });
  auto* gexpired = groups_cmd->add_subcommand("expired", "list a group's dead letters (EXPIRED records)");
  admin_flags(gexpired);
  gexpired->callback([&] {
    prepare(gexpired);
    rc = admin_call(false);
  });
  auto* greplay = groups_cmd->add_subcommand("replay", "redeliver every dead letter of a group (attempts reset)");
  admin_flags(greplay);
  greplay->callback([&] {
    prepare(greplay);
    rc = admin_call(true);
  });

  cbqs_cli::ConsumeOptions consume_opts;
  auto* consume_cmd = app.add_subcommand("consume", "compete for a group's records: print and ack each, or run --exec");
  session_flags(consume_cmd);
  consume_cmd->add_option("--group", consume_opts.group, "group id")->required();
  consume_cmd->add_option("--count", consume_opts.count, "stop after this many records (0: when idle)");
  consume_cmd->add_option("--idle-ms", consume_opts.idle_ms, "stop after this long without a record (0: never)")
      ->capture_default_str();
  consume_cmd->add_option("--exec", consume_opts.exec, "shell command per record, payload on stdin: exit 0 acks, else nacks");
  consume_cmd->callback([&] {
    prepare(consume_cmd);
    catch_stop_signals();
    streamed(cbqs_cli::consume(so, consume_opts, out, stopped));
  });

  // ---- the stream: its size and settings ----
  auto* stream_group = app.add_subcommand("stream", "the stream: its size, lanes, groups and settings");
  stream_group->require_subcommand(1);
  auto* sinfo = stream_group->add_subcommand("info", "records, bytes retained, lanes, consumers and settings");
  target_flags(sinfo);
  sinfo->callback([&] {
    prepare_target(sinfo);
    answer(cbqs_cli::stream_info(so, target), [](const json& j) {
      const auto& st = j["settings"];
      auto head = j["head"].get<std::uint64_t>(), floor = j["floor"].get<std::uint64_t>();
      return "stream " + str(j["stream"]) + "\n  records          " +
             (head == 0 ? std::string("none yet") : "#" + cbqs_cli::grouped(floor + 1) + " to #" + cbqs_cli::grouped(head)) +
             "\n  retained         " + cbqs_cli::bytes(j["retained_bytes"]) + " of " +
             cbqs_cli::bytes(st["retained_bytes_limit"]) + "\n  lanes            " + str(j["lanes"]["active"]) + " open, " +
             str(j["lanes"]["closed"]) + " closed\n  groups           " + str(j["groups"]) + "\n  subscriptions    " +
             str(j["subscriptions"]) + "\n  retention        " +
             cbqs_cli::duration(st["retention_ms"].get<double>() / 1'000) + "\n  max message      " +
             cbqs_cli::bytes(st["max_message_bytes"]) + "\n";
    });
  });
  auto* settings_cmd = app.add_subcommand("settings", "the stream's settings (§13): get, or set some of them");
  settings_cmd->require_subcommand(1);
  auto settings_human = [](const json& j) {
    std::vector<std::vector<std::string>> rows;
    for (const char* k : {"retention_ms", "retained_bytes_limit", "max_message_bytes", "max_append_bytes_per_sec",
                          "max_delivered_bytes_per_sec"})
      rows.push_back({k, cbqs_cli::grouped(j[k])});
    for (const auto& [k, v] : j["group_ceilings"].items()) rows.push_back({"group ceiling: " + k, cbqs_cli::grouped(v)});
    return cbqs_cli::table({"setting", "value"}, rows);
  };
  auto* sget = settings_cmd->add_subcommand("get", "every setting, and the chain's ceilings for groups");
  session_flags(sget);
  sget->callback([&] {
    prepare(sget);
    answer(cbqs_cli::settings_get(so), settings_human);
  });
  cbqs_cli::SettingsFields sf;
  auto* sset = settings_cmd->add_subcommand("set", "change the settings given; the others keep their value");
  session_flags(sset);
  sset->add_option("--retention-ms", sf.retention_ms, "records older than this are dropped");
  sset->add_option("--retained-bytes-limit", sf.retained_bytes_limit, "oldest records are dropped past this many bytes");
  sset->add_option("--max-message-bytes", sf.max_message_bytes, "the largest payload an append may carry");
  sset->add_option("--max-append-bytes-per-sec", sf.max_append_bytes_per_sec, "the stream's append rate limit");
  sset->add_option("--max-delivered-bytes-per-sec", sf.max_delivered_bytes_per_sec, "the stream's delivery rate limit");
  sset->callback([&] {
    prepare(sset);
    if (!sf.retention_ms && !sf.retained_bytes_limit && !sf.max_message_bytes && !sf.max_append_bytes_per_sec &&
        !sf.max_delivered_bytes_per_sec)
      return void(rc = fail("nothing to set: give at least one of the flags (cbqs settings set --help)"));
    answer(cbqs_cli::settings_set(so, sf), settings_human);
  });

  // ---- checkpoints ----
  std::uint64_t covering = 0;
  auto* checkpoint_cmd = app.add_subcommand("checkpoint", "checkpoint receipts: get one, or verify the whole chain");
  checkpoint_cmd->require_subcommand(1);
  auto verdict_rc = [&](const cbqs_cli::Answer<json>& r, const Human& human = {}) {
    answer(r, human);
    if (r && (*r)["verdict"] != "valid") rc = 1;
  };
  auto* cget = checkpoint_cmd->add_subcommand("get", "the receipt covering a sequence (or the latest), with its verdict");
  session_flags(cget);
  cget->add_option("--covering", covering, "a sequence it must cover (default: the latest)");
  cget->callback([&] {
    prepare(cget);
    verdict_rc(cbqs_cli::checkpoint_get(so, covering == 0 ? std::nullopt : std::optional(cbqs::Sequence{covering})), [](const json& j) {
      return str(j["verdict"]) + ": receipt for #" + str(j["first_sequence"]) + " to #" + str(j["last_sequence"]) +
             " at snapshot height " + str(j["snapshot_height"]) + "\n  checkpoint  " + str(j["checkpoint_id"]) +
             "\n  previous    " + str(j["previous_checkpoint"]) + "\n  committed   " + str(j["committed_at_ms"]) + " ms since 1970\n";
    });
  });
  auto* cverify = checkpoint_cmd->add_subcommand("verify", "verify every receipt and record from sequence 1");
  session_flags(cverify);
  cverify->callback([&] {
    prepare(cverify);
    verdict_rc(cbqs_cli::checkpoint_verify(so, !g_json), [](const json& j) {
      if (j["verdict"] == "valid" && j["verified_through"] == 0) return std::string("valid: the stream has no records yet\n");
      if (j["verdict"] == "valid")
        return "valid: every receipt and record through #" + str(j["verified_through"]) + " verifies\n";
      return str(j["verdict"]) + ": " + str(j["problem"]) + "\n";
    });
  });

  // ---- load and health ----
  cbqs_cli::BenchOptions bench_opts;
  auto* bench_cmd = app.add_subcommand("bench", "load generator: appends/s and latency, and acked/s with --consumers");
  session_flags(bench_cmd);
  bench_cmd->add_option("--producers", bench_opts.producers, "producer connections")->capture_default_str();
  bench_cmd->add_option("--consumers", bench_opts.consumers, "competing consumers of one group")->capture_default_str();
  bench_cmd->add_option("--payload", bench_opts.payload, "payload bytes")->capture_default_str();
  bench_cmd->add_option("--seconds", bench_opts.seconds, "duration")->capture_default_str();
  bench_cmd->add_option("--window", bench_opts.window, "appends outstanding per producer")->capture_default_str();
  bench_cmd->callback([&] {
    prepare(bench_cmd);
    answer(cbqs_cli::bench(so, bench_opts), [](const json& j) {
      const auto& l = j["append_latency_ms"];
      auto ms = [&](const char* k) { return cbqs_cli::duration(l[k].get<double>() / 1'000); };
      std::string out = str(j["producers"]) + " producers, " + str(j["payload_bytes"]) + " B payloads, " +
                        cbqs_cli::duration(j["seconds"]) + "\n  appends   " + cbqs_cli::grouped(j["appends"]) + " (" +
                        cbqs_cli::per_second(j["appends_per_sec"]) + "), latency p50 " + ms("p50") + ", p99 " + ms("p99") +
                        ", max " + ms("max") + "\n";
      if (j["consumers"].get<int>() > 0)
        out += "  acked     " + cbqs_cli::grouped(j["acked"]) + " (" + cbqs_cli::per_second(j["acked_per_sec"]) + ") by " +
               str(j["consumers"]) + " consumers\n";
      return out;
    });
  });
  auto* status_cmd = app.add_subcommand("status", "a broker's health, readiness and main metrics");
  status_cmd->add_option("--admin", admin_url, "cbqsd's admin listener")->capture_default_str();
  status_cmd->add_option("--dev", dev_dir, "the admin listener of a cbqsd --dev data dir");
  status_cmd->callback([&] {
    prepare(status_cmd);
    auto r = cbqs_cli::status(admin_url);
    answer(r, [](const json& j) {
      std::string out = std::string(j["ready"].get<bool>() ? "ready" : "NOT READY: " + str(j["readiness"])) + "\n";
      std::vector<std::vector<std::string>> rows;
      for (const auto& [k, v] : j["metrics"].items())
        rows.push_back({k, cbqs_cli::grouped(static_cast<std::uint64_t>(std::max(0.0, v.get<double>())))});
      return out + cbqs_cli::table({"metric", "value"}, rows);
    });
    if (r && !(*r)["ready"].get<bool>()) rc = 1;
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    // A usage error exits 2 (as getopt tools do); under --json it is JSON like every other error.
    if (g_json) std::cout << json{{"error", e.what()}, {"code", "usage"}}.dump() << "\n";
    else app.exit(e);
    return 2;
  }
  return rc;
}
