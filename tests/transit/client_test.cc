// The client against a peer that answers what a test scripts, over real HTTP
// on 127.0.0.1: it refuses, before signing, an operation whose capability the
// peer does not list (decision 42), and refuses lookups and reads whose
// resource metadata or revisions the contract rules out.
#include <gtest/gtest.h>

#include <mutex>

#include "net/http_server.h"
#include "samples.h"
#include "transit/client.h"
#include "transit/contract/envelope.h"
#include "transit/contract/operations.h"

namespace cowboy::transit {
namespace {

constexpr Position kPosition{40};

/// A peer that verifies nothing: it lists every capability but `missing`,
/// answers other queries with `answer`, and records what reached it.
class ScriptedPeer {
 public:
  explicit ScriptedPeer(std::vector<std::string_view> missing) : missing_(std::move(missing)) {
    server_ = std::make_unique<net::HttpServer>([this](const net::HttpRequest& r) { return handle(r); }, "127.0.0.1", 0);
    server_->start();
  }
  ~ScriptedPeer() { server_->stop(); }

  std::function<QueryResult(const QueryOp&)> answer;

  ClientOptions options() const {
    ClientOptions o;
    o.port = server_->port();
    o.realm = "dev";
    o.principal = PrincipalId{1};
    o.seed = testing::seed_of(0);
    o.max_attempts = 1;
    return o;
  }
  std::vector<std::string> received() {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  net::HttpReply handle(const net::HttpRequest& r) {
    if (r.target == "/v1/command") {
      std::lock_guard lock(mu_);
      received_.push_back("command");
      return net::HttpReply{503, "application/json", ""};
    }
    auto q = decode_signed_query(r.body);
    if (!q.ok()) return net::HttpReply{400, "application/json", ""};
    const auto& op = q->query.op;
    {
      std::lock_guard lock(mu_);
      received_.push_back(std::string(std::visit([](const auto& o) { return std::decay_t<decltype(o)>::kName; }, op)));
    }
    QueryResult result;
    if (std::holds_alternative<CapabilitiesQuery>(op)) {
      Capabilities c;
      for (auto name : capability::kSupported)
        if (std::find(missing_.begin(), missing_.end(), name) == missing_.end())
          c.supported.items.push_back({std::string(name)});
      result = c;
    } else if (std::holds_alternative<IdentityQuery>(op)) {
      result = Identity{PrincipalId{1}, Permissions{kAllPermissions}, std::nullopt, 1, 0};
    } else {
      result = answer(op);
    }
    return net::HttpReply{200, "application/json", to_json(Response{Version{}, Definition{}, {"dev"}, kPosition, result})};
  }

  std::vector<std::string_view> missing_;
  std::unique_ptr<net::HttpServer> server_;
  std::mutex mu_;
  std::vector<std::string> received_;
};

ResourceInfo active(auto resource, Id revision) { return ResourceInfo{testing::id<ResourceId>(resource), {"doc"}, std::nullopt, Revision{revision}, false}; }

EntryKey key(const std::string& s) { return EntryKey{{s.begin(), s.end()}}; }

TEST(TransitClient, AnOperationThePeerDoesNotListIsRefusedBeforeItIsSent) {
  crypto::init();
  ScriptedPeer peer({capability::kResourceReadAccess, capability::kResources});
  peer.answer = [](const QueryOp&) { return QueryResult{ResourceAccess{active(1, 1)}}; };
  Client client(peer.options());

  auto access = client.query(ReadAccess{ResourceId{1}});
  ASSERT_FALSE(access.ok());
  EXPECT_EQ(access.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(access.error().message.find("resource_read_access"), std::string::npos) << access.error().message;

  client.set_next_sequence(1);
  auto retire = client.submit(RetireResource{ResourceId{1}});
  ASSERT_FALSE(retire.ok());
  EXPECT_EQ(retire.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_FALSE(client.pending());  // nothing was signed to be resent

  // What is listed goes through; the capabilities were asked once.
  EXPECT_TRUE(client.identity().ok());
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities", "identity"}));
}

// Leased snapshots (decisions 70-78): a peer that does not list them is sent
// none of the four, not even the release.
TEST(TransitClient, SnapshotsAreSentOnlyToAPeerThatListsTheirCapabilities) {
  crypto::init();
  ScriptedPeer peer({capability::kLeasedSnapshots, capability::kSnapshotRead});
  Client client(peer.options());
  const SnapshotToken token{std::vector<std::uint8_t>(kSnapshotTokenBytes, 1)};
  auto opened = client.open_snapshot(ResourceId{1}, std::nullopt, Millis{1'000});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(opened.error().message.find("leased_snapshots"), std::string::npos) << opened.error().message;
  EXPECT_EQ(client.close_snapshot(token).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.snapshot_entries(token).error().kind, ClientError::Kind::kUnsupported);
  auto range = client.snapshot_read(SnapshotRead{TokenSource{token}, std::nullopt, 8, true});
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.error().message.find("snapshot_read"), std::string::npos) << range.error().message;
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));
}

TEST(TransitClient, CollectIsSentOnlyToAPeerThatListsCollection) {
  crypto::init();
  ScriptedPeer peer({capability::kCollection});
  Client client(peer.options());
  auto r = client.submit(Collect{Pid{7}, CollectKind::kProcess, std::nullopt});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(r.error().message.find("collection"), std::string::npos) << r.error().message;
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));
  // The record is named exactly when the kind is not process: refused before signing.
  EXPECT_EQ(client.submit(Collect{Pid{7}, CollectKind::kOutput, std::nullopt}).error().kind, ClientError::Kind::kInvalid);
  EXPECT_EQ(client.submit(Collect{Pid{7}, CollectKind::kProcess, Id{7}}).error().kind, ClientError::Kind::kInvalid);
}

TEST(TransitClient, PayloadsAreSentOnlyToAPeerThatListsTheCapabilityAndTheirRecordsMustFitTheirState) {
  crypto::init();
  ScriptedPeer peer({capability::kPayloads});
  Client client(peer.options());
  auto declared = client.submit(DeclarePayload{Pid{7}, 10, Digest{}, false});
  ASSERT_FALSE(declared.ok());
  EXPECT_EQ(declared.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(declared.error().message.find("payloads"), std::string::npos) << declared.error().message;
  EXPECT_EQ(client.submit(PayloadReady{1}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.payload(1).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.put_payload(1, [](std::span<std::uint8_t>) { return std::size_t{0}; }).error().kind,
            ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.get_payload(1, [](std::span<const std::uint8_t>) { return true; }).error().kind,
            ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.delete_payload_bytes(1).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));

  // A record whose state and step positions disagree is refused.
  ScriptedPeer full({});
  PayloadInfo answer{1, Pid{7}, PrincipalId{1}, 10, Digest{}, false, PayloadState::kReady, Position{2}, std::nullopt, std::nullopt, std::nullopt};
  full.answer = [&](const QueryOp&) { return QueryResult{answer}; };
  Client checked(full.options());
  EXPECT_EQ(checked.payload(1).error().kind, ClientError::Kind::kMalformed);  // ready without ready_at
  answer.ready_at = Position{3};
  EXPECT_TRUE(checked.payload(1).ok());
  answer.state = PayloadState::kRetired;
  answer.retired_at = Position{4};
  EXPECT_EQ(checked.payload(1).error().kind, ClientError::Kind::kMalformed);  // retired without allow_delete
  answer.allow_delete = true;
  EXPECT_TRUE(checked.payload(1).ok());
  EXPECT_EQ(checked.payload(2).error().kind, ClientError::Kind::kMalformed);  // another payload than asked
}

// Segmented results and the collectable listing (decisions 150-155): a peer
// that does not list segmented_results, or collection, is sent neither.
TEST(TransitClient, SegmentsAndTheCollectableListingGoOnlyToAPeerThatListsTheirCapabilities) {
  crypto::init();
  ScriptedPeer peer({capability::kSegmentedResults, capability::kCollection});
  Client client(peer.options());
  auto segment = client.segment(CurrentBasis{ResourceId{1}, Revision{2}});
  ASSERT_FALSE(segment.ok());
  EXPECT_EQ(segment.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(segment.error().message.find("segmented_results"), std::string::npos) << segment.error().message;
  EXPECT_EQ(client.read_result(CurrentBasis{ResourceId{1}, Revision{2}}, [](const Entry&) { return true; }).error().kind,
            ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.query(ListCollectable{std::nullopt}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));
}

// Blocks (decisions 100-109): a peer that does not list the capability is
// sent no block operation, reads included; a record whose state and steps
// disagree, or a body that is not its SHA-256's, is refused.
TEST(TransitClient, BlocksAreSentOnlyToAPeerThatListsTheCapabilityAndWhatIsReadMustFitItsRecord) {
  crypto::init();
  ScriptedPeer peer({capability::kBlocks});
  Client client(peer.options());
  const EntryKey name{{'a'}};
  auto retired = client.submit(RetireBlock{ResourceId{1}, name});
  ASSERT_FALSE(retired.ok());
  EXPECT_EQ(retired.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(retired.error().message.find("blocks"), std::string::npos) << retired.error().message;
  EXPECT_EQ(client.submit(DeleteBlock{ResourceId{1}, name}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.query(BlockRead{ResourceId{1}, name}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.query(ReadBlock{CurrentBasis{ResourceId{1}, Revision{2}}, name, std::nullopt}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));

  ScriptedPeer full({});
  BlockInfo record{ResourceId{1}, name, Revision{2}, 10, Digest{}, Pid{7}, PrincipalId{1}, BlockState::kRetired, Position{3}, std::nullopt, std::nullopt, std::nullopt};
  full.answer = [&](const QueryOp&) { return QueryResult{record}; };
  Client checked(full.options());
  EXPECT_EQ(checked.query(BlockRead{ResourceId{1}, name}).error().kind, ClientError::Kind::kMalformed);  // retired without its steps
  record.retired_revision = Revision{3};
  record.retired_at = Position{4};
  EXPECT_TRUE(checked.query(BlockRead{ResourceId{1}, name}).ok());
  record.retired_revision = Revision{2};  // retired at its own source revision
  EXPECT_EQ(checked.query(BlockRead{ResourceId{1}, name}).error().kind, ClientError::Kind::kMalformed);
  EXPECT_EQ(checked.query(BlockRead{ResourceId{2}, name}).error().kind, ClientError::Kind::kMalformed);  // another block than asked

  const std::vector<std::uint8_t> body{1, 2, 3};
  Block block{ResourceId{1}, Revision{2}, name, crypto::sha256(ByteView(body.data(), body.size())), {body}};
  full.answer = [&](const QueryOp&) { return QueryResult{block}; };
  EXPECT_TRUE(checked.query(ReadBlock{CurrentBasis{ResourceId{1}, Revision{2}}, name, std::nullopt}).ok());
  EXPECT_EQ(checked.query(ReadBlock{CurrentBasis{ResourceId{1}, Revision{2}}, name, BlockSource{Revision{2}, Digest{}}}).error().kind,
            ClientError::Kind::kMalformed);  // another source than asked
  block.body.value[0] ^= 1;
  EXPECT_EQ(checked.query(ReadBlock{CurrentBasis{ResourceId{1}, Revision{2}}, name, std::nullopt}).error().kind,
            ClientError::Kind::kMalformed);  // a body that is not its SHA-256's
}

TEST(TransitClient, LookupsAndReadsMustCarryActiveMetadataAndPossibleRevisions) {
  crypto::init();
  ScriptedPeer peer({});
  QueryResult next;
  peer.answer = [&](const QueryOp&) { return next; };
  Client client(peer.options());
  auto malformed = [&](QueryOp op, QueryResult answer) {
    next = std::move(answer);
    auto r = client.query(std::move(op));
    return !r.ok() && r.error().kind == ClientError::Kind::kMalformed;
  };

  const AssociationLookup lookup{Pid{7}, {"doc"}};
  const Association good{Pid{7}, {"doc"}, ResourceId{3}, 5};
  EXPECT_FALSE(malformed(lookup, LookupResult{Pid{7}, {"doc"}, good}));
  EXPECT_FALSE(malformed(lookup, LookupResult{Pid{7}, {"doc"}, std::nullopt}));
  auto later = good;
  later.revision = (kPosition + 1).value;  // allocated after the position it was read at
  EXPECT_TRUE(malformed(lookup, LookupResult{Pid{7}, {"doc"}, later}));
  auto no_resource = good;
  no_resource.resource = ResourceId{0};
  EXPECT_TRUE(malformed(lookup, LookupResult{Pid{7}, {"doc"}, no_resource}));
  auto zero = good;
  zero.revision = 0;
  EXPECT_TRUE(malformed(lookup, LookupResult{Pid{7}, {"doc"}, zero}));

  EXPECT_FALSE(malformed(ReadAccess{ResourceId{3}}, ResourceAccess{active(3, 2)}));
  auto retired = active(3, 2);
  retired.retired = true;
  EXPECT_TRUE(malformed(ReadAccess{ResourceId{3}}, ResourceAccess{retired}));
  EXPECT_TRUE(malformed(ReadAccess{ResourceId{3}}, ResourceAccess{active(3, 0)}));

  ReadEntries read{ResourceId{3}, std::nullopt, std::nullopt, {}};
  read.keys.items[0] = key("k");
  EntryBatch batch{active(3, 2), Revision{2}, std::nullopt, {}};
  batch.entries.items[0] = Entry{key("k"), {}, Revision{2}};
  EXPECT_FALSE(malformed(read, batch));
  auto of_retired = batch;
  of_retired.resource.retired = true;
  EXPECT_TRUE(malformed(read, of_retired));
  ReadEntries through_view = read;
  through_view.view = 9;
  EntryBatch view_batch{active(3, 2), Revision{4}, 9, {}};  // a view newer than its resource
  EXPECT_TRUE(malformed(through_view, view_batch));
  view_batch.revision = Revision{1};
  EXPECT_FALSE(malformed(through_view, view_batch));

  // A page whose cut is after the response it came in.
  EXPECT_TRUE(malformed(ListResources{std::nullopt}, ResourcePage{kPosition + 1, {}, std::nullopt}));
  EXPECT_FALSE(malformed(ListResources{std::nullopt}, ResourcePage{kPosition, {}, std::nullopt}));
}

// Runtime binding (decisions 120-129) and the station profile (decision 128):
// a peer that does not list them is refused before anything is signed.
TEST(TransitClient, RuntimeBindingAndStationAreRequiredOfThePeer) {
  crypto::init();
  ScriptedPeer peer({capability::kRuntimeBinding, capability::kStation});
  Client client(peer.options());
  auto intent = client.submit(RuntimeIntent{Pid{7}, 1, 1, Name{"host-a"}, PrincipalId{10}, Digest{}, Digest{}});
  ASSERT_FALSE(intent.ok());
  EXPECT_EQ(intent.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(intent.error().message.find("runtime_binding"), std::string::npos) << intent.error().message;
  EXPECT_EQ(client.submit(RuntimeObserve{Pid{7}, 1, 1, RuntimeStatus::kStarting, std::nullopt}).error().kind,
            ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.submit(RuntimeUpgrade{Pid{7}, 1, 2, 2, Digest{}, Digest{}}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.submit(Activate{Pid{7}, 1, 1, 1, PublicKey{}, PublicKey{}}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.runtime(Pid{7}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.require(capability::kStation).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));

  // A binding whose positions or fields do not fit is refused.
  ScriptedPeer full({});
  RuntimeInfo answer;
  answer.pid = Pid{7};
  full.answer = [&](const QueryOp&) { return QueryResult{answer}; };
  Client checked(full.options());
  EXPECT_TRUE(checked.runtime(Pid{7}).ok());  // unbound
  EXPECT_TRUE(checked.require(capability::kStation).ok());
  answer.operation = 1;
  EXPECT_EQ(checked.runtime(Pid{7}).error().kind, ClientError::Kind::kMalformed);  // unbound with a binding's field
  answer.bound = true;
  answer.provider.value = "host-a";
  answer.operation_at = Position{1'000'000};
  EXPECT_EQ(checked.runtime(Pid{7}).error().kind, ClientError::Kind::kMalformed);  // after the response's position
  answer.operation_at = Position{1};
  EXPECT_TRUE(checked.runtime(Pid{7}).ok());
  EXPECT_EQ(checked.runtime(Pid{8}).error().kind, ClientError::Kind::kMalformed);  // another process
}

// Decisions 140-149: storage_fence, storage_compact, prepared_turn and the
// storage read go only to a peer that lists storage_maintenance; a storage
// answer whose fence, grace or cursor does not fit its position is refused.
TEST(TransitClient, StorageMaintenanceIsRequiredOfThePeerAndItsAnswerMustFit) {
  crypto::init();
  ScriptedPeer peer({capability::kStorageMaintenance});
  Client client(peer.options());
  auto fence = client.submit(StorageFence{0, false});
  ASSERT_FALSE(fence.ok());
  EXPECT_EQ(fence.error().kind, ClientError::Kind::kUnsupported);
  EXPECT_NE(fence.error().message.find("storage_maintenance"), std::string::npos) << fence.error().message;
  EXPECT_EQ(client.submit(StorageCompact{0, ProcessLeaf{Pid{7}}}).error().kind, ClientError::Kind::kUnsupported);
  Turn turn{Pid{7}, 1, std::nullopt, ResourceId{1}, std::nullopt, {}, {}, {}, {}, std::nullopt};
  EXPECT_EQ(client.submit(PreparedTurn{{0, Position{1}}, turn}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.query(StorageQuery{}).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(client.require(capability::kStorageMaintenance).error().kind, ClientError::Kind::kUnsupported);
  EXPECT_EQ(peer.received(), (std::vector<std::string>{"capabilities"}));

  ScriptedPeer full({});
  StorageStatus answer;
  full.answer = [&](const QueryOp&) { return QueryResult{answer}; };
  Client checked(full.options());
  EXPECT_TRUE(checked.require(capability::kStorageMaintenance).ok());
  EXPECT_TRUE(checked.query(StorageQuery{}).ok());
  answer.epoch = 1;  // an epoch without its fence
  EXPECT_EQ(checked.query(StorageQuery{}).error().kind, ClientError::Kind::kMalformed);
  answer.fenced_at = kPosition + 1;  // a fence after the answer
  EXPECT_EQ(checked.query(StorageQuery{}).error().kind, ClientError::Kind::kMalformed);
  answer.fenced_at = kPosition;
  EXPECT_TRUE(checked.query(StorageQuery{}).ok());
  answer.grace_below = 2;  // grace past the current epoch
  EXPECT_EQ(checked.query(StorageQuery{}).error().kind, ClientError::Kind::kMalformed);
}

// Decision 183: compaction_needs goes only to a peer that lists
// storage_maintenance, and an answer listing a leaf below the minimum need or
// out of need order is refused.
TEST(TransitClient, ACompactionNeedsAnswerListsOnlyCandidatesMostNeedyFirst) {
  crypto::init();
  ScriptedPeer bare({capability::kStorageMaintenance});  // a peer without it
  Client unsupported(bare.options());
  EXPECT_EQ(unsupported.query(CompactionNeedsQuery{}).error().kind, ClientError::Kind::kUnsupported);

  ScriptedPeer peer({});
  CompactionNeeds answer;
  peer.answer = [&](const QueryOp&) { return QueryResult{answer}; };
  Client checked(peer.options());
  EXPECT_TRUE(checked.query(CompactionNeedsQuery{}).ok());  // nothing needs it
  answer.leaves.items = {{PrincipalLeaf{PrincipalId{1}}, 9}, {ProcessLeaf{Pid{7}}, 2}, {GrantLeaf{3}, 2}};
  EXPECT_TRUE(checked.query(CompactionNeedsQuery{}).ok());
  answer.leaves.items = {{ProcessLeaf{Pid{7}}, 2}, {PrincipalLeaf{PrincipalId{1}}, 9}};  // out of order
  EXPECT_EQ(checked.query(CompactionNeedsQuery{}).error().kind, ClientError::Kind::kMalformed);
  answer.leaves.items = {{PrincipalLeaf{PrincipalId{1}}, 9}, {ProcessLeaf{Pid{7}}, 1}};  // one write: no candidate
  EXPECT_EQ(checked.query(CompactionNeedsQuery{}).error().kind, ClientError::Kind::kMalformed);
}

}  // namespace
}  // namespace cowboy::transit
