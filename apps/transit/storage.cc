// The transit CLI's storage maintenance (docs/transit.md, decisions 140-149):
//
//   transit storage                    # location definition, epoch, its fence, recorded grace, compaction cursor
//   transit storage fence [--epoch E] [--record-grace]
//   transit storage compact [--cursor C] --resource R (--block NAME | --entry KEY)
//   transit storage compact [--cursor C] (--process PID | --principal ID | --role ID | --grant ID)
//   transit storage compact [--cursor C] --record KIND:ID[:ID]   # resource:R, credential:P:ROLE, association:PID:REV,
//                                             # view:V, output:O, effect:F, payload:Y, runtime:PID, input:PID:I (decision 185)
//   transit storage needs              # the leaves most worth compacting, most needy first (decision 183)
//
// Without --epoch or --cursor the command reads the storage head first and
// names what it read: the node still refuses it if another fence or
// compaction comes in between (storage_epoch_changed, compaction_cursor_changed).
#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {

struct StorageCommands::Options {
  CLI::App *storage, *fence, *compact, *needs;
  std::optional<Id> epoch, cursor, resource, process, principal, role, grant;
  std::optional<std::string> block, entry, record;
  bool record_grace = false;
};

StorageCommands::StorageCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  o.storage = app.add_subcommand("storage", "the storage epoch, location definition and compaction cursor");
  o.fence = o.storage->add_subcommand("fence", "advance the storage epoch (realm_control)");
  o.fence->add_option("--epoch", o.epoch, "the epoch to advance from (default: the current one, read first)");
  o.fence->add_flag("--record-grace", o.record_grace, "also record that every lease of an earlier epoch has ended");
  o.compact = o.storage->add_subcommand("compact", "relocate one leaf and advance the compaction cursor (realm_control)");
  o.compact->add_option("--cursor", o.cursor, "the cursor to advance from (default: the current one, read first)");
  o.compact->add_option("--resource", o.resource, "the resource of --block or --entry");
  auto* leaf = o.compact->add_option_group("leaf", "the one leaf to relocate");
  leaf->add_option("--block", o.block, "a block's name: text, or hex:...");
  leaf->add_option("--entry", o.entry, "an entry's key: text, or hex:...");
  leaf->add_option("--process", o.process, "a process record's versions");
  leaf->add_option("--principal", o.principal, "a principal's record");
  leaf->add_option("--role", o.role, "a role's record");
  leaf->add_option("--grant", o.grant, "a grant's record");
  leaf->add_option("--record", o.record,
                   "another record's versions, KIND:ID[:ID]: resource:R, credential:PRINCIPAL:ROLE, association:PID:REVISION, "
                   "view:V, output:O, effect:F, payload:Y, runtime:PID, input:PID:INPUT");
  leaf->require_option(1);
  o.needs = o.storage->add_subcommand(
      "needs", "the leaves most worth compacting: each with the decisions that wrote into it since its last "
               "relocation, most needy first (realm_control)");
}

namespace {

void print_status(const StorageStatus& s) {
  std::printf("storage epoch %llu", (unsigned long long)s.epoch);
  if (s.fenced_at.value != 0) std::printf(" (fenced at position %llu, %llu ms)", (unsigned long long)s.fenced_at.value, (unsigned long long)s.fenced_at_ms.value);
  std::printf(", leases below epoch %llu ended, compaction cursor %llu, read-lease grace %llu ms, location definition %s\n",
              (unsigned long long)s.grace_below, (unsigned long long)s.compaction_cursor,
              (unsigned long long)s.read_lease_grace_ms.value, to_hex(ByteView(s.location_definition)).c_str());
}

void print_leaf(const StorageLeaf& leaf) {
  std::visit(
      [](const auto& l) {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, BlockLeaf>)
          std::printf("block %s of resource %llu", show_bytes(l.name.value).c_str(), (unsigned long long)l.resource.value);
        else if constexpr (std::is_same_v<L, EntryLeaf>)
          std::printf("entry %s of resource %llu", show_bytes(l.key.value).c_str(), (unsigned long long)l.resource.value);
        else if constexpr (std::is_same_v<L, ProcessLeaf>) std::printf("process %llu", (unsigned long long)l.pid.value);
        else if constexpr (std::is_same_v<L, PrincipalLeaf>) std::printf("principal %llu", (unsigned long long)l.principal.value);
        else if constexpr (std::is_same_v<L, RoleLeaf>) std::printf("role %llu", (unsigned long long)l.role);
        else if constexpr (std::is_same_v<L, GrantLeaf>) std::printf("grant %llu", (unsigned long long)l.grant);
        else if constexpr (std::is_same_v<L, ResourceLeaf>) std::printf("resource %llu", (unsigned long long)l.resource.value);
        else if constexpr (std::is_same_v<L, CredentialLeaf>)
          std::printf("credential of principal %llu to role %llu", (unsigned long long)l.principal.value, (unsigned long long)l.role);
        else if constexpr (std::is_same_v<L, AssociationLeaf>)
          std::printf("association %llu of process %llu", (unsigned long long)l.revision, (unsigned long long)l.pid.value);
        else if constexpr (std::is_same_v<L, ViewLeaf>) std::printf("view %llu", (unsigned long long)l.view);
        else if constexpr (std::is_same_v<L, OutputLeaf>) std::printf("output %llu", (unsigned long long)l.output);
        else if constexpr (std::is_same_v<L, EffectLeaf>) std::printf("effect %llu", (unsigned long long)l.effect);
        else if constexpr (std::is_same_v<L, PayloadLeaf>) std::printf("payload %llu", (unsigned long long)l.payload);
        else if constexpr (std::is_same_v<L, RuntimeLeaf>) std::printf("runtime binding of process %llu", (unsigned long long)l.pid.value);
        else std::printf("input %llu of process %llu", (unsigned long long)l.input, (unsigned long long)l.pid.value);
      },
      leaf);
}

// KIND:ID[:ID] (--record): one id, or two for a credential, an association and an input.
std::optional<StorageLeaf> parse_record(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string kind = text.substr(0, colon);
  std::vector<Id> ids;
  for (std::size_t at = colon + 1; at <= text.size();) {
    const auto next = std::min(text.find(':', at), text.size());
    const std::string part = text.substr(at, next - at);
    if (part.empty() || part.size() > 20 || part.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    errno = 0;
    const unsigned long long v = std::strtoull(part.c_str(), nullptr, 10);
    if (errno == ERANGE) return std::nullopt;
    ids.push_back(v);
    at = next + 1;
  }
  const bool pair = kind == "credential" || kind == "association" || kind == "input";
  if (ids.size() != (pair ? 2u : 1u)) return std::nullopt;
  if (kind == "resource") return ResourceLeaf{ResourceId{ids[0]}};
  if (kind == "credential") return CredentialLeaf{PrincipalId{ids[0]}, ids[1]};
  if (kind == "association") return AssociationLeaf{Pid{ids[0]}, ids[1]};
  if (kind == "view") return ViewLeaf{ids[0]};
  if (kind == "output") return OutputLeaf{ids[0]};
  if (kind == "effect") return EffectLeaf{ids[0]};
  if (kind == "payload") return PayloadLeaf{ids[0]};
  if (kind == "runtime") return RuntimeLeaf{Pid{ids[0]}};
  if (kind == "input") return InputLeaf{Pid{ids[0]}, ids[1]};
  return std::nullopt;
}

}  // namespace

std::optional<int> StorageCommands::run(const Global& g, Client& client) {
  const auto& o = *o_;
  if (!o.storage->parsed()) return std::nullopt;
  if (o.needs->parsed()) {
    auto r = client.query(CompactionNeedsQuery{});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    const auto& leaves = std::get<CompactionNeeds>(r->result).leaves.items;
    if (leaves.empty()) std::printf("no leaf needs compacting\n");
    for (const auto& n : leaves) {
      print_leaf(n.leaf);
      std::printf(": %llu writes since its last relocation\n", (unsigned long long)n.need);
    }
    return 0;
  }
  auto read = client.query(StorageQuery{});
  if (!read.ok()) return report(g, read.error());
  const auto& status = std::get<StorageStatus>(read->result);
  if (o.fence->parsed()) {
    auto r = client.submit(StorageFence{o.epoch.value_or(status.epoch), o.record_grace});
    if (!r.ok()) return report(g, r.error());
    print_receipt(g, *r);
    return 0;
  }
  if (o.compact->parsed()) {
    StorageLeaf leaf;
    if (o.block || o.entry) {
      if (!o.resource) return usage("--block and --entry need --resource");
      auto bytes = parse_bytes(o.block ? *o.block : *o.entry);
      if (!bytes || bytes->empty() || bytes->size() > 32) return usage("--block/--entry: 1-32 bytes");
      if (o.block) leaf = BlockLeaf{ResourceId{*o.resource}, EntryKey{std::move(*bytes)}};
      else leaf = EntryLeaf{ResourceId{*o.resource}, EntryKey{std::move(*bytes)}};
    } else if (o.process) {
      leaf = ProcessLeaf{Pid{*o.process}};
    } else if (o.principal) {
      leaf = PrincipalLeaf{PrincipalId{*o.principal}};
    } else if (o.role) {
      leaf = RoleLeaf{*o.role};
    } else if (o.record) {
      auto parsed = parse_record(*o.record);
      if (!parsed) return usage("--record: KIND:ID[:ID], e.g. resource:5, credential:3:4, input:7:2");
      leaf = std::move(*parsed);
    } else {
      leaf = GrantLeaf{*o.grant};
    }
    auto r = client.submit(StorageCompact{o.cursor.value_or(status.compaction_cursor), std::move(leaf)});
    if (!r.ok()) return report(g, r.error());
    print_receipt(g, *r);
    return 0;
  }
  if (g.json) return std::cout << to_json(*read) << "\n", 0;
  print_status(status);
  return 0;
}

}  // namespace cowboy::transit::cli
