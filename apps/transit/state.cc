// The transit CLI's state commands (docs/transit.md, "A worker loop"):
//
//   transit resource create --name doc
//   transit process create --pid 7 --require doc
//   transit process associate --pid 7 --name doc --resource 1
//   transit process init --pid 7 --generation 0
//   transit send --pid 7 --value hello
//   transit process own --pid 7 --generation 1
//   transit process show --pid 7
//   transit turn --pid 7 --generation 2 --input 1 --resource 1 --put greeting=hello
//   transit entries --resource 1 --revision 2 --all
//   transit process list --cut 12        # the first page at position 12
//   transit process terminate --pid 7 --generation 2
//   transit process spawn --parent 7 --generation 2 --pid 8 --require doc
//
// Keys and values are text, or hex:... for any bytes; they print the same way.
#include <fstream>
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "common/crypto.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {

using Bytes = std::vector<std::uint8_t>;

std::optional<Bytes> parse_bytes(const std::string& text) {
  if (!text.starts_with("hex:")) return Bytes(text.begin(), text.end());
  const std::string hex = text.substr(4);
  if (hex.size() % 2 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return std::nullopt;
  Bytes out;
  for (std::size_t i = 0; i < hex.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string show_bytes(const Bytes& b) {
  const bool printable = std::all_of(b.begin(), b.end(), [](std::uint8_t c) { return c >= 0x21 && c < 0x7f && c != '='; });
  if (printable && !b.empty()) return std::string(b.begin(), b.end());
  std::string out = "hex:";
  out.append(to_hex(ByteView(b)));
  return out;
}

namespace {

template <typename Tag> std::string opt(const std::optional<StrongId<Tag, Id>>& v) { return v ? std::to_string(v->value) : "-"; }
std::string state_name(ProcessState s) { return std::string(EnumTraits<ProcessState>::kNames[static_cast<int>(s)]); }

}  // namespace

struct StateCommands::Options {
  CLI::App *resource_create, *resource_retire, *resource_list, *resource_access;
  CLI::App *process_create, *process_associate, *process_init, *process_own, *process_show, *process_suspend,
      *process_resume, *process_retry, *process_list, *process_terminate, *process_spawn, *associations, *lookup;
  CLI::App *send, *turn, *fail, *deliver, *entries, *read, *block;

  std::string name, value, reason, key, block_out, source_sha256;
  std::optional<Id> source_revision;
  std::optional<Id> owner, revision, view, input, resource_id, cut;
  Id id = 0, pid = 0, generation = 0, resume_by_ms = 0, failure_input = 0, output = 0, parent = 0;
  std::vector<std::string> required, puts, deletes, outputs, blocks, keys;
  std::vector<Id> views;
  std::string after;
  bool all = false, allow_collection = false, segments = false;
  std::optional<Id> effect_executor, effect_deadline_ms;
  Id effect_budget = 1;
  std::string effect_intent;
};

StateCommands::StateCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  auto* resource = app.add_subcommand("resource", "resources: create, retire, list, check read access");
  resource->require_subcommand(1);
  o.resource_create = resource->add_subcommand("create", "a resource at revision 1 (its name is reserved forever)");
  o.resource_create->add_option("--name", o.name, "1-32 bytes")->required();
  o.resource_create->add_option("--owner", o.owner, "its lifetime owner PID");
  o.resource_retire = resource->add_subcommand("retire", "retire a resource (its name stays reserved)");
  o.resource_retire->add_option("--id", o.id)->required();
  o.resource_list = resource->add_subcommand("list", "resources you may inspect, a page at a time");
  o.resource_access = resource->add_subcommand("access", "check current inspect and read rights (read_access)");
  o.resource_access->add_option("--id", o.id)->required();

  auto* process = app.add_subcommand(
      "process", "processes: create, associate, init, own, show, list, suspend, resume, retry, terminate, spawn");
  process->require_subcommand(1);
  o.process_create = process->add_subcommand("create", "an uninitialized process");
  o.process_create->add_option("--pid", o.pid)->required();
  o.process_create->add_option("--require", o.required, "an association name it needs (up to four)");
  o.process_create->add_flag("--allow-collection", o.allow_collection, "opt in to working-catalog collection (recorded)");
  o.process_associate = process->add_subcommand("associate", "name a resource for a process");
  o.process_associate->add_option("--pid", o.pid)->required();
  o.process_associate->add_option("--name", o.name)->required();
  o.process_associate->add_option("--resource", o.id)->required();
  o.process_init = process->add_subcommand("init", "initialize: check its required associations");
  o.process_own = process->add_subcommand("own", "take ownership to execute it");
  o.process_resume = process->add_subcommand("resume", "resume a suspended process");
  o.process_suspend = process->add_subcommand("suspend", "suspend until a finite deadline");
  o.process_suspend->add_option("--resume-by-ms", o.resume_by_ms, "the deadline, ms since the Unix epoch")->required();
  o.process_terminate = process->add_subcommand("terminate", "retire for good: cancel its inputs, fence its work");
  for (auto* c : {o.process_init, o.process_own, o.process_resume, o.process_suspend, o.process_terminate}) {
    c->add_option("--pid", o.pid)->required();
    c->add_option("--generation", o.generation)->required();
  }
  o.process_retry = process->add_subcommand("retry", "clear a failed input's block (scoped_retry)");
  o.process_retry->add_option("--pid", o.pid)->required();
  o.process_retry->add_option("--generation", o.generation, "the expected generation")->required();
  o.process_retry->add_option("--input", o.failure_input, "the failed input")->required();
  o.process_spawn = process->add_subcommand("spawn", "as a parent's executor: a child bound to the parent's resources");
  o.process_spawn->add_option("--parent", o.parent)->required();
  o.process_spawn->add_option("--generation", o.generation, "the parent's")->required();
  o.process_spawn->add_option("--pid", o.pid, "the child's")->required();
  o.process_spawn->add_option("--require", o.required, "a name of the parent's associations it inherits (up to four)");
  o.process_spawn->add_flag("--allow-collection", o.allow_collection, "opt in to working-catalog collection (recorded)");
  o.process_show = process->add_subcommand("show", "its metadata, and its next input if you execute it now");
  o.process_show->add_option("--pid", o.pid)->required();
  o.process_list = process->add_subcommand("list", "processes you may inspect, as recorded, a page at a time");
  o.associations = app.add_subcommand("associations", "a process's associations, a page at a time");
  o.associations->add_option("--pid", o.pid)->required();
  o.lookup = app.add_subcommand("lookup", "one association by name (absent and hidden alike print none)");
  o.lookup->add_option("--pid", o.pid)->required();
  o.lookup->add_option("--name", o.name)->required();

  o.send = app.add_subcommand("send", "send an input into a process's mailbox");
  o.send->add_option("--pid", o.pid)->required();
  o.send->add_option("--value", o.value, "at most 256 bytes")->required();
  o.turn = app.add_subcommand("turn", "publish a turn: consume an input, write one resource, views, outputs");
  o.turn->add_option("--pid", o.pid)->required();
  o.turn->add_option("--generation", o.generation)->required();
  o.turn->add_option("--input", o.input, "the mailbox head it consumes");
  o.turn->add_option("--resource", o.resource_id, "the one writable associated resource");
  o.turn->add_option("--revision", o.revision, "only if the resource is at this revision");
  o.turn->add_option("--put", o.puts, "KEY=VALUE (up to four mutations)");
  o.turn->add_option("--delete", o.deletes, "KEY");
  o.turn->add_option("--block", o.blocks, "NAME=FILE, an immutable block (up to 16, 64 KiB each)");
  o.turn->add_option("--view", o.views, "retain a view of this associated resource");
  o.turn->add_option("--output", o.outputs, "PID=VALUE, for a courier to deliver");
  o.turn->add_option("--effect-executor", o.effect_executor, "capture an effect intent for this executor");
  o.turn->add_option("--effect-deadline-ms", o.effect_deadline_ms, "its reconciliation deadline, ms since the Unix epoch");
  o.turn->add_option("--effect-budget", o.effect_budget, "its observation budget, 1-16")->capture_default_str();
  o.turn->add_option("--effect-intent", o.effect_intent, "its opaque intent, at most 256 bytes");
  o.fail = app.add_subcommand("fail", "report a failed turn: the process blocks on its head input");
  o.fail->add_option("--pid", o.pid)->required();
  o.fail->add_option("--generation", o.generation)->required();
  o.fail->add_option("--input", o.failure_input)->required();
  o.fail->add_option("--reason", o.reason);
  o.deliver = app.add_subcommand("deliver", "deliver a pending output (courier)");
  o.deliver->add_option("--output", o.output)->required();

  o.entries = app.add_subcommand("entries", "a resource's entries at an exact revision or a view, a page at a time");
  o.read = app.add_subcommand("read", "up to eight keys in one observation (read_entries)");
  o.block = app.add_subcommand("block", "read one block to a file");
  for (auto* c : {o.entries, o.read, o.block}) {
    c->add_option("--resource", o.resource_id, "the resource");
    c->add_option("--revision", o.revision, "its exact current revision");
    c->add_option("--view", o.view, "or a retained view");
  }
  o.entries->add_option("--key", o.key, "one key only");
  o.entries->add_flag("--segments", o.segments,
                      "the whole result as segments (read_segment), ending with its complete-result evidence");
  // Listings: --cut alone reads the first page at that position (an identity
  // observation's, decision 40); with --after it continues a listing.
  for (auto* c : {o.resource_list, o.process_list, o.associations, o.entries}) {
    c->add_option("--cut", o.cut, "the listing's position: the first page's, or an identity observation's");
    c->add_option("--after", o.after, "with --cut: where the last page stopped");
    c->add_flag("--all", o.all, "follow the cursor to the end");
  }
  o.read->add_option("keys", o.keys, "KEY ...")->required();
  o.block->add_option("--name", o.name)->required();
  o.block->add_option("--out", o.block_out, "the file to write")->required();
  o.block->add_option("--source-revision", o.source_revision, "source-qualified: the revision that published it");
  o.block->add_option("--source-sha256", o.source_sha256, "... and its SHA-256 (64 hex digits)");
}

std::optional<int> StateCommands::run(const Global& g, Client& client) {
  auto& o = *o_;
  auto submit = [&](Command op, std::vector<Bytes> blocks = {}) {
    auto r = client.submit(std::move(op), std::move(blocks));
    if (!r.ok()) return report(g, r.error());
    print_receipt(g, *r);
    return 0;
  };
  auto key_of = [&](const std::string& text) -> std::optional<EntryKey> {
    auto b = parse_bytes(text);
    if (!b) return std::nullopt;
    return EntryKey{std::move(*b)};
  };

  if (o.resource_create->parsed()) return submit(CreateResource{{o.name}, id_of<Pid>(o.owner)});
  if (o.resource_retire->parsed()) return submit(RetireResource{ResourceId{o.id}});
  if (o.process_create->parsed()) {
    CreateProcess c{Pid{o.pid}, {}, o.allow_collection};
    for (const auto& n : o.required) c.required.items.push_back({n});
    return submit(c);
  }
  if (o.process_spawn->parsed()) {
    Spawn c{Pid{o.parent}, o.generation, Pid{o.pid}, {}, o.allow_collection};
    for (const auto& n : o.required) c.required.items.push_back({n});
    return submit(c);
  }
  if (o.process_terminate->parsed()) return submit(Terminate{Pid{o.pid}, o.generation});
  if (o.process_associate->parsed()) return submit(Associate{Pid{o.pid}, {o.name}, ResourceId{o.id}});
  if (o.process_init->parsed()) return submit(Initialize{Pid{o.pid}, o.generation});
  if (o.process_own->parsed()) return submit(Own{Pid{o.pid}, o.generation});
  if (o.process_suspend->parsed()) return submit(Suspend{Pid{o.pid}, o.generation, TrustedMs{o.resume_by_ms}});
  if (o.process_resume->parsed()) return submit(Resume{Pid{o.pid}, o.generation});
  if (o.process_retry->parsed()) return submit(Retry{Pid{o.pid}, o.generation, o.failure_input});
  if (o.send->parsed()) {
    auto v = parse_bytes(o.value);
    if (!v) return usage("--value: text, or hex:... with an even number of hex digits");
    return submit(Send{Pid{o.pid}, {std::move(*v)}});
  }
  if (o.fail->parsed()) return submit(FailTurn{Pid{o.pid}, o.generation, o.failure_input, {o.reason}});
  if (o.deliver->parsed()) return submit(Deliver{o.output});
  if (o.turn->parsed()) {
    Turn t{Pid{o.pid}, o.generation, o.input, id_of<ResourceId>(o.resource_id), id_of<Revision>(o.revision), {}, {}, {}, {}, std::nullopt};
    for (const auto& p : o.puts) {
      const auto eq = p.find('=');
      auto k = eq == std::string::npos ? std::nullopt : key_of(p.substr(0, eq));
      auto v = eq == std::string::npos ? std::nullopt : parse_bytes(p.substr(eq + 1));
      if (!k || !v) return usage("--put KEY=VALUE");
      t.mutations.items.push_back({std::move(*k), EntryValue{std::move(*v)}});
    }
    for (const auto& d : o.deletes) {
      auto k = key_of(d);
      if (!k) return usage("--delete KEY");
      t.mutations.items.push_back({std::move(*k), std::nullopt});
    }
    std::vector<Bytes> bodies;
    for (const auto& b : o.blocks) {
      const auto eq = b.find('=');
      auto name = eq == std::string::npos ? std::nullopt : key_of(b.substr(0, eq));
      if (!name) return usage("--block NAME=FILE");
      std::ifstream in(b.substr(eq + 1), std::ios::binary);
      if (!in) return usage("--block: cannot read " + b.substr(eq + 1));
      Bytes body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      t.blocks.items.push_back({std::move(*name), body.size(), crypto::sha256(ByteView(body))});
      bodies.push_back(std::move(body));
    }
    for (Id v : o.views) t.views.items.push_back(ResourceId{v});
    for (const auto& out : o.outputs) {
      const auto eq = out.find('=');
      auto v = eq == std::string::npos ? std::nullopt : parse_bytes(out.substr(eq + 1));
      Pid destination{};
      try {
        destination = Pid{std::stoull(out.substr(0, eq))};
      } catch (...) {
        v.reset();
      }
      if (!v) return usage("--output PID=VALUE");
      t.outputs.items.push_back({destination, {std::move(*v)}});
    }
    if (o.effect_executor) {
      auto intent = parse_bytes(o.effect_intent);
      if (!intent) return usage("--effect-intent: text, or hex:... with an even number of hex digits");
      t.effect = EffectIntent{PrincipalId{*o.effect_executor}, id_of<TrustedMs>(o.effect_deadline_ms), {std::move(*intent)}, o.effect_budget};
    }
    return submit(t, std::move(bodies));
  }

  // Queries: print each answer (or, with --json, each Response as one line).
  auto ask = [&](QueryOp op, auto print) -> int {
    auto r = client.query(std::move(op));
    if (!r.ok()) return report(g, r.error());
    if (g.json) std::cout << to_json(*r) << "\n";
    else print(*r);
    return 0;
  };
  auto resource_line = [](const ResourceInfo& r) {
    std::printf("resource %llu %s revision %llu owner %s%s\n", (unsigned long long)r.resource.value, r.name.value.c_str(),
                (unsigned long long)r.revision.value, opt(r.owner).c_str(), r.retired ? " retired" : "");
  };
  auto after_id = [&]() -> std::optional<Id> {
    try {
      return o.after.empty() ? std::optional<Id>(0) : std::optional<Id>(std::stoull(o.after));
    } catch (...) {
      return std::nullopt;
    }
  };

  if (o.resource_access->parsed())
    return ask(ReadAccess{ResourceId{o.id}}, [&](const Response& r) { resource_line(std::get<ResourceAccess>(r.result).resource); });
  if (o.resource_list->parsed() || o.associations->parsed() || o.process_list->parsed()) {
    const auto after = after_id();
    if (!after || (!o.cut && !o.after.empty())) return usage("--after needs --cut (--after a number)");
    std::optional<Cursor> cursor;
    if (o.cut) cursor = Cursor{Position{*o.cut}, *after};
    for (;;) {
      QueryOp op = o.associations->parsed()  ? QueryOp{ListAssociations{Pid{o.pid}, cursor}}
                   : o.process_list->parsed() ? QueryOp{ListProcesses{cursor}}
                                              : QueryOp{ListResources{cursor}};
      auto r = client.query(op);
      if (!r.ok()) return report(g, r.error());
      if (g.json) std::cout << to_json(*r) << "\n";
      if (const auto* page = std::get_if<ResourcePage>(&r->result)) {
        if (!g.json) for (const auto& item : page->items.items) resource_line(item);
        cursor = page->cursor;
      } else if (const auto* processes = std::get_if<ProcessPage>(&r->result)) {
        if (!g.json)
          for (const auto& p : processes->items.items)
            std::printf("process %llu generation %llu %s owner %s mailbox %llu..%llu%s\n", (unsigned long long)p.pid.value,
                        (unsigned long long)p.generation, state_name(p.state).c_str(), opt(p.owner).c_str(),
                        (unsigned long long)p.head, (unsigned long long)p.tail,
                        p.resume_by_ms ? (" resume by " + std::to_string(p.resume_by_ms->value)).c_str() : "");
        cursor = processes->cursor;
      } else {
        const auto& assoc = std::get<AssociationPage>(r->result);
        if (!g.json)
          for (const auto& a : assoc.items.items)
            std::printf("association %llu %s -> resource %llu\n", (unsigned long long)a.revision, a.name.value.c_str(),
                        (unsigned long long)a.resource.value);
        cursor = assoc.cursor;
      }
      if (!cursor) return 0;
      if (!o.all) {
        if (!g.json) std::printf("more: --cut %llu --after %llu\n", (unsigned long long)cursor->cut.value, (unsigned long long)cursor->after);
        return 0;
      }
    }
  }
  if (o.lookup->parsed())
    return ask(AssociationLookup{Pid{o.pid}, {o.name}}, [&](const Response& r) {
      const auto& a = std::get<LookupResult>(r.result).association;
      if (a) std::printf("association %llu %s -> resource %llu\n", (unsigned long long)a->revision, a->name.value.c_str(), (unsigned long long)a->resource.value);
      else std::printf("none\n");
    });
  if (o.process_show->parsed())
    return ask(ProcessRead{Pid{o.pid}}, [&](const Response& r) {
      const auto& p = std::get<ProcessInfo>(r.result);
      std::printf("process %llu generation %llu %s owner %s mailbox %llu..%llu", (unsigned long long)p.pid.value,
                  (unsigned long long)p.generation, state_name(p.state).c_str(),
                  opt(p.owner).c_str(), (unsigned long long)p.head, (unsigned long long)p.tail);
      if (p.failure) std::printf(" failed on input %llu", (unsigned long long)*p.failure);
      if (p.cancelled) std::printf(" cancelled %llu", (unsigned long long)p.cancelled);
      if (p.parent) std::printf(" parent %llu", (unsigned long long)p.parent->value);
      if (p.allow_collection) std::printf(" collectable");
      std::printf("\n");
      if (p.input) std::printf("input %llu %s\n", (unsigned long long)p.input->input, show_bytes(p.input->value.value).c_str());
    });

  // Entry reads: exactly one basis.
  if (o.entries->parsed() || o.read->parsed() || o.block->parsed()) {
    if (o.view.has_value() == (o.resource_id.has_value() && o.revision.has_value()) && !o.read->parsed())
      return usage("give --resource R --revision N, or --view V");
    Basis basis = o.view ? Basis{ViewBasis{*o.view}} : Basis{CurrentBasis{ResourceId{o.resource_id.value_or(0)}, Revision{o.revision.value_or(0)}}};
    if (o.read->parsed()) {
      if (!o.resource_id) return usage("read needs --resource");
      if (o.keys.size() > kPageRecords) return usage("read takes at most eight keys");
      ReadEntries q{ResourceId{*o.resource_id}, id_of<Revision>(o.revision), o.view, {}};
      for (std::size_t i = 0; i < o.keys.size(); ++i) {
        auto k = key_of(o.keys[i]);
        if (!k) return usage("bad key " + o.keys[i]);
        q.keys.items[i] = std::move(*k);
      }
      return ask(q, [&](const Response& r) {
        const auto& b = std::get<EntryBatch>(r.result);
        for (std::size_t i = 0; i < o.keys.size(); ++i) {
          const auto& e = b.entries.items[i];
          std::printf("%s=%s\n", o.keys[i].c_str(), e ? show_bytes(e->value.value).c_str() : "(absent)");
        }
        std::printf("(resource %llu revision %llu%s)\n", (unsigned long long)b.resource.resource.value,
                    (unsigned long long)b.revision.value, b.view ? (", view " + std::to_string(*b.view)).c_str() : "");
      });
    }
    if (o.block->parsed()) {
      auto name = key_of(o.name);
      if (!name) return usage("bad --name");
      std::optional<BlockSource> source;
      if (o.source_revision || !o.source_sha256.empty()) {
        auto digest = fixed_from_hex<32>(o.source_sha256);
        if (!o.source_revision || !digest) return usage("--source-revision N and --source-sha256 HEX go together");
        source = BlockSource{Revision{*o.source_revision}, *digest};
      }
      auto r = client.query(ReadBlock{basis, *name, source});
      if (!r.ok()) return report(g, r.error());
      const auto& b = std::get<Block>(r->result);
      std::ofstream out(o.block_out, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(b.body.value.data()), static_cast<std::streamsize>(b.body.value.size()));
      if (!out) return usage("cannot write " + o.block_out);
      std::printf("block %s: %zu bytes from revision %llu\n", o.name.c_str(), b.body.value.size(), (unsigned long long)b.revision.value);
      return 0;
    }
    if (o.segments) {  // decisions 150-154
      if (!o.key.empty() || o.cut || o.all) return usage("--segments reads the whole result: no --key, --cut or --all");
      auto done = client.read_result(basis, [&](const Entry& e) {
        if (!g.json)
          std::printf("%s=%s (revision %llu)\n", show_bytes(e.key.value).c_str(), show_bytes(e.value.value).c_str(),
                      (unsigned long long)e.revision.value);
        return true;
      });
      if (!done.ok()) return report(g, done.error());
      if (g.json) std::cout << to_json(*done) << "\n";
      else
        std::printf("complete: %llu records in %llu segments, digest %s\n", (unsigned long long)done->records,
                    (unsigned long long)done->segments, to_hex(ByteView(done->digest)).c_str());
      return 0;
    }
    std::optional<EntryKey> key;
    if (!o.key.empty()) key = key_of(o.key);
    std::optional<EntryCursor> cursor;
    if (!o.cut && !o.after.empty()) return usage("--after needs --cut");
    if (o.cut) {
      auto after = o.after.empty() ? std::optional<Bytes>(Bytes{}) : parse_bytes(o.after);
      if (!after) return usage("bad --after");
      cursor = EntryCursor{Position{*o.cut}, {std::move(*after)}};
    }
    for (;;) {
      auto r = client.query(ListEntries{basis, key, cursor});
      if (!r.ok()) return report(g, r.error());
      const auto& page = std::get<EntryPage>(r->result);
      if (g.json) std::cout << to_json(*r) << "\n";
      else
        for (const auto& e : page.items.items)
          std::printf("%s=%s (revision %llu)\n", show_bytes(e.key.value).c_str(), show_bytes(e.value.value).c_str(), (unsigned long long)e.revision.value);
      cursor = page.cursor;
      if (!cursor) break;
      if (!o.all) {
        if (!g.json) std::printf("more: --cut %llu --after %s\n", (unsigned long long)cursor->cut.value, show_bytes(cursor->after.value).c_str());
        break;
      }
    }
    return 0;
  }
  return std::nullopt;
}

}  // namespace cowboy::transit::cli
