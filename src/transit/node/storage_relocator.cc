// The location definition, the compaction ledger's decoders, a leaf's key
// ranges and the relocator (docs/transit.md, decisions 140 and 144-146).
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>

#include "common/crypto.h"
#include "common/log.h"
#include "transit/contract/codec.h"
#include "transit/node/layout.h"
#include "transit/node/storage.h"

namespace cowboy::transit::node {
namespace {

// A ledger record is a leaf (two ids and a 32-byte key at most) and three ids.
constexpr std::size_t kMaxCompactionRecordBytes = 1024;

std::pair<std::string, std::string> one_key(std::string k) { return {k, k}; }

}  // namespace

const Digest& location_definition() {
  static const Digest digest = crypto::sha256(
      ByteView(reinterpret_cast<const std::uint8_t*>(layout::kLocationScheme.data()), layout::kLocationScheme.size()));
  return digest;
}

std::optional<CompactionRecord> decode_compaction_record(std::string_view stored) {
  auto record = from_json<CompactionRecord>(stored, kMaxCompactionRecordBytes);
  if (!record.ok() || record->cursor == 0 || record->position.value == 0) return std::nullopt;
  return std::move(*record);
}

std::optional<Id> decode_relocated(std::string_view stored) {
  if (stored.size() != 8) return std::nullopt;
  return layout::get_be64(stored);
}

std::string leaf_key(const StorageLeaf& leaf) {
  using namespace layout;
  return std::visit(
      [](const auto& l) -> std::string {
        using L = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<L, BlockLeaf>) return block_record(l.resource, l.name);
        else if constexpr (std::is_same_v<L, EntryLeaf>) return entry_versions(l.resource, l.key);
        else if constexpr (std::is_same_v<L, ProcessLeaf>) return process_versions(l.pid);
        else if constexpr (std::is_same_v<L, PrincipalLeaf>) return key(kPrincipals, l.principal);
        else if constexpr (std::is_same_v<L, RoleLeaf>) return key(kRoles, l.role);
        else if constexpr (std::is_same_v<L, GrantLeaf>) return key(kGrants, l.grant);
        else if constexpr (std::is_same_v<L, ResourceLeaf>) return key(kResources, l.resource);
        else if constexpr (std::is_same_v<L, CredentialLeaf>) return key(kCredentials, l.principal, l.role);
        else if constexpr (std::is_same_v<L, AssociationLeaf>) return key(kAssociations, l.pid, l.revision);
        else if constexpr (std::is_same_v<L, ViewLeaf>) return key(kViews, l.view);
        else if constexpr (std::is_same_v<L, OutputLeaf>) return key(kOutputs, l.output);
        else if constexpr (std::is_same_v<L, EffectLeaf>) return key(kEffects, l.effect);
        else if constexpr (std::is_same_v<L, PayloadLeaf>) return key(kPayloads, l.payload);
        else if constexpr (std::is_same_v<L, RuntimeLeaf>) return key(kRuntime, l.pid);
        else return key(kInputs, l.pid, l.input);
      },
      leaf);
}

std::vector<std::pair<std::string, std::string>> leaf_ranges(const StorageLeaf& leaf) {
  using namespace layout;
  // Every record is stored as versions, key + ~position (decisions 130,
  // 161): a leaf is all of them, the oldest included, not one key. An entry
  // is versions by ~revision; a block adds its body, changed in place.
  if (const auto* b = std::get_if<BlockLeaf>(&leaf))
    return {one_key(block(b->resource, b->name)), record_versions(block_record(b->resource, b->name))};
  if (const auto* e = std::get_if<EntryLeaf>(&leaf)) return {{entry_versions(e->resource, e->key), entry_end(e->resource, e->key)}};
  return {record_versions(leaf_key(leaf))};
}

std::optional<StorageLeaf> leaf_of(std::string_view key) {
  using namespace layout;
  if (key.size() < kIdKey || key[1] != '/') return std::nullopt;
  const Id id = get_be64(key.substr(2));
  if (key.size() == kIdKey) switch (key[0]) {
      case kProcesses: return ProcessLeaf{Pid{id}};
      case kPrincipals: return PrincipalLeaf{PrincipalId{id}};
      case kRoles: return RoleLeaf{id};
      case kGrants: return GrantLeaf{id};
      case kResources: return ResourceLeaf{ResourceId{id}};
      case kViews: return ViewLeaf{id};
      case kOutputs: return OutputLeaf{id};
      case kEffects: return EffectLeaf{id};
      case kPayloads: return PayloadLeaf{id};
      case kRuntime: return RuntimeLeaf{Pid{id}};
      default: return std::nullopt;
    }
  if (key.size() == kPairKey) {
    const Id second = get_be64(key.substr(kIdKey));
    switch (key[0]) {
      case kCredentials: return CredentialLeaf{PrincipalId{id}, second};
      case kAssociations: return AssociationLeaf{Pid{id}, second};
      case kInputs: return InputLeaf{Pid{id}, second};
      default: return std::nullopt;
    }
  }
  if (key.size() != kIdKey + kPaddedKey || (key[0] != kBlockRecords && key[0] != kEntries)) return std::nullopt;
  const auto length = static_cast<std::uint8_t>(key.back());
  if (length > 32) return std::nullopt;
  const char* bytes = key.data() + kIdKey;
  EntryKey name{std::vector<std::uint8_t>(bytes, bytes + length)};
  if (key[0] == kBlockRecords) return BlockLeaf{ResourceId{id}, std::move(name)};
  return EntryLeaf{ResourceId{id}, std::move(name)};
}

Relocator::Relocator(rocksdb::DB& db) : db_(db) {
  std::string stored;
  if (db_.Get(rocksdb::ReadOptions(), layout::relocated(), &stored).ok())
    if (auto through = decode_relocated(stored)) relocated_ = *through;
}

Relocator::~Relocator() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    db_.DisableManualCompaction();  // a rewrite under way returns early; the marker stays below it
    thread_.join();
  }
}

void Relocator::relocate(Id cursor) {
  std::lock_guard lock(mutex_);
  if (cursor <= relocated_.load() || cursor <= target_ || stop_) return;
  target_ = cursor;
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  wake_.notify_one();
}

void Relocator::loop() {
  Id attempted = 0;
  for (;;) {
    Id target = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || target_ > attempted; });
      if (stop_) return;
      target = attempted = target_;
    }
    // In cursor order: the marker says every relocation up to it is done.
    for (Id cursor = relocated_.load() + 1; cursor <= target; ++cursor)
      if (!rewrite(cursor)) break;  // tried again at the next relocation asked, or the next open
  }
}

bool Relocator::rewrite(Id cursor) {
  std::string stored;
  const auto read = db_.Get(rocksdb::ReadOptions(), layout::compaction(cursor), &stored);
  const auto record = read.ok() ? decode_compaction_record(stored) : std::nullopt;
  if (!record || record->cursor != cursor) {
    log::warn("transit_relocation_unreadable", log::field("cursor", cursor), log::field("status", read.ToString()));
    return false;
  }
  // A forced compaction of exactly the leaf's ranges: RocksDB rewrites every
  // table file holding any of its keys into new files at the bottom level,
  // then drops the old files once no reader holds them. Keys and values are
  // copied as they are; only the files move.
  rocksdb::CompactRangeOptions options;
  options.exclusive_manual_compaction = false;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForceOptimized;
  for (const auto& [first, last] : leaf_ranges(record->leaf)) {
    const rocksdb::Slice from(first), to(last);
    const auto status = db_.CompactRange(options, &from, &to);
    if (status.IsManualCompactionPaused()) return false;  // the node is stopping; resumed at the next open
    if (!status.ok()) {
      log::warn("transit_relocation_failed", log::field("cursor", cursor), log::field("status", status.ToString()));
      return false;
    }
  }
  std::string marker;
  layout::put_be64(marker, cursor);
  if (!db_.Put(rocksdb::WriteOptions(), layout::relocated(), marker).ok()) return false;
  relocated_ = cursor;
  return true;
}

std::vector<std::uint64_t> Relocator::files_of(const StorageLeaf& leaf) const {
  std::vector<rocksdb::LiveFileMetaData> files;
  db_.GetLiveFilesMetaData(&files);
  std::vector<std::uint64_t> out;
  for (const auto& [first, last] : leaf_ranges(leaf))
    for (const auto& f : files)
      if (f.smallestkey <= last && first <= f.largestkey) out.push_back(f.file_number);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace cowboy::transit::node
