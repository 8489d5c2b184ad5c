// The transit CLI's block records and steps (docs/transit.md, decisions
// 100-109); reading a block's body is `transit block` (state.cc).
//
//   transit blocks show|retire|delete --resource R --name NAME
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {

struct BlockCommands::Options {
  CLI::App *blocks, *show, *retire, *remove;
  Id resource = 0;
  std::string name;
};

BlockCommands::BlockCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  o.blocks = app.add_subcommand("blocks", "block records: checksum, source and owner; retirement and deletion");
  o.blocks->require_subcommand(1);
  o.show = o.blocks->add_subcommand("show", "a block's record, whatever its state (inspect)");
  o.retire = o.blocks->add_subcommand("retire", "retire a block from the resource's next revision on (pid_admin at its owner)");
  // Decision 180: the deletion is recorded at once; the body goes with a later fence.
  o.remove = o.blocks->add_subcommand(
      "delete", "record a retired block deleted once no live view reads it: reads refuse it from then on, and the "
                "body is purged by the first storage fence a read-lease grace past its epoch (pid_admin at its owner)");
  for (auto* c : {o.show, o.retire, o.remove}) {
    c->add_option("--resource", o.resource)->required();
    c->add_option("--name", o.name, "the block's name: text, or hex:...")->required();
  }
}

void print_block(const BlockInfo& b) {
  std::printf("block %s of resource %llu: %s, published at revision %llu by process %llu (principal %llu), %llu bytes, "
              "sha256 %s",
              show_bytes(b.name.value).c_str(), (unsigned long long)b.resource.value,
              std::string(EnumTraits<BlockState>::kNames[static_cast<int>(b.state)]).c_str(),
              (unsigned long long)b.revision.value, (unsigned long long)b.pid.value, (unsigned long long)b.publisher.value,
              (unsigned long long)b.length, to_hex(ByteView(b.sha256.data(), b.sha256.size())).c_str());
  if (b.retired_revision) std::printf(", unread from revision %llu", (unsigned long long)b.retired_revision->value);
  std::printf("\n");
}

std::optional<int> BlockCommands::run(const Global& g, Client& client) {
  const auto& o = *o_;
  if (!o.blocks->parsed()) return std::nullopt;
  auto bytes = parse_bytes(o.name);
  if (!bytes || bytes->empty() || bytes->size() > 32) return usage("--name: 1-32 bytes");
  const EntryKey name{std::move(*bytes)};
  if (o.show->parsed()) {
    auto r = client.query(BlockRead{ResourceId{o.resource}, name});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    print_block(std::get<BlockInfo>(r->result));
    return 0;
  }
  auto r = o.retire->parsed() ? client.submit(RetireBlock{ResourceId{o.resource}, name}) : client.submit(DeleteBlock{ResourceId{o.resource}, name});
  if (!r.ok()) return report(g, r.error());
  print_receipt(g, *r);
  return 0;
}

}  // namespace cowboy::transit::cli
