// The transit CLI's effect commands (docs/transit.md, decisions 43-49):
//
//   transit turn --pid 7 --generation 2 --effect-executor 31 --effect-deadline-ms D --effect-intent charge
//   transit effect attempt --effect 1                       # as the executor
//   transit effect observe --effect 1 --result ok --final   # closes it: observed
//   transit effect close --effect 1 --kind deadline         # once trusted time reaches the deadline
//   transit effect cancel --effect 1                        # an unattempted intent of a retired caller
//   transit effect show --effect 1
//   transit effect list --filter cancellable --all
#include <iostream>

#include "cli.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {
namespace {

template <typename E> std::string name_of_enum(E v) { return std::string(EnumTraits<E>::kNames[static_cast<std::size_t>(v)]); }
template <typename E> std::optional<E> enum_named(const std::string& text) {
  const auto& names = EnumTraits<E>::kNames;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

std::string step_text(const EffectStep& s) {
  return "by " + std::to_string(s.principal.value) + " at position " + std::to_string(s.position.value) + ", policy revision " +
         std::to_string(s.policy_revision);
}

// One line: what a listing shows of each effect.
std::string summary(const EffectInfo& e) {
  std::string out = "effect " + std::to_string(e.effect) + " of process " + std::to_string(e.pid.value) + ": " +
                    name_of_enum(e.phase);
  if (e.closure) out += " (" + name_of_enum(e.closure->kind) + ")";
  out += ", executor " + std::to_string(e.intent.executor.value) + ", deadline " +
         (e.intent.deadline_ms ? std::to_string(e.intent.deadline_ms->value) : std::string("none")) + ", observations " +
         std::to_string(e.observations.items.size()) + "/" + std::to_string(e.intent.observation_budget);
  return out;
}

void print_effect(const EffectInfo& e) {
  std::printf("%s\n", summary(e).c_str());
  std::printf("intent %s\n", show_bytes(e.intent.intent.value).c_str());
  std::printf("authorized %s\n", step_text(e.authorization).c_str());
  if (e.attempt) std::printf("attempt %s\n", step_text(*e.attempt).c_str());
  for (std::size_t i = 0; i < e.observations.items.size(); ++i) {
    const auto& o = e.observations.items[i];
    std::printf("observation %zu %s, input %s%s: %s\n", i + 1, step_text(o.step).c_str(),
                o.input ? std::to_string(*o.input).c_str() : "none", o.final ? ", final" : "",
                show_bytes(o.result.value).c_str());
  }
  if (const auto& c = e.closure) {
    std::printf("closure %s %s", name_of_enum(c->kind).c_str(), step_text(c->step).c_str());
    if (c->trusted_lower_bound_ms) std::printf(", trusted lower bound %llu", (unsigned long long)c->trusted_lower_bound_ms->value);
    std::printf("\n");
  }
}

}  // namespace

struct EffectCommands::Options {
  CLI::App *show, *list, *attempt, *observe, *close, *cancel;
  Id effect = 0;
  std::optional<Id> pid, cut;
  Id after = 0;
  std::string result, kind, filter = "all";
  bool final = false, all = false;
};

EffectCommands::EffectCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  auto* effect = app.add_subcommand("effect", "effects to closure: show, list, attempt, observe, close, cancel");
  effect->require_subcommand(1);
  o.show = effect->add_subcommand("show", "an effect as recorded: intent, attempt, observations, closure");
  o.attempt = effect->add_subcommand("attempt", "the executor starts the external work (once)");
  o.observe = effect->add_subcommand("observe", "the executor records a result");
  o.observe->add_option("--result", o.result, "opaque bytes, at most 256: text, or hex:...")->required();
  o.observe->add_flag("--final", o.final, "the outcome is known: closes the effect as observed");
  o.close = effect->add_subcommand("close", "close without a final result");
  o.close->add_option("--kind", o.kind, "abandoned or deadline")->required();
  o.cancel = effect->add_subcommand("cancel", "cancel an unattempted intent of a retired caller (administrative)");
  for (auto* c : {o.show, o.attempt, o.observe, o.close, o.cancel}) c->add_option("--effect", o.effect)->required();
  o.list = effect->add_subcommand("list", "effects you may inspect, a page at a time");
  o.list->add_option("--pid", o.pid, "one process's effects");
  o.list->add_option("--filter", o.filter, "all, unresolved, cancellable or overdue")->capture_default_str();
  o.list->add_option("--cut", o.cut, "the listing's position: the first page's, or an identity observation's");
  o.list->add_option("--after", o.after, "with --cut: the last effect examined");
  o.list->add_flag("--all", o.all, "follow the cursor to the end");
}

std::optional<int> EffectCommands::run(const Global& g, Client& client) {
  auto& o = *o_;
  auto submit = [&](Command op) {
    auto r = client.submit(std::move(op));
    if (!r.ok()) return report(g, r.error());
    print_receipt(g, *r);
    return 0;
  };
  if (o.attempt->parsed()) return submit(AttemptEffect{o.effect});
  if (o.observe->parsed()) {
    auto result = parse_bytes(o.result);
    if (!result) return usage("--result: text, or hex:... with an even number of hex digits");
    return submit(ObserveEffect{o.effect, {std::move(*result)}, o.final});
  }
  if (o.close->parsed()) {
    const auto kind = enum_named<CloseKind>(o.kind);
    if (!kind) return usage("--kind abandoned or deadline");
    return submit(CloseEffect{o.effect, *kind});
  }
  if (o.cancel->parsed()) return submit(CancelEffect{o.effect});
  if (o.show->parsed()) {
    auto r = client.query(EffectRead{o.effect});
    if (!r.ok()) return report(g, r.error());
    if (g.json) std::cout << to_json(*r) << "\n";
    else print_effect(std::get<EffectInfo>(r->result));
    return 0;
  }
  if (o.list->parsed()) {
    const auto filter = enum_named<EffectFilter>(o.filter);
    if (!filter) return usage("--filter all, unresolved, cancellable or overdue");
    if (!o.cut && o.after) return usage("--after needs --cut");
    std::optional<Cursor> cursor;
    if (o.cut) cursor = Cursor{Position{*o.cut}, o.after};
    for (;;) {
      auto r = client.query(ListEffects{id_of<Pid>(o.pid), *filter, cursor});
      if (!r.ok()) return report(g, r.error());
      const auto& page = std::get<EffectPage>(r->result);
      if (g.json) std::cout << to_json(*r) << "\n";
      else
        for (const auto& e : page.items.items) std::printf("%s\n", summary(e).c_str());
      cursor = page.cursor;
      if (!cursor) return 0;
      if (!o.all) {
        if (!g.json) std::printf("more: --cut %llu --after %llu\n", (unsigned long long)cursor->cut.value, (unsigned long long)cursor->after);
        return 0;
      }
    }
  }
  return std::nullopt;
}

}  // namespace cowboy::transit::cli
