// The transit CLI's history commands (docs/transit.md, decisions 64-69):
//
//   transit checkpoint          # publish a checkpoint (realm_control; genesis allow_history_trim)
//   transit history             # the floor and the latest checkpoint
//   transit history trim        # one maintenance trim step: advance the floor to the latest checkpoint
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "transit/contract/codec.h"
#include "transit/history.h"

namespace cowboy::transit::cli {

struct HistoryCommands::Options {
  CLI::App *checkpoint, *history, *trim;
};

HistoryCommands::HistoryCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  o_->checkpoint = app.add_subcommand("checkpoint", "publish a checkpoint that a later trim may rest the floor on");
  o_->history = app.add_subcommand("history", "the history floor and the latest checkpoint");
  o_->trim = o_->history->add_subcommand("trim", "one trim step: advance the floor to the latest checkpoint");
}

std::optional<int> HistoryCommands::run(const Global& g, Client& client) {
  const auto& o = *o_;
  if (o.checkpoint->parsed()) {
    auto r = client.submit(Checkpoint{});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    std::printf("checkpoint at position %llu, roots %s\n", (unsigned long long)r->position.value,
                to_hex(ByteView(std::get<Checkpointed>(r->outcome).roots)).c_str());
    return 0;
  }
  if (o.trim->parsed()) {
    auto step = trim_history(client);
    if (!step.ok()) return report(g, step.error());
    if (g.json) return std::cout << (step->receipt ? to_json(*step->receipt) : "null") << "\n", 0;
    if (step->receipt)
      std::printf("floor advanced from %llu to %llu at position %llu\n", (unsigned long long)step->floor_before.value,
                  (unsigned long long)step->floor.value, (unsigned long long)step->receipt->position.value);
    else
      std::printf("nothing to trim: floor %llu\n", (unsigned long long)step->floor.value);
    return 0;
  }
  if (o.history->parsed()) {
    auto r = client.query(CheckpointQuery{});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    const auto& s = std::get<CheckpointStatus>(r->result);
    std::printf("floor %llu, ", (unsigned long long)s.floor.value);
    if (s.latest)
      std::printf("latest checkpoint at position %llu, roots %s\n", (unsigned long long)s.latest->position.value,
                  to_hex(ByteView(s.latest->roots)).c_str());
    else
      std::printf("no checkpoint\n");
    return 0;
  }
  return std::nullopt;
}

}  // namespace cowboy::transit::cli
