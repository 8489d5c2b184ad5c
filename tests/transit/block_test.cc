// Blocks over real HTTP against a transitd in this process (docs/transit.md,
// decisions 100-109): the record a turn publishes, checksums checked before
// a body is served, source-qualified reads, ownership, retirement as a new
// revision that views captured before it do not see, deletion only once no
// live view can read it, each refusal by its reason, and a restart.
#include <rocksdb/db.h>

#include "common/crypto.h"
#include "owned_doc_fixture.h"
#include "store_probe.h"

namespace cowboy::transit {
namespace {

using Bytes = Client::Bytes;

Bytes pattern(std::size_t n, std::uint8_t salt) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 131 + salt) ^ (i >> 9));
  return b;
}
Digest sha256_of(const Bytes& b) { return crypto::sha256(ByteView(b.data(), b.size())); }

class BlockTest : public OwnedDocTest {
 protected:
  /// A turn of kPid publishing `blocks` in doc (and a view of doc when asked); its receipt.
  Receipt publish(std::vector<std::pair<std::string, Bytes>> blocks, bool view = false) {
    Turn t{kPid, generation_, std::nullopt, doc_, std::nullopt, {}, {}, {}, {}, std::nullopt};
    std::vector<Bytes> bodies;
    for (auto& [name, body] : blocks) {
      t.blocks.items.push_back({key(name), body.size(), sha256_of(body)});
      bodies.push_back(body);
    }
    if (view) t.views.items.push_back(doc_);
    return accept(*admin_, t, bodies);
  }
  Block read(const std::string& name, std::optional<BlockSource> source = std::nullopt) {
    return answer<Block>(*admin_, ReadBlock{CurrentBasis{doc_, revision_of(doc_)}, key(name), source});
  }
  Reason read_refused(const std::string& name, std::optional<BlockSource> source = std::nullopt) {
    return query_refused(*admin_, ReadBlock{CurrentBasis{doc_, revision_of(doc_)}, key(name), source}).reason;
  }
  /// A read through a view, built field by field (GCC 12 warns, wrongly, of a braced temporary here).
  static QueryOp through(Id view, const std::string& name, std::optional<BlockSource> source = std::nullopt) {
    ReadBlock q;
    q.basis = ViewBasis{view};
    q.name = key(name);
    q.source = source;
    return q;
  }
  BlockInfo info(const std::string& name) { return answer<BlockInfo>(*admin_, BlockRead{doc_, key(name)}); }
  /// Whether doc's block `name` has a body in the store, read with the node stopped; it is started again.
  bool body_stored(const std::string& name) {
    admin_.reset();
    node_.reset();
    bool stored = false;
    {
      auto db = testing::open_store(dir_);
      std::string v;
      stored = db && db->Get(rocksdb::ReadOptions(), node::layout::block(doc_, key(name)), &v).ok();
    }
    restart();
    admin_ = std::make_unique<Client>(root());
    return stored;
  }
  /// A storage_fence at the stored epoch; its receipt.
  StorageFenced fence(bool record_grace) {
    const Id epoch = answer<StorageStatus>(*admin_, StorageQuery{}).epoch;
    return std::get<StorageFenced>(accept(*admin_, StorageFence{epoch, record_grace}).outcome);
  }
  /// A fence, then, a read-lease grace later, one recording it (decision 142):
  /// every epoch up to the first fence's is past its grace.
  void pass_grace() {
    fence(false);
    clock_.set(clock_.trusted() + kReadLeaseGraceMs);
    fence(true);
  }
};

TEST_F(BlockTest, TheCapabilityIsReported) {
  const auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_NE(std::find(caps->supported.items.begin(), caps->supported.items.end(), CapabilityName{"blocks"}),
            caps->supported.items.end());
}

// Decision 100: the turn that publishes a block writes its record - source,
// checksum, owner - in the same decision; the name is published once, ever.
TEST_F(BlockTest, ATurnPublishesEachBlockWithItsSourceChecksumAndOwner) {
  const Bytes a = pattern(kBlockBytes, 1), b = pattern(10, 2);
  const Receipt r = publish({{"a", a}, {"b", b}});
  const auto& published = std::get<TurnPublished>(r.outcome);
  ASSERT_TRUE(published.revision);
  const BlockInfo got = info("a");
  EXPECT_EQ(got.resource, doc_);
  EXPECT_EQ(got.name, key("a"));
  EXPECT_EQ(got.revision, *published.revision);
  EXPECT_EQ(got.length, a.size());
  EXPECT_EQ(got.sha256, sha256_of(a));
  EXPECT_EQ(got.pid, kPid);
  EXPECT_EQ(got.publisher, PrincipalId{1});
  EXPECT_EQ(got.state, BlockState::kPublished);
  EXPECT_EQ(got.published_at, r.position);
  EXPECT_FALSE(got.retired_revision || got.retired_at || got.deleted_at);
  EXPECT_EQ(info("b").length, 10u);
  EXPECT_EQ(query_refused(*admin_, BlockRead{doc_, key("c")}).reason, Reason::kUnknownBlock);
  EXPECT_EQ(query_refused(*admin_, BlockRead{ResourceId{doc_.value + 1}, key("a")}).reason, Reason::kUnknownResource);

  // A view captured before the block's source revision does not read it.
  Turn viewing{kPid, generation_, std::nullopt, std::nullopt, std::nullopt, {}, {}, {{doc_}}, {}, std::nullopt};
  const Id early = ok<TurnPublished>(admin_->submit(viewing)).views.items.at(0);
  publish({{"late", b}});
  EXPECT_EQ(query_refused(*admin_, through(early, "late")).reason, Reason::kUnknownBlock);
  EXPECT_EQ(read("late").body.value, b);
  // A name is published once: a second block of it is refused, whatever its bytes.
  Turn again{kPid, generation_, std::nullopt, doc_, std::nullopt, {}, {{{key("a"), b.size(), sha256_of(b)}}}, {}, {},
             std::nullopt};
  EXPECT_EQ(refused(admin_->submit(again, {b})).reason, Reason::kBlockExists);
}

// Decision 101: the node checks the stored body against its recorded SHA-256
// before disclosing a byte, and the bodies are not in the journal's records.
TEST_F(BlockTest, ABodyIsServedOnlyWhileItMatchesItsRecordedChecksum) {
  const Bytes a = pattern(4096, 3);
  publish({{"a", a}});
  EXPECT_EQ(read("a").sha256, sha256_of(a));
  admin_.reset();
  node_.reset();
  {
    auto db = testing::open_store(dir_);
    ASSERT_TRUE(db);
    // No journal record holds the body: the signed request carries its descriptor only.
    const std::string raw(a.begin(), a.end());
    for (const auto& k : testing::table_keys(*db, node::layout::kJournal)) {
      std::string v;
      ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), k, &v).ok());
      EXPECT_EQ(v.find(raw.substr(0, 64)), std::string::npos);
      EXPECT_LT(v.size(), kMaxEnvelopeBytes);
    }
    std::string stored;
    const std::string at = node::layout::block(doc_, key("a"));
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), at, &stored).ok());
    stored[8 + 100] ^= 1;  // one bit of the body, after its revision
    rocksdb::WriteOptions synced;
    synced.sync = true;
    ASSERT_TRUE(db->Put(synced, at, stored).ok());
  }
  start(genesis_);
  admin_ = std::make_unique<Client>(root());
  // ServiceUncertain: the client resends, then reports the outcome unknown with the reason.
  auto corrupt = admin_->query(ReadBlock{CurrentBasis{doc_, revision_of(doc_)}, key("a"), std::nullopt});
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error().kind, ClientError::Kind::kUncertain);
  EXPECT_NE(corrupt.error().message.find("block_corrupt"), std::string::npos) << corrupt.error().message;
  EXPECT_EQ(info("a").sha256, sha256_of(a));  // the record still says what the body must be
}

// Decision 103: a read may name the block's source - the revision that
// published it and its SHA-256 - and is answered only by exactly that block,
// at any later revision and through a view alike.
TEST_F(BlockTest, ASourceQualifiedReadIsAnsweredOnlyByTheBlockItNames) {
  const Bytes a = pattern(1000, 4);
  const auto published = std::get<TurnPublished>(publish({{"a", a}}, true).outcome);
  const Revision source = *published.revision;
  const Id view = published.views.items.at(0);
  EXPECT_EQ(read("a", BlockSource{source, sha256_of(a)}).body.value, a);
  // Later revisions of the resource do not move a block's source.
  Turn writes{kPid, generation_, std::nullopt, doc_, std::nullopt, {{{key("k"), value("v")}}}, {}, {}, {}, std::nullopt};
  accept(*admin_, writes);
  ASSERT_GT(revision_of(doc_), source);
  const Block later = read("a", BlockSource{source, sha256_of(a)});
  EXPECT_EQ(later.revision, source);
  EXPECT_EQ(later.body.value, a);
  EXPECT_EQ(answer<Block>(*admin_, through(view, "a", BlockSource{source, sha256_of(a)})).body.value, a);
  // Another revision or another digest is refused, through either basis.
  EXPECT_EQ(read_refused("a", BlockSource{source + 1, sha256_of(a)}), Reason::kBlockSourceMismatch);
  EXPECT_EQ(read_refused("a", BlockSource{source, Digest{}}), Reason::kBlockSourceMismatch);
  EXPECT_EQ(query_refused(*admin_, through(view, "a", BlockSource{source - 1, sha256_of(a)})).reason,
            Reason::kBlockSourceMismatch);
}

// Decision 102: a block is its publishing process's. Write on the resource
// is not enough to retire or delete it; pid_admin at the owner is needed too.
TEST_F(BlockTest, OnlyAnAdministratorOfTheOwningProcessRetiresOrDeletesItsBlock) {
  publish({{"a", pattern(10, 5)}});
  const Id other_admin = principal(2, 2, PidScope{Pid{8}}, kPidAdmin);  // administers another process...
  grant(other_admin, ResourceScope{doc_}, kWrite | kInspect);      // ... and writes the shared resource
  principal(3, 3, PidScope{kPid}, kPidAdmin | kInspect);  // administers the owner, cannot write the resource
  Client two(options(2, 2)), three(options(3, 3));
  two.set_next_sequence(1);  // neither may read its own identity at the realm
  three.set_next_sequence(1);
  EXPECT_EQ(refused(two.submit(RetireBlock{doc_, key("a")})).reason, Reason::kNotBlockOwner);
  EXPECT_EQ(refused(two.submit(DeleteBlock{doc_, key("a")})).reason, Reason::kNotBlockOwner);
  EXPECT_EQ(refused(three.submit(RetireBlock{doc_, key("a")})).reason, Reason::kNotPermitted);
  EXPECT_EQ(refused(two.submit(RetireBlock{doc_, key("none")})).reason, Reason::kUnknownBlock);
  EXPECT_EQ(refused(two.submit(RetireBlock{ResourceId{doc_.value + 1}, key("a")})).reason, Reason::kUnknownResource);
  EXPECT_EQ(info("a").state, BlockState::kPublished);  // each refusal changed nothing
  grant(other_admin, PidScope{kPid}, kPidAdmin);
  const auto changed = ok<BlockChanged>(two.submit(RetireBlock{doc_, key("a")}));
  EXPECT_EQ(changed.state, BlockState::kRetired);
}

// Decision 105: retirement is the resource's next revision: from it on the
// block is not read; a view captured before still reads it.
TEST_F(BlockTest, RetirementIsANewRevisionThatViewsCapturedBeforeItStillRead) {
  const Bytes a = pattern(300, 6);
  const auto published = std::get<TurnPublished>(publish({{"a", a}}, true).outcome);
  const Id view = published.views.items.at(0);
  const Revision before = revision_of(doc_);
  const Receipt r = accept(*admin_, RetireBlock{doc_, key("a")});
  const auto& changed = std::get<BlockChanged>(r.outcome);
  EXPECT_EQ(changed.resource, doc_);
  EXPECT_EQ(changed.name, key("a"));
  EXPECT_EQ(changed.revision, before + 1);
  EXPECT_EQ(changed.state, BlockState::kRetired);
  EXPECT_EQ(revision_of(doc_), before + 1);
  // The old revision is not current any more; the new one does not read the block.
  EXPECT_EQ(query_refused(*admin_, ReadBlock{CurrentBasis{doc_, before}, key("a"), std::nullopt}).reason,
            Reason::kResourceRevisionChanged);
  EXPECT_EQ(read_refused("a"), Reason::kBlockRetired);
  EXPECT_EQ(read_refused("a", BlockSource{*published.revision, sha256_of(a)}), Reason::kBlockRetired);
  EXPECT_EQ(answer<Block>(*admin_, through(view, "a")).body.value, a);
  const BlockInfo got = info("a");
  EXPECT_EQ(got.state, BlockState::kRetired);
  EXPECT_EQ(got.retired_revision, before + 1);
  EXPECT_EQ(got.retired_at, r.position);
  EXPECT_EQ(refused(admin_->submit(RetireBlock{doc_, key("a")})).reason, Reason::kBlockRetired);
}

// Decision 106: a body is deleted only once retired and once no view of a
// live process can still read it; the record stays, and the name stays taken.
TEST_F(BlockTest, DeletionWaitsForRetirementAndForEveryLiveViewThatReadsTheBlock) {
  const Bytes a = pattern(500, 7);
  const Id view = std::get<TurnPublished>(publish({{"a", a}}, true).outcome).views.items.at(0);
  EXPECT_EQ(refused(admin_->submit(DeleteBlock{doc_, key("a")})).reason, Reason::kBlockNotRetired);
  accept(*admin_, RetireBlock{doc_, key("a")});
  EXPECT_EQ(refused(admin_->submit(DeleteBlock{doc_, key("a")})).reason, Reason::kBlockViewed);
  // A view captured after the retirement cannot read it, so it holds nothing back.
  process(doc_, 8);
  const Id generation8 = ok<ProcessChanged>(admin_->submit(Own{Pid{8}, 1})).generation;
  accept(*admin_, Turn{Pid{8}, generation8, std::nullopt, std::nullopt, std::nullopt, {}, {}, {{doc_}}, {}, std::nullopt});
  // Once the viewing process is retired, no read reaches the block.
  accept(*admin_, Terminate{kPid, generation_});
  EXPECT_FALSE(admin_->query(through(view, "a")).ok());
  const Receipt r = accept(*admin_, DeleteBlock{doc_, key("a")});
  EXPECT_EQ(std::get<BlockChanged>(r.outcome).state, BlockState::kDeleted);
  const BlockInfo got = info("a");
  EXPECT_EQ(got.state, BlockState::kDeleted);
  EXPECT_EQ(got.deleted_at, r.position);
  EXPECT_EQ(got.sha256, sha256_of(a));  // the record outlives the body
  EXPECT_EQ(read_refused("a"), Reason::kBlockDeleted);
  EXPECT_EQ(refused(admin_->submit(DeleteBlock{doc_, key("a")})).reason, Reason::kBlockDeleted);
  EXPECT_EQ(refused(admin_->submit(RetireBlock{doc_, key("a")})).reason, Reason::kBlockDeleted);
  Turn again{Pid{8}, generation8, std::nullopt, doc_, std::nullopt, {}, {{{key("a"), a.size(), sha256_of(a)}}}, {}, {},
             std::nullopt};
  EXPECT_EQ(refused(admin_->submit(again, {a})).reason, Reason::kBlockExists);
}

// Decisions 100 and 107: records and steps are journaled with their decision
// and read back after a restart; a deleted body is gone from the store.
TEST_F(BlockTest, RecordsSurviveARestartAndADeletedBodyIsGoneFromTheStore) {
  const Bytes a = pattern(64, 8), b = pattern(128, 9);
  publish({{"a", a}, {"b", b}});
  accept(*admin_, RetireBlock{doc_, key("b")});
  accept(*admin_, DeleteBlock{doc_, key("b")});
  pass_grace();  // the body goes once the grace past its deletion is recorded (decision 180)
  const BlockInfo a_before = info("a"), b_before = info("b");
  admin_.reset();
  restart();
  admin_ = std::make_unique<Client>(root());
  EXPECT_EQ(info("a"), a_before);
  EXPECT_EQ(info("b"), b_before);
  EXPECT_EQ(read("a").body.value, a);
  EXPECT_EQ(read_refused("b"), Reason::kBlockDeleted);
  admin_.reset();
  node_.reset();
  auto db = testing::open_store(dir_);
  ASSERT_TRUE(db);
  std::string v;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), node::layout::block(doc_, key("b")), &v).IsNotFound());
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), testing::newest_version(*db, node::layout::block_record(doc_, key("b"))), &v).ok());
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), node::layout::block(doc_, key("a")), &v).ok());
}

// Decision 180: delete_block ends every read at once, but the body stays
// stored until a fence records the read-lease grace past the epoch it was
// deleted in - then that fence's write removes it - and a body deleted in a
// later epoch waits for the grace past that one.
TEST_F(BlockTest, ADeletedBodyIsPurgedOnlyByAFenceThatRecordsTheGracePastItsEpoch) {
  const Bytes a = pattern(300, 10), b = pattern(400, 11);
  publish({{"a", a}, {"b", b}});
  accept(*admin_, RetireBlock{doc_, key("a")});
  accept(*admin_, RetireBlock{doc_, key("b")});
  accept(*admin_, DeleteBlock{doc_, key("a")});  // in epoch 0
  EXPECT_EQ(read_refused("a"), Reason::kBlockDeleted);
  EXPECT_TRUE(body_stored("a"));

  const TrustedMs fenced_ms = clock_.trusted();
  EXPECT_EQ(fence(false).epoch, 1u);
  accept(*admin_, DeleteBlock{doc_, key("b")});  // in epoch 1
  EXPECT_TRUE(body_stored("a"));  // a fence without a recorded grace frees nothing
  // A millisecond short of the grace the fence that would record it is refused, and nothing goes.
  clock_.set(fenced_ms + kReadLeaseGraceMs - Millis{1});
  EXPECT_EQ(refused(admin_->submit(StorageFence{1, true})).reason, Reason::kReadLeaseGracePending);
  EXPECT_TRUE(body_stored("a"));

  clock_.set(fenced_ms + kReadLeaseGraceMs);
  EXPECT_EQ(fence(true).grace_below, 1u);  // every lease of epoch 0 has ended
  EXPECT_FALSE(body_stored("a"));
  EXPECT_TRUE(body_stored("b"));  // deleted in epoch 1, whose leases may still read
  EXPECT_EQ(info("a").state, BlockState::kDeleted);  // the record outlives the body

  clock_.set(clock_.trusted() + kReadLeaseGraceMs);
  EXPECT_EQ(fence(true).grace_below, 2u);
  EXPECT_FALSE(body_stored("b"));
  EXPECT_EQ(read_refused("b"), Reason::kBlockDeleted);
  EXPECT_EQ(info("b").state, BlockState::kDeleted);
}

}  // namespace
}  // namespace cowboy::transit
