// The transit CLI's collect command (docs/transit.md, decisions 110-117, 186-187):
//
//   transit collect --pid 7 --kind output|effect|payload|resource --record N
//   transit collect --pid 7 --kind process
//
// One signed collect each time; a receipt with complete false asks for the
// same command again (at most eight records go per command).
#include "cli.h"

namespace cowboy::transit::cli {

struct CollectCommands::Options {
  CLI::App* collect = nullptr;
  Id pid = 0;
  std::optional<Id> record;
  std::string kind;
};

CollectCommands::CollectCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  o.collect = app.add_subcommand("collect", "collect a finished record of a process that allows collection, or the process");
  o.collect->add_option("--pid", o.pid)->required();
  o.collect->add_option("--kind", o.kind, "output, effect, payload, resource or process")->required();
  o.collect->add_option("--record", o.record, "the record's id (none for kind process)");
}

std::optional<int> CollectCommands::run(const Global& g, Client& client) {
  const auto& o = *o_;
  if (!o.collect->parsed()) return std::nullopt;
  const auto& names = EnumTraits<CollectKind>::kNames;
  const auto it = std::find(names.begin(), names.end(), o.kind);
  if (it == names.end()) return usage("--kind: output, effect, payload, resource or process");
  auto r = client.submit(Collect{Pid{o.pid}, static_cast<CollectKind>(it - names.begin()), o.record});
  if (!r.ok()) return report(g, r.error());
  print_receipt(g, *r);
  return 0;
}

}  // namespace cowboy::transit::cli
