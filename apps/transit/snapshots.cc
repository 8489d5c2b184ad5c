// The transit CLI's snapshot commands (docs/transit.md, decisions 70-78). A
// snapshot lives in the node, not in the CLI, so its token (printed by open,
// lowercase hex) carries it from one invocation to the next:
//
//   transit snapshot open --resource 1 [--revision 2] [--lease-ms 30000]
//   transit snapshot entries --token T [--key K | --after K] [--all]
//   transit snapshot read (--token T | --resource 1 [--revision 2]) [--after K] [--limit 32] [--finish]
//   transit snapshot close --token T
#include <iostream>

#include "cli.h"
#include "common/bytes.h"
#include "transit/contract/codec.h"

namespace cowboy::transit::cli {

struct SnapshotCommands::Options {
  CLI::App *snapshot, *open, *entries, *read, *close;
  std::string token, key, after;
  std::optional<Id> resource, revision;
  Id lease_ms = 30'000;
  Id limit = kSnapshotRangeRecords;
  bool all = false, finish = false;
};

SnapshotCommands::SnapshotCommands(CLI::App& app) : o_(std::make_shared<Options>()) {
  auto& o = *o_;
  o.snapshot = app.add_subcommand("snapshot", "leased, volatile snapshots of a resource");
  o.open = o.snapshot->add_subcommand("open", "open a snapshot of a resource at its current revision");
  o.entries = o.snapshot->add_subcommand("entries", "a snapshot's entries, a page at a time");
  o.read = o.snapshot->add_subcommand("read", "a range of captured entries with current metadata (snapshot_read)");
  o.close = o.snapshot->add_subcommand("close", "release a snapshot (idempotent)");
  for (auto* c : {o.open, o.read}) {
    c->add_option("--resource", o.resource, "the resource to snapshot");
    c->add_option("--revision", o.revision, "its current revision, checked");
    c->add_option("--lease-ms", o.lease_ms, "the lease, 1..60000 ms, renewed by every read")->capture_default_str();
  }
  for (auto* c : {o.entries, o.read, o.close}) c->add_option("--token", o.token, "the token open printed");
  o.entries->add_option("--key", o.key, "one key only");
  for (auto* c : {o.entries, o.read}) c->add_option("--after", o.after, "continue after this key");
  o.entries->add_flag("--all", o.all, "every page to the end");
  o.read->add_option("--limit", o.limit, "at most this many entries, 1..32")->capture_default_str();
  o.read->add_flag("--finish", o.finish, "release the snapshot with this read");
}

namespace {

void print_entries(const std::vector<Entry>& items) {
  for (const auto& e : items)
    std::printf("%s=%s (revision %llu)\n", show_bytes(e.key.value).c_str(), show_bytes(e.value.value).c_str(),
                (unsigned long long)e.revision.value);
}
void print_snapshot(const SnapshotInfo& s) {
  std::printf("snapshot %s of resource %llu at revision %llu, position %llu, lease until %llu\n",
              to_hex(ByteView(s.token.value)).c_str(), (unsigned long long)s.resource.value, (unsigned long long)s.revision.value,
              (unsigned long long)s.position.value, (unsigned long long)s.expires_at_ms.value);
}

}  // namespace

std::optional<int> SnapshotCommands::run(const Global& g, Client& client) {
  const auto& o = *o_;
  if (!o.snapshot->parsed()) return std::nullopt;
  std::optional<SnapshotToken> token;
  if (!o.token.empty()) {
    auto bytes = from_hex(o.token);
    if (!bytes || bytes->size() != kSnapshotTokenBytes) return usage("--token is the 64 hex digits open printed");
    token = SnapshotToken{std::move(*bytes)};
  }
  auto key_of = [](const std::string& text) -> std::optional<EntryKey> {
    auto bytes = parse_bytes(text);
    if (!bytes || bytes->empty() || bytes->size() > 32) return std::nullopt;
    return EntryKey{std::move(*bytes)};
  };
  std::optional<EntryKey> after;
  if (!o.after.empty() && !(after = key_of(o.after))) return usage("bad --after");

  if (o.open->parsed()) {
    if (!o.resource) return usage("open needs --resource");
    auto r = client.open_snapshot(ResourceId{*o.resource}, id_of<Revision>(o.revision), Millis{o.lease_ms});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    print_snapshot(r->snapshot);
    return 0;
  }
  if (o.close->parsed()) {
    if (!token) return usage("close needs --token");
    auto r = client.close_snapshot(*token);
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    std::printf(r->released ? "released\n" : "not open (closed, expired or unknown): nothing to release\n");
    return 0;
  }
  if (o.read->parsed()) {
    if (token.has_value() == o.resource.has_value()) return usage("read needs --token T or --resource R");
    const SnapshotSource source = token ? SnapshotSource{TokenSource{*token}}
                                        : SnapshotSource{AcquireSource{ResourceId{*o.resource}, id_of<Revision>(o.revision), Millis{o.lease_ms}}};
    auto r = client.snapshot_read(SnapshotRead{source, after, o.limit, o.finish});
    if (!r.ok()) return report(g, r.error());
    if (g.json) return std::cout << to_json(*r) << "\n", 0;
    print_snapshot(r->snapshot);
    print_entries(r->items.items);
    std::printf("(current revision %llu%s)\n", (unsigned long long)r->current.revision.value, r->released ? ", released" : "");
    if (r->next) std::printf("more: --after %s\n", show_bytes(r->next->value).c_str());
    return 0;
  }
  // entries
  if (!token) return usage("entries needs --token");
  std::optional<EntryKey> key;
  if (!o.key.empty() && !(key = key_of(o.key))) return usage("bad --key");
  if (key && after) return usage("--key or --after, not both");
  std::optional<EntryCursor> cursor;
  bool first = true;
  for (;;) {
    auto r = client.query(SnapshotEntries{*token, key, cursor});
    if (!r.ok()) return report(g, r.error());
    const auto& page = std::get<SnapshotPage>(r->result);
    if (first && after) {  // --after needs the snapshot's position, which the first answer names
      first = false;
      cursor = EntryCursor{page.snapshot.position, {after->value}};
      continue;
    }
    first = false;
    if (g.json) std::cout << to_json(*r) << "\n";
    else print_entries(page.items.items);
    cursor = page.cursor;
    if (!cursor) break;
    if (!o.all) {
      if (!g.json) std::printf("more: --after %s\n", show_bytes(cursor->after.value).c_str());
      break;
    }
  }
  return 0;
}

}  // namespace cowboy::transit::cli
