// PIDs, principals and resources, resource revisions and authority positions,
// trusted time's points and durations are u64 on the wire and distinct types in the code
// (transit/contract/values.h, common/strong_id.h): one passed where another
// is expected does not compile. The static assertions are the test;
// the TESTs show the wire value is what each carries, in JSON and in keys.
#include <gtest/gtest.h>

#include <type_traits>

#include "transit/client.h"
#include "transit/contract/codec.h"
#include "transit/node/layout.h"
#include "transit/node/records.h"
#include "transit/node/resident.h"
#include "support/distinct_ids.h"

namespace cowboy::transit {
namespace {

static_assert(testing::kDistinctIds<Pid, PrincipalId, ResourceId, Revision, Position, TrustedMs, Millis>);

// Revisions and positions are counted points: moved by a count, two of one
// axis differ by one; the ids have no arithmetic.
static_assert(testing::kCountedPoint<Revision>);
static_assert(testing::kCountedPoint<Position>);
static_assert(testing::kNoArithmetic<Pid>);
static_assert(testing::kNoArithmetic<PrincipalId>);
static_assert(testing::kNoArithmetic<ResourceId>);
// A revision and a position never meet in arithmetic or comparison.
template <typename A, typename B>
concept Meet = requires(A a, B b) { a - b; } || requires(A a, B b) { a < b; } || requires(A a, B b) { a == b; };
static_assert(Meet<Revision, Revision> && Meet<Position, Position>);
static_assert(!Meet<Revision, Position> && !Meet<Position, Revision>);
// Nor does a raw integer compare with either (it is only their count).
template <typename A, typename B>
concept Compares = requires(A a, B b) { a < b; } || requires(A a, B b) { a == b; };
static_assert(!Compares<Position, std::uint64_t> && !Compares<Revision, std::uint64_t>);

// Trusted time (decision 178): a point moves by a Millis, never by a bare
// integer, and two points differ by a Millis; a duration is no point.
static_assert(testing::kCountedPoint<TrustedMs>);
static_assert(std::is_same_v<decltype(TrustedMs{} - TrustedMs{}), Millis>);
static_assert(std::is_same_v<decltype(TrustedMs{} + Millis{}), TrustedMs>);
template <typename P, typename N>
concept MovesBy = requires(P p, N n) { p + n; } || requires(P p, N n) { { p - n } -> std::same_as<P>; } || requires(P p, N n) { p += n; };
static_assert(MovesBy<TrustedMs, Millis>);
static_assert(!MovesBy<TrustedMs, std::uint64_t> && !MovesBy<TrustedMs, TrustedMs> && !MovesBy<TrustedMs, Position>);
static_assert(!MovesBy<Position, Millis> && !MovesBy<Millis, Millis> && !MovesBy<Millis, std::uint64_t>);
static_assert(testing::kNoArithmetic<Millis>);
static_assert(Meet<TrustedMs, TrustedMs> && Meet<Millis, Millis>);
static_assert(!Compares<TrustedMs, Millis> && !Meet<Millis, TrustedMs>);  // a point less a duration is a point
static_assert(!Meet<TrustedMs, Position> && !Meet<Position, TrustedMs>);
static_assert(!Compares<TrustedMs, std::uint64_t> && !Compares<Millis, std::uint64_t>);

// The contract's types take only their own id.
using testing::kTakes;
static_assert(kTakes<decltype(PidScope::pid), Pid>);
static_assert(!kTakes<decltype(PidScope::pid), PrincipalId>);
static_assert(!kTakes<decltype(PidScope::pid), std::uint64_t>);
static_assert(!kTakes<decltype(ResourceScope::resource), Pid>);
static_assert(!kTakes<decltype(CreatePrincipal::principal), Pid>);
static_assert(!kTakes<decltype(CreatePrincipal::pid_scope), PrincipalId>);
static_assert(!kTakes<decltype(Send::pid), PrincipalId>);
static_assert(!kTakes<decltype(CreateResource::owner), PrincipalId>);

// Revisions and positions: each field takes its own axis, never the other's nor a raw integer.
static_assert(kTakes<decltype(Receipt::position), Position>);
static_assert(!kTakes<decltype(Receipt::position), Revision>);
static_assert(!kTakes<decltype(Receipt::position), std::uint64_t>);
static_assert(kTakes<decltype(Response::position), Position>);
static_assert(!kTakes<decltype(Response::position), Revision>);
static_assert(kTakes<decltype(Cursor::cut), Position>);
static_assert(!kTakes<decltype(Cursor::cut), Revision>);
static_assert(!kTakes<decltype(EntryCursor::cut), Revision>);
static_assert(!kTakes<decltype(AdvanceFloor::floor), Revision>);
static_assert(!kTakes<decltype(CheckpointInfo::position), Revision>);
static_assert(!kTakes<decltype(BlockInfo::published_at), Revision>);
static_assert(!kTakes<decltype(PayloadInfo::declared_at), Revision>);
static_assert(kTakes<decltype(CurrentBasis::revision), Revision>);
static_assert(!kTakes<decltype(CurrentBasis::revision), Position>);
static_assert(!kTakes<decltype(CurrentBasis::revision), std::uint64_t>);
static_assert(kTakes<decltype(Turn::resource_revision), Revision>);
static_assert(!kTakes<decltype(Turn::resource_revision), Position>);
static_assert(!kTakes<decltype(ReadEntries::revision), Position>);
static_assert(!kTakes<decltype(Entry::revision), Position>);
static_assert(!kTakes<decltype(BlockSource::revision), Position>);
static_assert(!kTakes<decltype(OpenSnapshot::revision), Position>);
static_assert(!kTakes<decltype(SnapshotInfo::revision), Position>);
static_assert(!kTakes<decltype(SnapshotInfo::position), Revision>);
// The association revision is a counter of its own (an Association's id), not a resource's revision.
static_assert(!kTakes<decltype(Association::revision), Revision>);

// Trusted time: each point field takes a TrustedMs, never a Millis nor a raw
// integer; each duration takes a Millis, never a point.
template <typename Field>
constexpr bool kPoint = kTakes<Field, TrustedMs> && !kTakes<Field, Millis> && !kTakes<Field, std::uint64_t> &&
                        !kTakes<Field, Position>;
template <typename Field>
constexpr bool kDuration = kTakes<Field, Millis> && !kTakes<Field, TrustedMs> && !kTakes<Field, std::uint64_t>;
static_assert(kPoint<decltype(Receipt::accepted_at_ms)>);
static_assert(kPoint<decltype(EffectIntent::deadline_ms)>);
static_assert(kPoint<decltype(Suspend::resume_by_ms)>);
static_assert(kPoint<decltype(ProcessInfo::resume_by_ms)>);
static_assert(kPoint<decltype(ProcessSummary::resume_by_ms)>);
static_assert(kPoint<decltype(SnapshotInfo::expires_at_ms)>);
static_assert(kPoint<decltype(RouteHead::published_at_ms)>);
static_assert(kPoint<decltype(StorageFenced::fenced_at_ms)>);
static_assert(kPoint<decltype(StorageStatus::fenced_at_ms)>);
static_assert(kPoint<decltype(EffectClosure::trusted_lower_bound_ms)>);
static_assert(kPoint<decltype(node::Head::last_time_ms)>);
static_assert(kPoint<decltype(node::Head::fenced_at_ms)>);
static_assert(kPoint<decltype(node::ProcessRecord::resume_by_ms)>);
static_assert(kPoint<decltype(node::OutputRecord::published_at_ms)>);
static_assert(kDuration<decltype(OpenSnapshot::lease_ms)>);
static_assert(kDuration<decltype(AcquireSource::lease_ms)>);
static_assert(kDuration<decltype(Capabilities::snapshot_lease_max_ms)>);
static_assert(kDuration<decltype(StorageStatus::read_lease_grace_ms)>);
static_assert(std::is_same_v<decltype(kSnapshotLeaseMaxMs), const Millis> &&
              std::is_same_v<decltype(kReadLeaseGraceMs), const Millis>);

// The client's calls: a PID where a principal or a resource is expected is ill-formed.
template <typename Id>
concept DecidesFor = requires(Client& c, Id id) { c.decision(id, RealmScope{}, Permissions{}); };
static_assert(DecidesFor<PrincipalId>);
static_assert(!DecidesFor<Pid>);
static_assert(!DecidesFor<std::uint64_t>);

template <typename Id>
concept ReadsRuntimeOf = requires(Client& c, Id id) { c.runtime(id); };
static_assert(ReadsRuntimeOf<Pid>);
static_assert(!ReadsRuntimeOf<PrincipalId>);
static_assert(!ReadsRuntimeOf<ResourceId>);

template <typename Id>
concept SnapshotsResource = requires(Client& c, Id id) { c.open_snapshot(id, std::nullopt, Millis{1000}); };
static_assert(SnapshotsResource<ResourceId>);
static_assert(!SnapshotsResource<Pid>);
static_assert(!SnapshotsResource<std::uint64_t>);
// ... for a lease, a Millis: neither a point nor a raw integer.
template <typename L>
concept LeasedFor = requires(Client& c, L lease) { c.open_snapshot(ResourceId{1}, std::nullopt, lease); };
static_assert(LeasedFor<Millis>);
static_assert(!LeasedFor<TrustedMs>);
static_assert(!LeasedFor<std::uint64_t>);

// A snapshot opens at a revision; a listing starts at a position.
template <typename R>
concept OpensAt = requires(Client& c, R r) { c.open_snapshot(ResourceId{1}, r, Millis{1000}); };
static_assert(OpensAt<Revision>);
static_assert(OpensAt<std::optional<Revision>>);
static_assert(!OpensAt<Position>);
static_assert(!OpensAt<std::uint64_t>);
template <typename P>
concept StartsAt = requires(P p) {
  first_page_at(p);
  first_entries_at(p);
};
static_assert(StartsAt<Position>);
static_assert(!StartsAt<Revision>);
static_assert(!StartsAt<std::uint64_t>);
static_assert(std::is_same_v<decltype(std::declval<Client&>().last_position()), Position>);

// Storage keys take the strong type.
template <typename Id>
concept KeysProcess = requires(Id id) { node::layout::process_versions(id); };
static_assert(KeysProcess<Pid>);
static_assert(!KeysProcess<ResourceId>);
template <typename Id>
concept KeysEntries = requires(Id id) { node::layout::entries_of(id); };
static_assert(KeysEntries<ResourceId>);
static_assert(!KeysEntries<Pid>);
template <typename Id>
concept KeysPurge = requires(Id id) { node::layout::purge(0, id, EntryKey{}); };
static_assert(KeysPurge<ResourceId>);
static_assert(!KeysPurge<Pid>);

template <typename R>
concept KeysEntryAt = requires(R r) { node::layout::entry(ResourceId{1}, EntryKey{}, r); };
static_assert(KeysEntryAt<Revision>);
static_assert(!KeysEntryAt<Position>);
static_assert(!KeysEntryAt<std::uint64_t>);
template <typename P>
concept KeysVersionAt = requires(P p) {
  node::layout::version(std::string{}, p);
  node::layout::process_version(Pid{1}, p);
  node::layout::journal_below(p);
};
static_assert(KeysVersionAt<Position>);
static_assert(!KeysVersionAt<Revision>);
static_assert(!KeysVersionAt<std::uint64_t>);

// The authority's caches are keyed by the record's own id (decision 175's Resident).
template <typename Key, typename Id>
concept FindsBy = requires(node::Resident<int, Key>& cache, Id id) { cache.find(id); };
static_assert(FindsBy<Pid, Pid>);
static_assert(!FindsBy<Pid, ResourceId>);
static_assert(!FindsBy<ResourceId, Pid>);
static_assert(!FindsBy<Pid, std::uint64_t>);

TEST(TransitStrongIds, EachIsItsIntegerOnTheWire) {
  EXPECT_EQ(to_json(PidScope{Pid{7}}), R"({"pid":7})");
  auto back = from_json<PidScope>(R"({"pid":9007199254740991})", kMaxRequestBytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->pid, Pid{kMaxSafeInteger});
  EXPECT_FALSE(from_json<PidScope>(R"({"pid":"7"})", kMaxRequestBytes).ok());
}

TEST(TransitStrongIds, KeysWriteTheValue) {
  // q/ || pid u64 || ~position u64, big-endian: the same bytes as before the types.
  EXPECT_EQ(node::layout::process_version(Pid{0x0102030405060708}, Position{0}),
            std::string("q/\x01\x02\x03\x04\x05\x06\x07\x08\xff\xff\xff\xff\xff\xff\xff\xff", 18));
  EXPECT_EQ(node::layout::parse_process(node::layout::process_version(Pid{5}, Position{9})).first, Pid{5});
  EXPECT_EQ(node::layout::entries_of(ResourceId{3}), node::layout::key(node::layout::kEntries, std::uint64_t{3}));
}

TEST(TransitStrongIds, RevisionsAndPositionsAreTheirIntegersOnTheWire) {
  EXPECT_EQ(to_json(CurrentBasis{ResourceId{3}, Revision{2}}), R"({"resource":3,"revision":2})");
  EXPECT_EQ(to_json(Cursor{Position{41}, 7}), R"({"cut":41,"after":7})");
  EXPECT_EQ(to_json(AdvanceFloor{Position{12}, Digest{}}).substr(0, 11), R"({"floor":12)");
  auto cursor = from_json<Cursor>(R"({"cut":9007199254740991,"after":0})", kMaxRequestBytes);
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(cursor->cut, Position{kMaxSafeInteger});
  auto basis = from_json<CurrentBasis>(R"({"resource":1,"revision":5})", kMaxRequestBytes);
  ASSERT_TRUE(basis.ok());
  EXPECT_EQ(basis->revision, Revision{5});
  // Still the same bounds: no string, nothing past 2^53 - 1.
  EXPECT_FALSE(from_json<Cursor>(R"({"cut":"41","after":7})", kMaxRequestBytes).ok());
  EXPECT_FALSE(from_json<CurrentBasis>(R"({"resource":1,"revision":9007199254740992})", kMaxRequestBytes).ok());
  // An optional revision is null when absent, its number when present.
  EXPECT_EQ(to_json(OpenSnapshot{ResourceId{1}, std::nullopt, Millis{1000}}), R"({"resource":1,"revision":null,"lease_ms":1000})");
  EXPECT_EQ(to_json(OpenSnapshot{ResourceId{1}, Revision{4}, Millis{1000}}), R"({"resource":1,"revision":4,"lease_ms":1000})");
  // Counted: a point moves by a count and two differ by one, as the integers did.
  EXPECT_EQ(Position{7} + 1, Position{8});
  EXPECT_EQ(Position{7} - Position{3}, 4u);
  Revision r{1};
  ++r;
  EXPECT_EQ(r, Revision{2});
}

TEST(TransitStrongIds, TrustedTimeIsItsIntegerOnTheWire) {
  EXPECT_EQ(to_json(Suspend{Pid{2}, 3, TrustedMs{1'700'000'000'000}}), R"({"pid":2,"generation":3,"resume_by_ms":1700000000000})");
  EXPECT_EQ(to_json(StorageFenced{4, TrustedMs{99}, 0}), R"({"epoch":4,"fenced_at_ms":99,"grace_below":0})");
  auto open = from_json<OpenSnapshot>(R"({"resource":1,"revision":null,"lease_ms":60000})", kMaxRequestBytes);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->lease_ms, kSnapshotLeaseMaxMs);
  auto suspend = from_json<Suspend>(R"({"pid":1,"generation":1,"resume_by_ms":9007199254740991})", kMaxRequestBytes);
  ASSERT_TRUE(suspend.ok());
  EXPECT_EQ(suspend->resume_by_ms, TrustedMs{kMaxSafeInteger});
  // An optional point is null when absent, its number when present.
  EXPECT_EQ(to_json(EffectIntent{PrincipalId{1}, std::nullopt, {}, 1}).substr(0, 32), R"({"executor":1,"deadline_ms":null)");
  EXPECT_EQ(to_json(EffectIntent{PrincipalId{1}, TrustedMs{5}, {}, 1}).substr(0, 29), R"({"executor":1,"deadline_ms":5)");
  // Still the same bounds: no string, nothing past 2^53 - 1.
  EXPECT_FALSE(from_json<Suspend>(R"({"pid":1,"generation":1,"resume_by_ms":"5"})", kMaxRequestBytes).ok());
  EXPECT_FALSE(from_json<OpenSnapshot>(R"({"resource":1,"revision":null,"lease_ms":9007199254740992})", kMaxRequestBytes).ok());
  // A point and a duration: a point moves by a duration, two differ by one, as the integers did.
  EXPECT_EQ(TrustedMs{1'000} + Millis{500}, TrustedMs{1'500});
  EXPECT_EQ(TrustedMs{1'000} - Millis{1'000}, TrustedMs{0});
  EXPECT_EQ(TrustedMs{1'500} - TrustedMs{1'000}, Millis{500});
  TrustedMs t{10};
  t += kReadLeaseGraceMs;
  EXPECT_EQ(t, TrustedMs{60'010});
  EXPECT_LT(Millis{1}, kSnapshotLeaseMaxMs);
}

TEST(TransitStrongIds, RevisionsAndPositionsKeyAsTheirValue) {
  // e/ || resource || padded key || ~revision: the bytes of the u64 revision.
  const EntryKey k{{0x61}};
  const std::string at = node::layout::entry(ResourceId{3}, k, Revision{0x0102030405060708});
  EXPECT_EQ(at.substr(at.size() - 8), std::string("\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7", 8));
  EXPECT_EQ(node::layout::parse_entry(at).second, Revision{0x0102030405060708});
  // A record version: its key, then ~position.
  EXPECT_EQ(node::layout::version("x", Position{1}), std::string("x\xff\xff\xff\xff\xff\xff\xff\xfe", 9));
  const std::string stored = node::layout::version(node::layout::key(node::layout::kResources, std::uint64_t{2}), Position{77});
  EXPECT_EQ(node::layout::version_position(stored, node::layout::kIdKey), Position{77});
  EXPECT_EQ(node::layout::parse_process(node::layout::process_version(Pid{5}, Position{9})).second, Position{9});
  // The journal's range below a floor ends at the floor's own key.
  EXPECT_EQ(node::layout::journal_below(Position{6}).second, node::layout::key(node::layout::kJournal, std::uint64_t{6}));
}

}  // namespace
}  // namespace cowboy::transit
