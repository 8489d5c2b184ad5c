// transit: the Transit v1 CLI, for people (docs/transit.md, "The CLI").
//
//   transit --dev transitd-dev identity
//   transit --dev transitd-dev principal create --id 2 --key-out alice.key --permissions inspect,read
//   transit --dev transitd-dev role create --name ops
//   transit --dev transitd-dev grant --role 3 --permissions inspect,read,write --scope pid:7
//
// --json prints the node's answer (a Receipt, Response or Rejection) as one
// JSON document. Without --dev: --endpoint HOST:PORT --realm R --principal N --key FILE.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "common/keyfile.h"
#include "net/host_port.h"
#include "transit/client.h"
#include "transit/client/dev_profile.h"
#include "transit/contract/envelope.h"
#include "transit/contract/reference.h"
#include "transit/contract/schema.h"
#include "cli.h"
#include "cowboy_version.h"  // generated: COWBOY_VERSION

using namespace cowboy;
using namespace cowboy::transit;

namespace {


std::optional<Permissions> parse_permissions(const std::string& text) {
  Permissions p;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, end - start);
    if (name == "all") p.bits |= kAllPermissions;
    else {
      const auto it = std::find(kPermissionNames.begin(), kPermissionNames.end(), name);
      if (it == kPermissionNames.end()) return std::nullopt;
      p.bits |= std::uint64_t{1} << (it - kPermissionNames.begin());
    }
    start = end + 1;
  }
  return p;
}

std::string permission_names(Permissions p) {
  std::string out;
  for (std::size_t i = 0; i < kPermissionNames.size(); ++i)
    if (p.bits & (std::uint64_t{1} << i)) out += (out.empty() ? "" : ",") + std::string(kPermissionNames[i]);
  return out.empty() ? "none" : out;
}

std::optional<Scope> parse_scope(const std::string& text) {
  if (text == "realm") return Scope{RealmScope{}};
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string kind = text.substr(0, colon);
  Id id = 0;
  try {
    id = std::stoull(text.substr(colon + 1));
  } catch (...) {
    return std::nullopt;
  }
  if (kind == "pid") return Scope{PidScope{Pid{id}}};
  if (kind == "resource") return Scope{ResourceScope{ResourceId{id}}};
  return std::nullopt;
}

std::string scope_name(const Scope& s) {
  if (const auto* p = std::get_if<PidScope>(&s)) return "pid:" + std::to_string(p->pid.value);
  if (const auto* r = std::get_if<ResourceScope>(&s)) return "resource:" + std::to_string(r->resource.value);
  return "realm";
}

}  // namespace

namespace cowboy::transit::cli {

int report(const Global& g, const ClientError& e) {
  if (g.json && e.rejection) std::cout << to_json(*e.rejection) << "\n";
  const char* kind = e.kind == ClientError::Kind::kRejected    ? "rejected"
                     : e.kind == ClientError::Kind::kUncertain ? "uncertain"
                     : e.kind == ClientError::Kind::kInvalid   ? "invalid"
                     : e.kind == ClientError::Kind::kUnsupported ? "unsupported by the peer"
                                                               : "malformed answer";
  std::fprintf(stderr, "transit: %s: %s\n", kind, e.message.c_str());
  if (e.kind == ClientError::Kind::kInvalid) return 2;
  return e.kind == ClientError::Kind::kUncertain ? 3 : 1;
}

int usage(const std::string& message) {
  std::fprintf(stderr, "transit: %s\n", message.c_str());
  return 2;
}

void print_receipt(const Global& g, const Receipt& r) {
  if (g.json) {
    std::cout << to_json(r) << "\n";
    return;
  }
  std::visit(
      [&](const auto& o) {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, PrincipalCreated>)
          std::printf("principal %llu created (role %llu, grant %llu)", (unsigned long long)o.principal.value,
                      (unsigned long long)o.role, (unsigned long long)o.grant);
        else if constexpr (std::is_same_v<O, RoleCreated>)
          std::printf("role %llu created", (unsigned long long)o.role);
        else if constexpr (std::is_same_v<O, Granted>)
          std::printf("grant %llu made", (unsigned long long)o.grant);
        else if constexpr (std::is_same_v<O, PolicyChanged>)
          std::printf("policy changed");
        else
          std::printf("%s %s", std::string(O::kName).c_str(), to_json(o).c_str());
        std::printf(" at position %llu", (unsigned long long)r.position.value);
        if constexpr (requires { o.policy_revision; })
          std::printf(", policy revision %llu", (unsigned long long)o.policy_revision);
        std::printf("\n");
      },
      r.outcome);
}

}  // namespace cowboy::transit::cli

namespace {
using namespace cowboy::transit::cli;

Result<ClientOptions, std::string> client_options(const Global& g) {
  if (!g.dev_dir.empty()) return dev_client_options(g.dev_dir);
  const auto hp = net::parse_host_port(g.endpoint);
  if (!hp) return Err{std::string("--endpoint HOST:PORT is required (or --dev DIR)")};
  if (g.realm.empty() || g.principal == 0 || g.key_file.empty())
    return Err{std::string("--realm, --principal and --key are required without --dev")};
  auto seed = load_secret(g.key_file);
  if (!seed.ok()) return Err{seed.error()};
  ClientOptions o;
  o.host = hp->first;
  o.port = hp->second;
  o.realm = g.realm;
  o.principal = PrincipalId{g.principal};
  o.seed = *seed;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  crypto::init();
  Global g;
  CLI::App app{"transit: the Transit v1 CLI - principals, roles and grants; resources, processes, turns and reads"};
  app.set_version_flag("--version", COWBOY_VERSION);
  app.require_subcommand(1);
  app.add_option("--dev", g.dev_dir, "a transitd --dev directory: endpoint, realm, root principal and key");
  app.add_option("--endpoint", g.endpoint, "the node's HTTP host:port");
  app.add_option("--realm", g.realm, "the realm");
  app.add_option("--principal", g.principal, "the signing principal");
  app.add_option("--key", g.key_file, "the signing principal's Ed25519 seed file (hex)");
  app.add_flag("--json", g.json, "print the node's answer as one JSON document");

  auto* identity = app.add_subcommand("identity", "who the signing principal is, now");
  auto* capabilities = app.add_subcommand("capabilities", "what the node supports and its admission limits");
  auto* status_cmd = app.add_subcommand("status", "a transitd's health, readiness and main metrics, from its admin listener");
  std::string status_admin = "127.0.0.1:7552";
  status_cmd->add_option("--admin", status_admin, "transitd's --admin-listen host:port")->capture_default_str();
  auto* schema = app.add_subcommand("schema", "print transit-v1.schema.json");
  auto* reference = app.add_subcommand("reference", "print docs/transit-reference.md, the wire reference");
  struct {
    std::string realm, root_key;
    Id root_principal = 1;
    std::optional<Id> ceiling;
    Id reserve = 0;
    bool allow_history_trim = false;
  } gen;
  auto* genesis = app.add_subcommand("genesis", "print a realm's genesis for transitd --genesis (no node needed)");
  genesis->add_option("--realm", gen.realm, "the realm's name (1-64 bytes)")->required();
  genesis->add_option("--root-key", gen.root_key, "the root's Ed25519 seed file; created (0600) if missing")->required();
  genesis->add_option("--root-principal", gen.root_principal)->capture_default_str();
  genesis->add_option("--admission-ceiling", gen.ceiling, "journal positions; default: none");
  genesis->add_option("--control-reserve", gen.reserve, "positions beyond the ceiling for control mutations")->capture_default_str();
  genesis->add_flag("--allow-history-trim", gen.allow_history_trim, "opt in to checkpoint history trimming");

  auto* principal = app.add_subcommand("principal", "create or revoke principals, or replace their grant");
  principal->require_subcommand(1);
  struct {
    Id id = 0;
    std::string public_key, key_out, permissions = "inspect", scope = "realm";
    std::optional<Id> pid_scope, expected_revision;
  } pc;
  auto* pcreate = principal->add_subcommand("create", "allocate a principal with a key and one grant");
  pcreate->add_option("--id", pc.id, "the new principal's identity (never used before)")->required();
  pcreate->add_option("--public-key", pc.public_key, "its Ed25519 public key, 64 hex digits");
  pcreate->add_option("--key-out", pc.key_out, "or: generate its seed into this file (0600)");
  pcreate->add_option("--permissions", pc.permissions, "comma-separated permission names, or all")->capture_default_str();
  pcreate->add_option("--scope", pc.scope, "realm, pid:N or resource:N")->capture_default_str();
  pcreate->add_option("--pid-scope", pc.pid_scope, "restrict the principal to one PID");
  pcreate->add_option("--expected-revision", pc.expected_revision, "apply only at this policy revision");
  Id revoke_id = 0;
  std::optional<Id> revoke_rev;
  auto* prevoke = principal->add_subcommand("revoke", "revoke a principal (its subject stays allocated)");
  prevoke->add_option("--id", revoke_id)->required();
  prevoke->add_option("--expected-revision", revoke_rev);
  auto* preplace = principal->add_subcommand(
      "replace-grant", "retire a principal's private role and its grants; bind a new one holding this grant");
  preplace->add_option("--id", pc.id)->required();
  preplace->add_option("--permissions", pc.permissions, "comma-separated permission names, or all")->required();
  preplace->add_option("--scope", pc.scope, "realm, pid:N or resource:N")->capture_default_str();
  preplace->add_option("--expected-revision", pc.expected_revision);

  // A replacement worker takes over a process (docs/transit.md, decision 59).
  auto* worker = app.add_subcommand("worker", "rotate a PID-scoped worker's key to a replacement");
  worker->require_subcommand(1);
  struct {
    Id pid = 0, generation = 0, worker = 0;
    std::string old_key, old_public_key, key_out, permissions;
  } wr;
  auto* wrotate = worker->add_subcommand("rotate", "the worker's new key takes its process at the next generation");
  wrotate->add_option("--pid", wr.pid)->required();
  wrotate->add_option("--generation", wr.generation, "the process's current generation")->required();
  wrotate->add_option("--worker", wr.worker, "the PID-scoped worker principal")->required();
  wrotate->add_option("--old-key", wr.old_key, "its current seed file, to name its current public key");
  wrotate->add_option("--old-public-key", wr.old_public_key, "or its current public key, 64 hex digits");
  wrotate->add_option("--permissions", wr.permissions, "what it holds at the PID now, exactly")->required();
  wrotate->add_option("--key-out", wr.key_out, "generate the replacement's seed into this file (0600)")->required();

  auto* role = app.add_subcommand("role", "named roles and their bindings");
  role->require_subcommand(1);
  std::string role_name;
  Id bind_principal = 0, bind_role = 0;
  std::optional<Id> role_rev;
  auto* rcreate = role->add_subcommand("create", "create a named role");
  rcreate->add_option("--name", role_name)->required();
  auto* rbind = role->add_subcommand("bind", "give a principal a role");
  auto* runbind = role->add_subcommand("unbind", "take a role from a principal");
  for (auto* c : {rbind, runbind}) {
    c->add_option("--principal", bind_principal)->required();
    c->add_option("--role", bind_role)->required();
  }
  for (auto* c : {rcreate, rbind, runbind}) c->add_option("--expected-revision", role_rev);

  auto* grant = app.add_subcommand("grant", "grant permissions to a role (or revoke a grant)");
  Id grant_role = 0, revoke_grant = 0;
  std::string grant_permissions, grant_scope = "realm";
  std::optional<Id> grant_rev;
  grant->add_option("--role", grant_role, "the role to grant to");
  grant->add_option("--permissions", grant_permissions, "comma-separated permission names, or all");
  grant->add_option("--scope", grant_scope, "realm, pid:N or resource:N")->capture_default_str();
  grant->add_option("--revoke", revoke_grant, "revoke this grant instead");
  grant->add_option("--expected-revision", grant_rev);

  auto* decision = app.add_subcommand("decision", "would a principal hold these permissions now");
  Id decision_principal = 0;
  std::string decision_permissions, decision_scope = "realm";
  decision->add_option("--principal", decision_principal)->required();
  decision->add_option("--permissions", decision_permissions)->required();
  decision->add_option("--scope", decision_scope)->capture_default_str();

  StateCommands state(app);
  EffectCommands effects(app);
  HistoryCommands history(app);
  SnapshotCommands snapshots(app);
  PayloadCommands payloads(app);
  RuntimeCommands runtime(app);
  CollectCommands collection(app);
  BlockCommands blocks(app);
  StorageCommands storage(app);

  CLI11_PARSE(app, argc, argv);

  if (status_cmd->parsed()) return status(status_admin, g.json);
  if (schema->parsed()) {
    std::cout << schema_text();
    return 0;
  }
  if (reference->parsed()) {
    std::cout << reference_text();
    return 0;
  }
  if (genesis->parsed()) {
    auto seed = load_or_create_secret(gen.root_key);
    if (!seed.ok()) return std::fprintf(stderr, "transit: %s\n", seed.error().c_str()), 2;
    Genesis g;
    g.realm.value = gen.realm;
    g.root_principal = PrincipalId{gen.root_principal};
    g.root_public_key = crypto::ed25519_from_seed(*seed).public_key;
    g.admission_ceiling = gen.ceiling;
    g.control_reserve = gen.reserve;
    g.allow_history_trim = gen.allow_history_trim;
    const std::string text = to_json(g);
    if (auto check = from_json<Genesis>(text, kMaxAnswerBytes); !check.ok())
      return std::fprintf(stderr, "transit: %s\n", check.error().message().c_str()), 2;
    std::cout << text << "\n";
    return 0;
  }
  auto options = client_options(g);
  if (!options.ok()) {
    std::fprintf(stderr, "transit: %s\n", options.error().c_str());
    return 2;
  }
  Client client(*options);
  if (auto status = state.run(g, client)) return *status;
  if (auto status = effects.run(g, client)) return *status;
  if (auto status = history.run(g, client)) return *status;
  if (auto status = snapshots.run(g, client)) return *status;
  if (auto status = payloads.run(g, client)) return *status;
  if (auto status = runtime.run(g, client)) return *status;
  if (auto status = collection.run(g, client)) return *status;
  if (auto status = blocks.run(g, client)) return *status;
  if (auto status = storage.run(g, client)) return *status;

  if (identity->parsed()) {
    auto r = client.query(IdentityQuery{});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    const auto& i = std::get<Identity>(r->result);
    std::printf("principal %llu: %s%s, policy revision %llu, last sequence %llu (at position %llu)\n",
                (unsigned long long)i.principal.value, permission_names(i.permissions).c_str(),
                i.pid_scope ? (", pid scope " + std::to_string(i.pid_scope->value)).c_str() : "",
                (unsigned long long)i.policy_revision, (unsigned long long)i.sequence,
                (unsigned long long)r->position.value);
    return 0;
  }
  if (capabilities->parsed()) {
    auto r = client.query(CapabilitiesQuery{});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    const auto& c = std::get<Capabilities>(r->result);
    std::string names;
    for (const auto& n : c.supported.items) names += (names.empty() ? "" : ", ") + n.value;
    std::printf("supports: %s\nadmission ceiling: %s, control reserve %llu\nhistory trim: %s (reclamation %s)\n"
                "max request %llu bytes, pages of %llu\n"
                "snapshots: leases up to %llu ms, %llu per principal, %llu per node, ranges of %llu\n"
                "payloads: up to %llu bytes, moved in chunks of %llu\n"
                "dependency budgets: %llu required resources a process, %llu resources owned a process\n",
                names.c_str(), c.admission_ceiling ? std::to_string(*c.admission_ceiling).c_str() : "none",
                (unsigned long long)c.control_reserve, c.allow_history_trim ? "allowed" : "not allowed",
                c.history_reclamation ? "supported" : "not supported",
                (unsigned long long)c.max_request_bytes, (unsigned long long)c.page_records,
                (unsigned long long)c.snapshot_lease_max_ms.value, (unsigned long long)c.snapshots_per_principal,
                (unsigned long long)c.snapshots_per_node, (unsigned long long)c.snapshot_range_records,
                (unsigned long long)c.max_payload_bytes, (unsigned long long)c.payload_chunk_bytes,
                (unsigned long long)c.required_resource_budget, (unsigned long long)c.lifetime_owner_budget);
    return 0;
  }
  if (decision->parsed()) {
    auto perms = parse_permissions(decision_permissions);
    auto scope = parse_scope(decision_scope);
    if (!perms || !scope) return std::fprintf(stderr, "transit: bad --permissions or --scope\n"), 2;
    auto r = client.query(DecisionQuery{PrincipalId{decision_principal}, *scope, *perms});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    const auto& d = std::get<Decision>(r->result);
    std::printf("principal %llu %s %s at %s (policy revision %llu)\n", (unsigned long long)d.principal.value,
                d.allowed ? "holds" : "does not hold", permission_names(*perms).c_str(), scope_name(*scope).c_str(),
                (unsigned long long)d.policy_revision);
    return 0;
  }

  Command op;
  if (pcreate->parsed()) {
    auto perms = parse_permissions(pc.permissions);
    auto scope = parse_scope(pc.scope);
    if (!perms || !scope) return std::fprintf(stderr, "transit: bad --permissions or --scope\n"), 2;
    PublicKey key{};
    if (!pc.key_out.empty()) {
      if (std::filesystem::exists(pc.key_out))
        return std::fprintf(stderr, "transit: %s exists; not overwriting a key\n", pc.key_out.c_str()), 2;
      auto seed = load_or_create_secret(pc.key_out);
      if (!seed.ok()) return std::fprintf(stderr, "transit: %s\n", seed.error().c_str()), 2;
      key = crypto::ed25519_from_seed(*seed).public_key;
    } else {
      auto parsed = fixed_from_hex<32>(pc.public_key);
      if (!parsed) return std::fprintf(stderr, "transit: --public-key (64 hex digits) or --key-out FILE\n"), 2;
      key = *parsed;
    }
    op = CreatePrincipal{PrincipalId{pc.id}, key, *scope, *perms, id_of<Pid>(pc.pid_scope), pc.expected_revision};
  } else if (prevoke->parsed()) {
    op = RevokePrincipal{PrincipalId{revoke_id}, revoke_rev};
  } else if (preplace->parsed()) {
    auto perms = parse_permissions(pc.permissions);
    auto scope = parse_scope(pc.scope);
    if (!perms || !scope) return std::fprintf(stderr, "transit: bad --permissions or --scope\n"), 2;
    op = ReplaceGrant{PrincipalId{pc.id}, *scope, *perms, pc.expected_revision};
  } else if (wrotate->parsed()) {
    auto perms = parse_permissions(wr.permissions);
    if (!perms) return std::fprintf(stderr, "transit: bad --permissions\n"), 2;
    std::optional<PublicKey> old_key;
    if (!wr.old_key.empty()) {
      auto seed = load_secret(wr.old_key);
      if (!seed.ok()) return std::fprintf(stderr, "transit: %s\n", seed.error().c_str()), 2;
      old_key = crypto::ed25519_from_seed(*seed).public_key;
    } else {
      old_key = fixed_from_hex<32>(wr.old_public_key);
    }
    if (!old_key) return std::fprintf(stderr, "transit: --old-key FILE or --old-public-key (64 hex digits)\n"), 2;
    if (std::filesystem::exists(wr.key_out))
      return std::fprintf(stderr, "transit: %s exists; not overwriting a key\n", wr.key_out.c_str()), 2;
    auto seed = load_or_create_secret(wr.key_out);
    if (!seed.ok()) return std::fprintf(stderr, "transit: %s\n", seed.error().c_str()), 2;
    op = RotateWorker{Pid{wr.pid}, wr.generation, PrincipalId{wr.worker}, *old_key, *perms, crypto::ed25519_from_seed(*seed).public_key};
  } else if (rcreate->parsed()) {
    op = CreateRole{{role_name}, role_rev};
  } else if (rbind->parsed()) {
    op = BindCredential{PrincipalId{bind_principal}, bind_role, role_rev};
  } else if (runbind->parsed()) {
    op = UnbindCredential{PrincipalId{bind_principal}, bind_role, role_rev};
  } else if (grant->parsed()) {
    if (revoke_grant) {
      op = RevokeGrant{revoke_grant, grant_rev};
    } else {
      auto perms = parse_permissions(grant_permissions);
      auto scope = parse_scope(grant_scope);
      if (!grant_role || !perms || !scope)
        return std::fprintf(stderr, "transit: grant needs --role and --permissions (or --revoke GRANT)\n"), 2;
      op = Grant{grant_role, *scope, *perms, grant_rev};
    }
  }
  auto receipt = client.submit(op);
  if (!receipt.ok()) {
    // A key made for a principal that was refused belongs to nobody.
    if (pcreate->parsed() && !pc.key_out.empty() && receipt.error().kind == ClientError::Kind::kRejected)
      std::filesystem::remove(pc.key_out);
    if (wrotate->parsed() && receipt.error().kind == ClientError::Kind::kRejected) std::filesystem::remove(wr.key_out);
    return report(g, receipt.error());
  }
  print_receipt(g, *receipt);
  return 0;
}
