// PIDs, principals and resources are u64 on the wire and distinct types in
// the code (transit/contract/values.h, common/strong_id.h): one passed where
// another is expected does not compile. The static assertions are the test;
// the TESTs show the wire value is what each carries, in JSON and in keys.
#include <gtest/gtest.h>

#include <type_traits>

#include "transit/client.h"
#include "transit/contract/codec.h"
#include "transit/node/layout.h"
#include "transit/node/resident.h"
#include "support/distinct_ids.h"

namespace cowboy::transit {
namespace {

static_assert(testing::kDistinctIds<Pid, PrincipalId, ResourceId>);

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
concept SnapshotsResource = requires(Client& c, Id id) { c.open_snapshot(id, std::nullopt, 1000); };
static_assert(SnapshotsResource<ResourceId>);
static_assert(!SnapshotsResource<Pid>);
static_assert(!SnapshotsResource<std::uint64_t>);

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
  EXPECT_EQ(node::layout::process_version(Pid{0x0102030405060708}, 0),
            std::string("q/\x01\x02\x03\x04\x05\x06\x07\x08\xff\xff\xff\xff\xff\xff\xff\xff", 18));
  EXPECT_EQ(node::layout::parse_process(node::layout::process_version(Pid{5}, 9)).first, Pid{5});
  EXPECT_EQ(node::layout::entries_of(ResourceId{3}), node::layout::key(node::layout::kEntries, std::uint64_t{3}));
}

}  // namespace
}  // namespace cowboy::transit
