// transitd's storage layout: every RocksDB key is spelled here and nowhere
// else (docs/transit.md, decision 13). Ids are big-endian so keys sort by id.
// An entry version is resource | key (zero-padded to 32 bytes, then its
// length, which sorts keys as byte strings) | ~revision, so the version of a
// key as of revision R is the first at or after (resource, key, ~R): one seek.
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "transit/contract/state.h"

namespace cowboy::transit::node::layout {

inline constexpr std::string_view kGenesis = "genesis";
inline constexpr std::string_view kHead = "head";
/// The storage format, written with the genesis: a journal without this one
/// is refused as it opens (there is no decoder of an earlier format).
inline constexpr std::string_view kFormat = "format";
inline constexpr std::string_view kFormatVersion = "transit.storage.7";
// 2: process versions; 3: every record versioned; 4: the head's storage fields
// (location definition, fence, grace) and the compaction ledger (decisions 140-146);
// 5: the stored indexes over outputs, effects and payloads (decision 170);
// 6: the stored indexes over resources, associations and views (decision 175);
// 7: the resources each process wrote without owning them (decision 190)

// Tables, one letter each, listed once in kTables below. `j/` + position
// holds a decision's signed request (the canonical SignedRequest text
// received) and `s/` + principal + sequence its receipt, which answers exact
// retries; trimming deletes `j/` below the floor and never `s/` (decisions 66, 67).
inline constexpr char kPrincipals = 'p', kRoles = 'r', kGrants = 'g', kCredentials = 'c', kSequences = 's',
                      kJournal = 'j', kResources = 'x', kProcesses = 'q', kAssociations = 'a', kViews = 'v',
                      kOutputs = 'o', kEffects = 'f', kEntries = 'e', kInputs = 'm', kBlocks = 'b',
                      kPayloads = 'y',  // payload records; the bytes live in the payload store (payload_store.h)
                      kEnded = 'n',     // the index of processes that may have ended: `n/` + pid, no value
                      kRuntime = 'u',   // runtime bindings by PID (decisions 120-129)
                      kBlockRecords = 'k',
                      kCompactions = 'l',  // the compaction ledger (decisions 144-146)
                      kRelocated = 'z';    // how far the relocator got: `z/` alone
// The indexes the rules walk over outputs, effects and payloads, stored
// (decision 170): rows with no value, keyed by ids, changed in place by the
// decision that changes them, in its write.
inline constexpr char kRoutes = 'w',       // pending outputs by (source, destination, output): FIFO per route
                      kArriving = 'd',     // pending outputs by (destination, source, output)
                      kRouteHeads = 't',   // the oldest pending output of every route, by output
                      kUnresolved = 'i',   // the effects not closed, by effect
                      kOutputsOf = 'O',    // outputs by (source, output)
                      kEffectsOf = 'F',    // effects by (pid, effect)
                      kPayloadsOf = 'Y',   // payloads by (pid, payload)
                      kPurges = 'P',       // deleted block bodies awaiting read-lease grace (decision 180)
                      kNeeds = 'C';        // each leaf's keys written since its last relocation (decision 183)
// The same over resources, associations and views (decision 175). A name is
// padded as an entry key is (32 bytes, then its length), so one name's rows
// share a prefix no other name's start with.
inline constexpr char kResourceNames = 'R',     // resources by (padded name, resource): reserved forever
                      kLifetimeOf = 'L',        // resources by (lifetime owner, resource)
                      kAssociationsOf = 'A',    // associations by (pid, association revision)
                      kAssociationNames = 'N',  // live associations by (pid, padded name, revision)
                      kAssociatedBy = 'B',      // associations by (resource, pid, revision)
                      kViewsOf = 'V',           // views by (pid, view)
                      kViewsOn = 'W';           // views by (resource, view)
// The resources a process wrote without owning their lifetime (decision 190):
// written by the turn that first changes one's entries or blocks for it, kept
// whatever becomes of the association, removed by the resource's collection.
inline constexpr char kWrittenBy = 'H',  // by (pid, resource): the process gate's
                      kWritersOf = 'X';  // by (resource, pid): the resource's collection's

/// One storage table: its key prefix, its name, what it holds, whether the
/// journal reads it whole into the authority at start, and, for a table of
/// immutable record versions, how long a record's key is (its table and ids,
/// without the version's ~position; 0: not a table of record versions).
/// How Journal::stage writes a table's share of a decision: by the table's own
/// case in stage_table (records, or written elsewhere), or as index rows - the
/// decision's Touched::rows under its prefix, put or deleted in place - so that
/// a table of rows needs no case of its own and cannot be left out.
enum class Staging : std::uint8_t { kUnset, kOwnCase, kRows };
struct Table {
  char prefix;
  std::string_view name;
  std::string_view holds;
  Staging staging;  // no default: every entry says (checked below)
  bool read_at_start;
  std::size_t record_key = 0;
};
inline constexpr std::size_t kIdKey = 2 + 8, kPairKey = 2 + 8 + 8, kPaddedKey = 33;  // 32 bytes, then the length
/// Every table of the store, once: Journal::load reads those marked
/// read_at_start, Journal::stage writes a decision's records table by table
/// in this order, and the storage tests check that every stored key belongs
/// to one of them. Every record table is immutable versions (decisions 130,
/// 161): nothing is overwritten, and a removal is a version of its own.
inline constexpr Table kTables[] = {
    {kJournal, "journal", "signed requests by position; trimmed below the floor", Staging::kOwnCase, false},
    {kSequences, "receipts", "receipts by (principal, sequence): exact retries", Staging::kOwnCase, false},
    {kPrincipals, "principals", "PrincipalRecord versions by (principal, ~position)", Staging::kOwnCase, true, kIdKey},
    {kRoles, "roles", "RoleRecord versions by (role, ~position)", Staging::kOwnCase, true, kIdKey},
    {kGrants, "grants", "GrantRecord versions by (grant, ~position)", Staging::kOwnCase, true, kIdKey},
    {kCredentials, "credentials", "(principal, role) binding versions by (principal, role, ~position)",
     Staging::kOwnCase, true, kPairKey},
    {kResources, "resources", "ResourceRecord versions by (resource, ~position), read from disk (decision 175)",
     Staging::kOwnCase, false, kIdKey},
    {kProcesses, "processes", "ProcessRecord versions by (pid, ~position), read from disk (decision 130)",
     Staging::kOwnCase, false, kIdKey},
    {kEnded, "ended", "the index of processes that may have ended, by pid, no value; changed in place",
     Staging::kOwnCase, true},
    {kAssociations, "associations", "Association versions by (pid, association revision, ~position), read from disk",
     Staging::kOwnCase, false, kPairKey},
    {kViews, "views", "ViewRecord versions by (view, ~position), read from disk (decision 175)",
     Staging::kOwnCase, false, kIdKey},
    {kOutputs, "outputs", "OutputRecord versions by (output, ~position), read from disk (decision 170)",
     Staging::kOwnCase, false, kIdKey},
    {kEffects, "effects", "EffectRecord versions by (effect, ~position), read from disk (decision 170)",
     Staging::kOwnCase, false, kIdKey},
    {kPayloads, "payloads", "PayloadRecord versions by (payload, ~position), read from disk (decision 170)",
     Staging::kOwnCase, false, kIdKey},
    {kRuntime, "runtime", "RuntimeRecord versions by (pid, ~position), read from disk (decision 175)",
     Staging::kOwnCase, false, kIdKey},
    {kEntries, "entries", "entry versions by (resource, padded key, ~revision), read from disk",
     Staging::kOwnCase, false},
    {kInputs, "inputs", "mailbox input versions by (pid, input, ~position), read from disk",
     Staging::kOwnCase, false, kPairKey},
    {kBlocks, "blocks", "block bodies by (resource, padded name), read from disk; delete_block removes one",
     Staging::kOwnCase, false},
    {kBlockRecords, "block records", "BlockInfo versions by (resource, padded name, ~position), read from disk",
     Staging::kOwnCase, false, 2 + 8 + kPaddedKey},
    {kCompactions, "compactions", "CompactionRecord by cursor, written once by the storage_compact that took it",
     Staging::kOwnCase, false},
    {kRelocated, "relocated", "the highest cursor whose relocation has finished; changed in place, unsynced",
     Staging::kOwnCase, false},
    {kRoutes, "routes", "pending outputs by (source, destination, output), no value; changed in place",
     Staging::kRows, false},
    {kArriving, "arriving", "pending outputs by (destination, source, output), no value; changed in place",
     Staging::kRows, false},
    {kRouteHeads, "route heads", "the oldest pending output of each route, by output, no value; changed in place",
     Staging::kRows, false},
    {kUnresolved, "unresolved effects", "effects not closed, by effect, no value; changed in place",
     Staging::kRows, false},
    {kOutputsOf, "outputs of", "outputs by (source, output), no value; changed in place", Staging::kRows, false},
    {kEffectsOf, "effects of", "effects by (pid, effect), no value; changed in place", Staging::kRows, false},
    {kPayloadsOf, "payloads of", "payloads by (pid, payload), no value; changed in place", Staging::kRows, false},
    {kResourceNames, "resource names", "resources by (padded name, resource), no value; never removed",
     Staging::kRows, false},
    {kLifetimeOf, "lifetimes of", "resources by (lifetime owner, resource), no value; never removed",
     Staging::kRows, false},
    {kAssociationsOf, "associations of", "associations by (pid, revision), no value; changed in place",
     Staging::kRows, false},
    {kAssociationNames, "association names", "live associations by (pid, padded name, revision), no value",
     Staging::kRows, false},
    {kAssociatedBy, "associated by", "associations by (resource, pid, revision), no value; changed in place",
     Staging::kRows, false},
    {kViewsOf, "views of", "views by (pid, view), no value; changed in place", Staging::kRows, false},
    {kViewsOn, "views on", "views by (resource, view), no value; changed in place", Staging::kRows, false},
    {kWrittenBy, "written by",
     "resources a process wrote without owning them, by (pid, resource), no value; changed in place", Staging::kRows,
     false},
    {kWritersOf, "writers of", "the same by (resource, pid), no value; changed in place", Staging::kRows, false},
    {kPurges, "purges", "deleted block bodies by (epoch deleted in, resource, padded name), no value; changed in place",
     Staging::kRows, false},
    {kNeeds, "compaction needs",
     "keys written into a leaf since its last relocation, by the leaf's record key; bounded, changed in place, read at "
     "start (decision 183)",
     Staging::kOwnCase, true},
};
consteval bool prefixes_distinct() {
  for (std::size_t i = 0; i < std::size(kTables); ++i)
    for (std::size_t j = i + 1; j < std::size(kTables); ++j)
      if (kTables[i].prefix == kTables[j].prefix) return false;
  return true;
}
static_assert(prefixes_distinct(), "two storage tables share a prefix");
consteval bool staging_given() {
  for (const auto& t : kTables)
    if (t.staging == Staging::kUnset) return false;
  return true;
}
static_assert(staging_given(), "a storage table says not how a decision stages it");
/// The registry's entry for `prefix`; null for none.
constexpr const Table* table_of(char prefix) {
  for (const auto& t : kTables)
    if (t.prefix == prefix) return &t;
  return nullptr;
}

inline void put_be64(std::string& out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}
inline std::uint64_t get_be64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

/// A key part is a u64 or a strong id (values.h), written as its value: the
/// stored bytes are the same either way.
inline std::uint64_t wire(std::uint64_t v) { return v; }
template <typename Tag> std::uint64_t wire(StrongId<Tag, std::uint64_t> id) { return id.value; }

inline std::string table(char t) { return std::string{t, '/'}; }
inline std::string key(char t, auto a) {
  std::string k = table(t);
  put_be64(k, wire(a));
  return k;
}
inline std::string key(char t, auto a, auto b) {
  std::string k = key(t, a);
  put_be64(k, wire(b));
  return k;
}

// A record version (decisions 130, 161): the record's key, then ~position,
// so the record as of position P is the first version at or after
// (record key, ~P) - one seek - and the newest is the first of its key. A
// version is written once, by the decision at that position, and never
// overwritten; a removal is a version with an empty value (kRemoved).
inline std::string version(std::string record_key, Position position) {
  put_be64(record_key, ~position.value);
  return record_key;
}
/// As of this position a read finds a record's newest version (~0 sorts first).
inline constexpr Position kNewest{~std::uint64_t{0}};
inline constexpr std::string_view kRemoved = "";
/// A row with nothing to say but that it is there (a credential binding).
inline constexpr std::string_view kPresent = "+";
/// The position of a stored version of a record whose key is `record_key` bytes long.
inline Position version_position(std::string_view stored, std::size_t record_key) {
  return Position{~get_be64(stored.substr(record_key))};
}

inline std::string key(char t, auto a, auto b, auto c) {
  std::string k = key(t, a, b);
  put_be64(k, wire(c));
  return k;
}
/// The last id of an index row's key (decision 170): the record it lists.
inline std::uint64_t last_id(std::string_view stored) { return get_be64(stored.substr(stored.size() - 8)); }

/// The journal entries below `floor`, as a range [first, second) to delete.
inline std::pair<std::string, std::string> journal_below(Position floor) {
  return {key(kJournal, 0), key(kJournal, floor)};
}

// Process records are immutable versions (decision 130): `q/` + pid +
// ~position, written by each decision that changes the process and never
// overwritten, so the record as of position P is the first at or after
// (pid, ~P): one seek, like an entry version.
inline std::string process_version(Pid pid, Position position) { return key(kProcesses, pid, ~position.value); }
inline std::string process_versions(Pid pid) { return key(kProcesses, pid); }
inline constexpr std::size_t kProcessKey = 2 + 8 + 8;
/// The pid and position of a stored process version (a key kProcessKey long).
inline std::pair<Pid, Position> parse_process(std::string_view stored) {
  return {Pid{get_be64(stored.substr(2))}, Position{~get_be64(stored.substr(10))}};
}

/// The versions of one entry share their first kEntryPrefix bytes (table,
/// resource, padded key): the prefix bloom filters of the store are on it.
inline constexpr std::size_t kEntryPrefix = 2 + 8 + kPaddedKey;

/// `k` + `bytes` (at most 32: an entry key, a name) zero-padded to 32 bytes + their length.
inline std::string padded(std::string k, std::string_view bytes) {
  k.append(bytes);
  k.append(32 - bytes.size(), '\0');
  k.push_back(static_cast<char>(bytes.size()));
  return k;
}
inline std::string padded(char t, ResourceId resource, const EntryKey& entry_key) {
  return padded(key(t, resource),
                std::string_view(reinterpret_cast<const char*>(entry_key.value.data()), entry_key.value.size()));
}
/// The rows of resource name `name` (decision 175): one, whose last id is the resource.
inline std::string resource_name(std::string_view name) { return padded(table(kResourceNames), name); }
/// The rows of `pid`'s association named `name`: one while it is live, whose last id is its revision.
inline std::string association_name(Pid pid, std::string_view name) {
  return padded(key(kAssociationNames, pid), name);
}
/// A row under a name's prefix (resource_name, association_name) with the id it lists.
inline std::string row(std::string prefix, auto id) {
  put_be64(prefix, wire(id));
  return prefix;
}

/// All versions of all entries of `resource`.
inline std::string entries_of(ResourceId resource) { return key(kEntries, resource); }
/// The versions of one entry.
inline std::string entry_versions(ResourceId resource, const EntryKey& k) { return padded(kEntries, resource, k); }
/// The version written at `revision`; seeking it finds the newest at or below it.
inline std::string entry(ResourceId resource, const EntryKey& k, Revision revision) {
  std::string out = entry_versions(resource, k);
  put_be64(out, ~revision.value);
  return out;
}
/// Past every version of `k`: seeking it finds the next key.
inline std::string entry_end(ResourceId resource, const EntryKey& k) {
  std::string out = entry_versions(resource, k);
  out.append(8, '\xff');
  return out;
}
/// The key and revision of a stored entry version (`stored` starts with entries_of()).
inline std::pair<EntryKey, Revision> parse_entry(std::string_view stored) {
  const std::string_view rest = stored.substr(10);
  const auto length = static_cast<std::uint8_t>(rest[32]);
  EntryKey k{std::vector<std::uint8_t>(rest.begin(), rest.begin() + length)};
  return {std::move(k), Revision{~get_be64(rest.substr(kPaddedKey))}};
}

/// An entry version's value: 0x01 and the value's bytes, or 0x00 for a delete.
/// Raw, not JSON: entries are most of what turns write and reads return.
inline std::string entry_value(const std::optional<EntryValue>& value) {
  if (!value) return std::string(1, '\0');
  std::string out(1, '\1');
  out.append(reinterpret_cast<const char*>(value->value.data()), value->value.size());
  return out;
}
/// Null for a delete, and for anything this build did not write.
inline std::optional<EntryValue> parse_entry_value(std::string_view stored) {
  if (stored.empty() || stored[0] != '\1' || stored.size() > 1 + 256) return std::nullopt;
  return EntryValue{std::vector<std::uint8_t>(stored.begin() + 1, stored.end())};
}

inline std::string block(ResourceId resource, const EntryKey& name) { return padded(kBlocks, resource, name); }

/// A block's record (BlockInfo, JSON), beside its body and outliving it
/// (docs/transit.md, decisions 100-109): written by the turn that publishes
/// the block and rewritten by its retirement and deletion.
inline std::string block_record(ResourceId resource, const EntryKey& name) {
  return padded(kBlockRecords, resource, name);
}

// Storage maintenance (docs/transit.md, decisions 140-149).
/// The compaction ledger: `l/` + cursor holds what that relocation moved (a
/// CompactionRecord, JSON), written by the storage_compact that advanced the
/// head's compaction cursor to it, and never rewritten.
inline std::string compaction(std::uint64_t cursor) { return key(kCompactions, cursor); }
/// A deleted block whose body awaits the read-lease grace (decision 180):
/// `P/` + the storage epoch its delete_block was accepted in + resource +
/// padded name, no value. Epoch first, so the bodies a recorded grace frees
/// are the rows before `purges_below(grace_below)`.
inline std::string purge(std::uint64_t epoch, ResourceId resource, const EntryKey& name) {
  std::string k = key(kPurges, epoch);
  k += padded(kPurges, resource, name).substr(2);
  return k;
}
inline std::string purges_below(std::uint64_t epoch) { return key(kPurges, epoch); }
inline constexpr std::size_t kPurgeKey = 2 + 8 + 8 + kPaddedKey;
struct PurgeRow {
  std::uint64_t epoch;
  ResourceId resource;
  EntryKey name;
};
/// A purge row's fields; none for a key of another shape (not this build's).
inline std::optional<PurgeRow> parse_purge(std::string_view stored) {
  if (stored.size() != kPurgeKey || stored[0] != kPurges || stored[1] != '/') return std::nullopt;
  const auto length = static_cast<std::uint8_t>(stored[kPurgeKey - 1]);
  if (length == 0 || length > 32) return std::nullopt;
  const char* name = stored.data() + 18;
  return PurgeRow{get_be64(stored.substr(2)), ResourceId{get_be64(stored.substr(10))},
                  EntryKey{std::vector<std::uint8_t>(name, name + length)}};
}
/// A leaf's compaction need (decision 183): `C/` + the leaf's record key
/// (a block's is its record's, `k/`), holding how many keys the decisions
/// since its last relocation wrote into its ranges (8 bytes, big-endian).
inline std::string need(std::string_view leaf_key) {
  std::string k = table(kNeeds);
  k.append(leaf_key);
  return k;
}
/// The highest cursor whose relocation has physically finished (8 bytes,
/// big-endian; absent: none). Written unsynced after the rewrite: a crash
/// that loses it only repeats a relocation, which changes nothing logical.
inline std::string relocated() { return table(kRelocated); }
/// Every stored version of the record under `record_key` (decision 161), as
/// an inclusive key range: from its newest to past its oldest (~0).
inline std::pair<std::string, std::string> record_versions(const std::string& record_key) {
  return {record_key, version(record_key, Position{0})};
}
/// What a location means in this layout, hashed into the one current
/// 32-byte location definition every stored head carries (storage.cc):
/// a change to it is a new definition, and a head of another is refused.
inline constexpr std::string_view kLocationScheme =
    "transit.location.2: a leaf is located by the RocksDB keys of every stored version of its record (or entry) in "
    "this file's tables, and a block also by its body's key; its bytes by the SST files RocksDB places them in; "
    "storage_compact rewrites one leaf's key ranges into new files";

}  // namespace cowboy::transit::node::layout
