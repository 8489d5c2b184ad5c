// The transit CLI's runtime binding commands (docs/transit.md, decisions
// 120-129): what a local manager records and an operator activates.
//
//   transit runtime intent --pid 7 --operation 1 --revision 3 --provider host-a --worker 10
//       --artifact-file app.bin --configuration-file app.toml
//   transit runtime observe --pid 7 --operation 1 --incarnation 1 --status starting
//   transit runtime observe --pid 7 --operation 1 --incarnation 1 --status ready
//       --artifact-file app.bin --configuration-file app.toml      (the bootstrap evidence)
//   transit runtime activate --pid 7 --generation G --operation 1 --incarnation 1 --old-key w.key --key-out w2.key
//   transit runtime upgrade --pid 7 --expected-operation 1 --operation 2 --revision 4 --artifact-file ...
//   transit runtime show --pid 7
//
// A digest is given as 64 hex digits (--artifact, --configuration) or as the
// file whose SHA-256 it is, read in chunks.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "common/crypto.h"
#include "common/keyfile.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {

struct RuntimeCommands::Options {
  CLI::App *runtime, *intent, *observe, *upgrade, *activate, *show;
  Id pid = 0, operation = 0, expected_operation = 0, revision = 0, worker = 0, incarnation = 0, generation = 0;
  std::string provider, status = "starting";
  std::string artifact, artifact_file, configuration, configuration_file;
  std::string old_key, old_public_key, key_out;
};

RuntimeCommands::RuntimeCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  o.runtime = app.add_subcommand("runtime", "runtime binding: placements, provider observations, activation");
  o.runtime->require_subcommand(1);
  o.intent = o.runtime->add_subcommand("intent", "bind a process to a placement (pid_admin)");
  o.observe = o.runtime->add_subcommand("observe", "record the provider's report on an incarnation (pid_admin)");
  o.upgrade = o.runtime->add_subcommand("upgrade", "a later revision on the same provider (pid_admin)");
  o.activate = o.runtime->add_subcommand("activate", "hand the process to the ready incarnation's new key (root)");
  o.show = o.runtime->add_subcommand("show", "a process's runtime binding");
  for (auto* c : {o.intent, o.observe, o.upgrade, o.activate, o.show}) c->add_option("--pid", o.pid)->required();
  for (auto* c : {o.intent, o.observe, o.upgrade, o.activate}) c->add_option("--operation", o.operation)->required();
  for (auto* c : {o.intent, o.upgrade}) c->add_option("--revision", o.revision, "the artifact revision")->required();
  for (auto* c : {o.intent, o.observe, o.upgrade}) {
    c->add_option("--artifact", o.artifact, "the artifact's SHA-256, 64 hex digits");
    c->add_option("--artifact-file", o.artifact_file, "or the artifact itself");
    c->add_option("--configuration", o.configuration, "the configuration's SHA-256, 64 hex digits");
    c->add_option("--configuration-file", o.configuration_file, "or the configuration itself");
  }
  o.intent->add_option("--provider", o.provider, "the provider's name, 1-32 bytes")->required();
  o.intent->add_option("--worker", o.worker, "the PID-scoped worker principal")->required();
  for (auto* c : {o.observe, o.activate}) c->add_option("--incarnation", o.incarnation)->required();
  o.observe->add_option("--status", o.status, "starting, ready (with the evidence) or stopped")->capture_default_str();
  o.upgrade->add_option("--expected-operation", o.expected_operation)->required();
  o.activate->add_option("--generation", o.generation, "the process's current generation")->required();
  o.activate->add_option("--old-key", o.old_key, "the worker's current seed file, to name its current public key");
  o.activate->add_option("--old-public-key", o.old_public_key, "or its current public key, 64 hex digits");
  o.activate->add_option("--key-out", o.key_out, "generate the incarnation's seed into this file (0600)")->required();
}

namespace {

// 64 hex digits, or the SHA-256 of a file read in chunks; null when neither is usable.
std::optional<Digest> digest_of(const std::string& hex, const std::string& file) {
  if (!hex.empty()) return fixed_from_hex<32>(hex);
  std::ifstream in(file, std::ios::binary);
  if (file.empty() || !in) return std::nullopt;
  crypto::Sha256 hash;
  std::vector<char> chunk(64 * 1024);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0)
    hash.update(ByteView(reinterpret_cast<const std::uint8_t*>(chunk.data()), static_cast<std::size_t>(in.gcount())));
  return hash.finish();
}

void print_runtime(const RuntimeInfo& r) {
  if (!r.bound) {
    std::printf("process %llu is not bound\n", (unsigned long long)r.pid.value);
    return;
  }
  std::printf("process %llu: operation %llu (revision %llu) on %s for worker %llu, incarnation %llu %s\n",
              (unsigned long long)r.pid.value, (unsigned long long)r.operation, (unsigned long long)r.revision,
              r.provider.value.c_str(), (unsigned long long)r.worker.value, (unsigned long long)r.incarnation,
              std::string(EnumTraits<RuntimeStatus>::kNames[static_cast<int>(r.status)]).c_str());
  if (r.bootstrap)
    std::printf("  bootstrap evidence of incarnation %llu by principal %llu at position %llu\n",
                (unsigned long long)r.bootstrap->incarnation, (unsigned long long)r.bootstrap->principal.value,
                (unsigned long long)r.bootstrap->position.value);
  if (r.activation)
    std::printf("  activated: operation %llu, incarnation %llu, generation %llu, at position %llu\n",
                (unsigned long long)r.activation->operation, (unsigned long long)r.activation->incarnation,
                (unsigned long long)r.activation->generation, (unsigned long long)r.activation->position.value);
}

}  // namespace

std::optional<int> RuntimeCommands::run(const Global& g, Client& client) {
  const auto& o = *o_;
  if (!o.runtime->parsed()) return std::nullopt;
  if (o.show->parsed()) {
    auto r = client.runtime(Pid{o.pid});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    print_runtime(*r);
    return 0;
  }
  const auto artifact = digest_of(o.artifact, o.artifact_file);
  const auto configuration = digest_of(o.configuration, o.configuration_file);
  const bool with_evidence = o.observe->parsed() && o.status == "ready";
  if ((o.intent->parsed() || o.upgrade->parsed() || with_evidence) && (!artifact || !configuration))
    return usage("--artifact or --artifact-file, and --configuration or --configuration-file");

  Command op;
  if (o.intent->parsed()) {
    op = RuntimeIntent{Pid{o.pid}, o.operation, o.revision, Name{o.provider}, PrincipalId{o.worker}, *artifact, *configuration};
  } else if (o.upgrade->parsed()) {
    op = RuntimeUpgrade{Pid{o.pid}, o.expected_operation, o.operation, o.revision, *artifact, *configuration};
  } else if (o.observe->parsed()) {
    RuntimeStatus status{};
    const auto& names = EnumTraits<RuntimeStatus>::kNames;
    const auto it = std::find(names.begin() + 1, names.end(), o.status);  // intended is recorded, never observed
    if (it == names.end()) return usage("--status starting, ready or stopped");
    status = static_cast<RuntimeStatus>(it - names.begin());
    std::optional<BootstrapEvidence> evidence;
    if (with_evidence) evidence = BootstrapEvidence{*artifact, *configuration};
    op = RuntimeObserve{Pid{o.pid}, o.operation, o.incarnation, status, evidence};
  } else {
    std::optional<PublicKey> old_key;
    if (!o.old_key.empty()) {
      auto seed = load_secret(o.old_key);
      if (!seed.ok()) return usage(seed.error());
      old_key = crypto::ed25519_from_seed(*seed).public_key;
    } else {
      old_key = fixed_from_hex<32>(o.old_public_key);
    }
    if (!old_key) return usage("--old-key FILE or --old-public-key (64 hex digits)");
    if (std::filesystem::exists(o.key_out)) return usage(o.key_out + " exists; not overwriting a key");
    auto seed = load_or_create_secret(o.key_out);
    if (!seed.ok()) return usage(seed.error());
    op = Activate{Pid{o.pid}, o.generation, o.operation, o.incarnation, *old_key, crypto::ed25519_from_seed(*seed).public_key};
  }
  auto receipt = client.submit(std::move(op));
  if (!receipt.ok()) {
    // A key made for an activation that was refused belongs to nobody.
    if (o.activate->parsed() && receipt.error().kind == ClientError::Kind::kRejected) std::filesystem::remove(o.key_out);
    return report(g, receipt.error());
  }
  print_receipt(g, *receipt);
  return 0;
}

}  // namespace cowboy::transit::cli
