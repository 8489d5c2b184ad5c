// transitd's storage layout: every RocksDB key is spelled here and nowhere
// else (docs/transit.md, decision 13). Ids are big-endian so keys sort by id.
// An entry version is resource | key (zero-padded to 32 bytes, then its
// length, which sorts keys as byte strings) | ~revision, so the version of a
// key as of revision R is the first at or after (resource, key, ~R): one seek.
#pragma once

#include <string>
#include <string_view>

#include "transit/contract/state.h"

namespace cowboy::transit::node::layout {

inline constexpr std::string_view kGenesis = "genesis";
inline constexpr std::string_view kHead = "head";
/// The storage format, written with the genesis: a journal without this one
/// is refused as it opens (there is no decoder of an earlier format).
inline constexpr std::string_view kFormat = "format";
inline constexpr std::string_view kFormatVersion =
    "transit.storage.3";  // 2: immutable process versions; 3: the storage epoch, location definition and compaction ledger

// Tables, one letter each. `j/` + position holds a decision's signed request
// (the canonical SignedRequest text received) and `s/` + principal + sequence
// its receipt, which answers exact retries; trimming deletes `j/` below the
// floor and never `s/` (decisions 66, 67).
inline constexpr char kPrincipals = 'p', kRoles = 'r', kGrants = 'g', kCredentials = 'c', kSequences = 's',
                      kJournal = 'j', kResources = 'x', kProcesses = 'q', kAssociations = 'a', kViews = 'v',
                      kOutputs = 'o', kEffects = 'f', kEntries = 'e', kInputs = 'm', kBlocks = 'b',
                      kPayloads = 'y',  // payload records; the bytes live in the payload store (payload_store.h)
                      kEnded = 'n',     // the index of processes that may have ended: `n/` + pid, no value
                      kRuntime = 'u';   // runtime bindings by PID (decisions 120-129)

inline void put_be64(std::string& out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}
inline std::uint64_t get_be64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

inline std::string table(char t) { return std::string{t, '/'}; }
inline std::string key(char t, std::uint64_t a) {
  std::string k = table(t);
  put_be64(k, a);
  return k;
}
inline std::string key(char t, std::uint64_t a, std::uint64_t b) {
  std::string k = key(t, a);
  put_be64(k, b);
  return k;
}

/// The journal entries below `floor`, as a range [first, second) to delete.
inline std::pair<std::string, std::string> journal_below(std::uint64_t floor) {
  return {key(kJournal, 0), key(kJournal, floor)};
}

// Process records are immutable versions (decision 130): `q/` + pid +
// ~position, written by each decision that changes the process and never
// overwritten, so the record as of position P is the first at or after
// (pid, ~P): one seek, like an entry version.
inline std::string process_version(std::uint64_t pid, std::uint64_t position) { return key(kProcesses, pid, ~position); }
inline std::string process_versions(std::uint64_t pid) { return key(kProcesses, pid); }
inline constexpr std::size_t kProcessKey = 2 + 8 + 8;
/// The pid and position of a stored process version (a key kProcessKey long).
inline std::pair<std::uint64_t, std::uint64_t> parse_process(std::string_view stored) {
  return {get_be64(stored.substr(2)), ~get_be64(stored.substr(10))};
}

inline constexpr std::size_t kPaddedKey = 33;  // 32 bytes, then the length
/// The versions of one entry share their first kEntryPrefix bytes (table,
/// resource, padded key): the prefix bloom filters of the store are on it.
inline constexpr std::size_t kEntryPrefix = 2 + 8 + kPaddedKey;

inline std::string padded(char t, std::uint64_t resource, const EntryKey& entry_key) {
  std::string k = key(t, resource);
  k.append(reinterpret_cast<const char*>(entry_key.value.data()), entry_key.value.size());
  k.append(32 - entry_key.value.size(), '\0');
  k.push_back(static_cast<char>(entry_key.value.size()));
  return k;
}

/// All versions of all entries of `resource`.
inline std::string entries_of(std::uint64_t resource) { return key(kEntries, resource); }
/// The versions of one entry.
inline std::string entry_versions(std::uint64_t resource, const EntryKey& k) { return padded(kEntries, resource, k); }
/// The version written at `revision`; seeking it finds the newest at or below it.
inline std::string entry(std::uint64_t resource, const EntryKey& k, std::uint64_t revision) {
  std::string out = entry_versions(resource, k);
  put_be64(out, ~revision);
  return out;
}
/// Past every version of `k`: seeking it finds the next key.
inline std::string entry_end(std::uint64_t resource, const EntryKey& k) {
  std::string out = entry_versions(resource, k);
  out.append(8, '\xff');
  return out;
}
/// The key and revision of a stored entry version (`stored` starts with entries_of()).
inline std::pair<EntryKey, std::uint64_t> parse_entry(std::string_view stored) {
  const std::string_view rest = stored.substr(10);
  const auto length = static_cast<std::uint8_t>(rest[32]);
  EntryKey k{std::vector<std::uint8_t>(rest.begin(), rest.begin() + length)};
  return {std::move(k), ~get_be64(rest.substr(kPaddedKey))};
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

inline std::string block(std::uint64_t resource, const EntryKey& name) { return padded(kBlocks, resource, name); }

/// A block's record (BlockInfo, JSON), beside its body and outliving it
/// (docs/transit.md, decisions 100-109): written by the turn that publishes
/// the block and rewritten by its retirement and deletion.
inline constexpr char kBlockRecords = 'k';
inline std::string block_record(std::uint64_t resource, const EntryKey& name) {
  return padded(kBlockRecords, resource, name);
}

// Storage maintenance (docs/transit.md, decisions 140-149).
/// The compaction ledger: `l/` + cursor holds what that relocation moved
/// (a CompactionRecord, JSON), written by the storage_compact that advanced
/// the head's compaction cursor to it, and never rewritten.
inline constexpr char kCompactions = 'l';
/// The highest cursor whose relocation has physically finished (8 bytes,
/// big-endian; absent: none). Written unsynced after the rewrite: a crash
/// that loses it only repeats a relocation, which changes nothing logical.
inline constexpr std::string_view kRelocated = "relocated";
/// What a location means in this layout, hashed into the one current
/// 32-byte location definition every stored head carries (storage.cc):
/// a change to it is a new definition, and a head of another is refused.
inline constexpr std::string_view kLocationScheme =
    "transit.location.1: a leaf is located by its RocksDB key in this file's tables; its bytes by the SST file "
    "RocksDB places it in; storage_compact rewrites one leaf's key range into new files";

}  // namespace cowboy::transit::node::layout
