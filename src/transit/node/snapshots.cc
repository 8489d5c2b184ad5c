#include "transit/node/snapshots.h"

#include "transit/contract/operations.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) { return Err{Refusal{reason, std::move(message)}}; }

std::uint64_t big_endian(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

SnapshotRegistry::Key SnapshotRegistry::key_of(const SnapshotToken& token) {
  Key key{};  // a token of another length (never decoded) reads as all zeros, which no incarnation issues
  if (token.value.size() == key.size()) std::copy(token.value.begin(), token.value.end(), key.begin());
  return key;
}

SnapshotRegistry::SnapshotRegistry(Entropy& entropy, TrustedMs started_ms, SnapshotLimits limits)
    : entropy_(entropy), limits_(limits), started_ms_(started_ms) {
  for (int i = 0; i < 8; ++i) incarnation_[i] = static_cast<std::uint8_t>(started_ms.value >> (56 - 8 * i));
  entropy_.fill(std::span(incarnation_).subspan(8));
}

void SnapshotRegistry::end(std::map<Key, Snapshot>::iterator it, End how) {
  if (--held_[it->second.principal] == 0) held_.erase(it->second.principal);
  ended_[it->first] = Ended{it->second.principal, how};
  ended_order_.push_back(it->first);
  open_.erase(it);
  if (ended_order_.size() > kEndedMemory) {
    ended_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
}

void SnapshotRegistry::reap(TrustedMs now_ms) {
  // At most limits_.per_node snapshots, so one pass is bounded.
  for (auto it = open_.begin(); it != open_.end();) {
    auto next = std::next(it);
    if (now_ms >= it->second.expires_at_ms) end(it, End::kExpired);
    it = next;
  }
}

Result<SnapshotRegistry::Snapshot, Refusal> SnapshotRegistry::open(PrincipalId principal, ResourceId resource, Revision revision, Position position,
                                                                   Millis lease_ms, TrustedMs now_ms) {
  reap(now_ms);  // an expired lease frees its place first
  if (auto it = held_.find(principal); it != held_.end() && it->second >= limits_.per_principal)
    return refuse(Reason::kSnapshotQuota, "the caller holds " + std::to_string(it->second) +
                                              " open snapshots; close one or let its lease run out");
  if (open_.size() >= limits_.per_node)
    return refuse(Reason::kSnapshotCapacity, "the node holds " + std::to_string(open_.size()) + " open snapshots");
  Snapshot s{SnapshotToken{}, principal, resource, revision, position, lease_ms, now_ms + lease_ms};
  auto& token = s.token.value;
  token.assign(incarnation_.begin(), incarnation_.end());
  token.resize(kSnapshotTokenBytes);
  entropy_.fill(std::span(token).subspan(incarnation_.size()));
  const Key key = key_of(s.token);
  if (open_.count(key) || ended_.count(key))  // 2^-128; never hand out a token twice
    return refuse(Reason::kSnapshotCapacity, "no fresh token; retry");
  ++held_[principal];
  open_.emplace(key, s);
  return s;
}

Result<SnapshotRegistry::Snapshot*, Refusal> SnapshotRegistry::find(const SnapshotToken& token, PrincipalId principal,
                                                                    TrustedMs now_ms) {
  const auto& bytes = token.value;
  if (bytes.size() != kSnapshotTokenBytes || !std::equal(incarnation_.begin(), incarnation_.end(), bytes.begin())) {
    // Another incarnation's: an earlier start (or this start's time with another nonce) was restarted away.
    const TrustedMs started{bytes.size() == kSnapshotTokenBytes ? big_endian(bytes.data()) : 0};
    if (started.value != 0 && started <= started_ms_)
      return refuse(Reason::kSnapshotRestarted, "the node restarted since this snapshot was opened; open another");
    return refuse(Reason::kUnknownSnapshot, "no such snapshot");
  }
  // Another principal's token reads as unknown: its existence is not disclosed.
  const Key key = key_of(token);
  if (auto it = open_.find(key); it != open_.end() && it->second.principal == principal) {
    if (now_ms < it->second.expires_at_ms) return &it->second;
    end(it, End::kExpired);
  }
  if (auto it = ended_.find(key); it != ended_.end() && it->second.principal == principal)
    return it->second.end == End::kExpired
               ? refuse(Reason::kSnapshotExpired, "the snapshot's lease ran out; open another")
               : refuse(Reason::kSnapshotClosed, "the snapshot was closed");
  return refuse(Reason::kUnknownSnapshot, "no such snapshot");
}

void SnapshotRegistry::renew(Snapshot& snapshot, TrustedMs now_ms) {
  snapshot.expires_at_ms = now_ms + snapshot.lease_ms;
}

bool SnapshotRegistry::close(const SnapshotToken& token, PrincipalId principal, TrustedMs now_ms) {
  auto it = open_.find(key_of(token));
  if (it == open_.end() || it->second.principal != principal) return false;
  if (now_ms >= it->second.expires_at_ms) return end(it, End::kExpired), false;
  end(it, End::kClosed);
  return true;
}

// ---- the queries ------------------------------------------------------------------

namespace {

struct Reader {
  const Authority& authority;
  SnapshotRegistry& registry;
  PrincipalId caller;
  TrustedMs now_ms;
  const CatalogReader& catalog;

  /// Current rights, every time: inspect and read on the resource, its lifetime (decision 72).
  std::optional<Refusal> authorized(ResourceId resource) const { return authority.check_readable(caller, resource, now_ms); }

  Result<SnapshotRegistry::Snapshot, Refusal> acquire(ResourceId resource, std::optional<Revision> revision, Millis lease_ms) const {
    if (auto refusal = authorized(resource)) return Err{*refusal};
    const Revision current = authority.resource(resource)->info.revision;
    if (revision && *revision != current)
      return refuse(Reason::kResourceRevisionChanged, "the resource is at revision " + std::to_string(current.value));
    return registry.open(caller, resource, current, authority.head().position, lease_ms, now_ms);
  }

  /// The caller's open snapshot, its resource still readable by the caller now.
  Result<SnapshotRegistry::Snapshot*, Refusal> held(const SnapshotToken& token) const {
    auto found = registry.find(token, caller, now_ms);
    if (!found.ok()) return Err{found.error()};
    if (auto refusal = authorized((*found)->resource)) return Err{*refusal};
    return *found;
  }

  Result<QueryResult, Refusal> operator()(const OpenSnapshot& q) const {
    auto s = acquire(q.resource, q.revision, q.lease_ms);
    if (!s.ok()) return Err{s.error()};
    return QueryResult{SnapshotOpened{s->info(), authority.resource(q.resource)->info}};
  }

  Result<QueryResult, Refusal> operator()(const SnapshotEntries& q) const {
    auto found = held(q.token);
    if (!found.ok()) return Err{found.error()};
    auto& s = **found;
    if (q.cursor && q.cursor->cut != s.position)
      return refuse(Reason::kBadCut, "a snapshot's cursor carries its position, " + std::to_string(s.position.value));
    SnapshotPage page;
    if (q.key) {
      if (auto e = catalog.entry(s.resource, *q.key, s.revision)) page.items.items.push_back(std::move(*e));
    } else {
      std::optional<EntryKey> after;
      if (q.cursor && !q.cursor->after.value.empty()) after = EntryKey{q.cursor->after.value};
      auto scan = catalog.entries(s.resource, s.revision, after, kPageRecords, Authority::kScanBudget);
      page.items.items = std::move(scan.entries);
      if (!scan.complete && scan.last_key) page.cursor = EntryCursor{s.position, {scan.last_key->value}};
    }
    registry.renew(s, now_ms);
    page.snapshot = s.info();
    return QueryResult{std::move(page)};
  }

  Result<QueryResult, Refusal> operator()(const CloseSnapshot& q) const {
    return QueryResult{SnapshotClosed{q.token, registry.close(q.token, caller, now_ms)}};
  }

  Result<QueryResult, Refusal> operator()(const SnapshotRead& q) const {
    SnapshotRegistry::Snapshot s;
    if (const auto* acquire_it = std::get_if<AcquireSource>(&q.source)) {
      auto opened = acquire(acquire_it->resource, acquire_it->revision, acquire_it->lease_ms);
      if (!opened.ok()) return Err{opened.error()};
      s = *opened;
    } else {
      auto found = held(std::get<TokenSource>(q.source).token);
      if (!found.ok()) return Err{found.error()};
      registry.renew(**found, now_ms);
      s = **found;
    }
    SnapshotRange range;
    auto scan = catalog.entries(s.resource, s.revision, q.after, q.limit, kSnapshotRangeScan);
    range.items.items = std::move(scan.entries);
    if (!scan.complete && scan.last_key) range.next = scan.last_key;
    range.current = authority.resource(s.resource)->info;
    // Final validation, then the release: the rights were checked at this
    // position and nothing moved since (the caller's fence checks it again).
    if (q.finish) range.released = registry.close(s.token, caller, now_ms);
    range.snapshot = s.info();
    return QueryResult{std::move(range)};
  }
};

}  // namespace

Result<QueryResult, Refusal> answer_snapshot(const Authority& authority, SnapshotRegistry& registry, const Query& query,
                                             TrustedMs now_ms, const CatalogReader& catalog) {
  const Reader reader{authority, registry, query.principal, now_ms, catalog};
  return std::visit(
      [&](const auto& op) -> Result<QueryResult, Refusal> {
        if constexpr (kSnapshotQuery<std::decay_t<decltype(op)>>) return reader(op);
        else return refuse(Reason::kUnknownVariant, "not a snapshot query");
      },
      query.op);
}

}  // namespace cowboy::transit::node
