// Checkpoints and history trimming over real HTTP with a real RocksDB
// (docs/transit.md, decisions 64-69): only a genesis that opts in accepts a
// checkpoint; the floor only moves up, onto a committed checkpoint carrying
// the roots asked; trimming deletes the journal's requests below the floor
// and gives their disk space back, while every trimmed command's exact retry
// is still answered with its original receipt, byte for byte, also after a
// restart; neither trim nor restart resets the admission ceiling's count.
#include <gtest/gtest.h>

#include <fstream>

#include "../support/poll.h"
#include "failing_fs.h"
#include "state_fixture.h"
#include "store_probe.h"
#include "transit/history.h"

namespace cowboy::transit {
namespace {

using testing::seed_of;

Genesis opt_in(std::optional<Id> ceiling = std::nullopt) {
  Genesis g = testing::sample_genesis(ceiling);
  g.allow_history_trim = true;
  return g;
}

template <typename Op> void refused_as(ClientResult<Receipt> r, RejectionCode code, Reason reason) {
  ASSERT_FALSE(r.ok()) << Op::kName;
  ASSERT_TRUE(r.error().rejection) << r.error().message;
  EXPECT_EQ(r.error().rejection->code, code) << Op::kName;
  EXPECT_EQ(r.error().rejection->reason, reason) << Op::kName << ": " << r.error().message;
}

// Byte-exact spellings of the history ops (the fixtures also seed the fuzzers).
TEST(HistoryContract, TheHistoryOpsSpellAsTheirFixtures) {
  const auto fixture = [](const std::string& name) {
    std::ifstream in(std::string(COWBOY_FIXTURE_DIR) + "/transit/" + name);
    std::string line;
    std::getline(in, line);
    return line;
  };
  Digest roots{};
  for (std::size_t i = 0; i < roots.size(); ++i) roots[i] = static_cast<std::uint8_t>(i + 1);
  const Definition definition{"transit.v1:fixture"};
  EXPECT_EQ(to_json(Request{Version{}, definition, {"dev"}, PrincipalId{1}, 9, AdvanceFloor{Position{5}, roots}}), fixture("advance_floor.json"));
  EXPECT_EQ(to_json(Query{Version{}, definition, {"dev"}, PrincipalId{1}, CheckpointQuery{}}), fixture("checkpoint_status.json"));
  EXPECT_EQ(to_json(Checkpoint{}), "{}");
}

// The default realm keeps its whole history: this build supports reclamation,
// the genesis does not select it, and both commands say so.
class UnlimitedHistoryTest : public StateTest {};

TEST_F(UnlimitedHistoryTest, ACheckpointWithoutTheGenesisOptInIsRefused) {
  auto caps = admin_->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_TRUE(caps->history_reclamation);
  EXPECT_FALSE(caps->allow_history_trim);
  EXPECT_NE(std::find(caps->supported.items.begin(), caps->supported.items.end(), CapabilityName{"checkpoints"}),
            caps->supported.items.end());

  accept(*admin_, CreateRole{{"ops"}, std::nullopt});
  const Position before = position();
  refused_as<Checkpoint>(admin_->submit(Checkpoint{}), RejectionCode::kInvalidProposal, Reason::kHistoryTrimNotAllowed);
  refused_as<AdvanceFloor>(admin_->submit(AdvanceFloor{Position{1}, {}}), RejectionCode::kInvalidProposal,
                           Reason::kHistoryTrimNotAllowed);
  // Over the wire: 422, and nothing was decided.
  const auto wire = post("/v1/command", to_json(sign(admin_->build(Checkpoint{}, *admin_->next_sequence()), seed_of(0))));
  EXPECT_EQ(wire.status, 422);
  EXPECT_EQ(rejection_of(wire).reason, Reason::kHistoryTrimNotAllowed);
  EXPECT_EQ(position(), before);
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}), (CheckpointStatus{Position{0}, std::nullopt}));
  // A maintenance pass finds nothing to do: its interval authorizes nothing.
  auto step = trim_history(*admin_);
  ASSERT_TRUE(step.ok()) << step.error().message;
  EXPECT_FALSE(step->receipt);
  EXPECT_EQ(position(), before);
}

class HistoryTest : public StateTest {
 protected:
  Genesis genesis() const override { return opt_in(); }

  /// The node's RocksDB, with the node stopped; the node starts again when it goes.
  struct Stopped {
    HistoryTest& test;
    std::unique_ptr<rocksdb::DB> db;
    explicit Stopped(HistoryTest& t) : test(t) {
      test.admin_.reset();
      test.node_.reset();
      db = testing::open_store(test.dir_);
    }
    ~Stopped() {
      db.reset();
      test.start(test.genesis_);
      test.admin_ = std::make_unique<Client>(test.root());
    }
  };

  /// Turns of process kPid, each writing four 200-byte values: history worth trimming.
  void turns(ResourceId doc, int count) {
    const Id generation = ok<ProcessChanged>(admin_->submit(Own{kPid, 1})).generation;
    for (int i = 0; i < count; ++i) {
      Turn t{kPid, generation, std::nullopt, doc, std::nullopt, {}, {}, {}, {}, std::nullopt};
      for (int k = 0; k < 4; ++k)
        t.mutations.items.push_back({key(numbered("k", k)), EntryValue{std::vector<std::uint8_t>(200, static_cast<std::uint8_t>(i))}});
      accept(*admin_, t);
    }
  }
  /// Starts again from an empty directory with `genesis` (a directory keeps its genesis).
  void fresh(const Genesis& genesis) {
    admin_.reset();
    node_.reset();
    std::filesystem::remove_all(dir_);
    start(genesis);
    admin_ = std::make_unique<Client>(root());
  }
  Receipt checkpoint() { return accept(*admin_, Checkpoint{}); }
  Digest roots_of(const Receipt& r) { return std::get<Checkpointed>(r.outcome).roots; }
  void wait_reclaimed(Position floor) {
    EXPECT_TRUE(cowboy::testing::eventually([&] { return node_->sequencer().stats().reclaimed_below >= floor.value; },
                                            std::chrono::seconds(60)));
  }
};

TEST_F(HistoryTest, TheFloorOnlyMovesUpOntoACommittedCheckpointWithTheRootsItCarries) {
  accept(*admin_, CreateRole{{"ops"}, std::nullopt});
  const Receipt first = checkpoint();
  EXPECT_EQ(first.position, Position{2});
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}),
            (CheckpointStatus{Position{0}, CheckpointInfo{first.position, roots_of(first)}}));

  // The floor rests only on a checkpoint, and only with the roots it carries.
  Digest other = roots_of(first);
  other[0] ^= 1;
  refused_as<AdvanceFloor>(admin_->submit(AdvanceFloor{first.position, other}), RejectionCode::kConflict,
                           Reason::kCheckpointMismatch);
  refused_as<AdvanceFloor>(admin_->submit(AdvanceFloor{Position{1}, roots_of(first)}), RejectionCode::kInvalidProposal,
                           Reason::kUnknownCheckpoint);
  refused_as<AdvanceFloor>(admin_->submit(AdvanceFloor{Position{100}, roots_of(first)}), RejectionCode::kInvalidProposal,
                           Reason::kUnknownCheckpoint);
  // Realm-wide control authority: an inspector may read the status, not move the floor.
  principal(2, 102, RealmScope{}, kAllPermissions & ~kRealmControl);
  Client other_admin(options(2, 102));
  refused_as<AdvanceFloor>(other_admin.submit(AdvanceFloor{first.position, roots_of(first)}), RejectionCode::kDenied,
                           Reason::kNotPermitted);
  refused_as<Checkpoint>(other_admin.submit(Checkpoint{}), RejectionCode::kDenied, Reason::kNotPermitted);
  EXPECT_EQ(answer<CheckpointStatus>(other_admin, CheckpointQuery{}).floor, Position{0});

  const auto moved = ok<FloorAdvanced>(admin_->submit(AdvanceFloor{first.position, roots_of(first)}));
  EXPECT_EQ(moved, (FloorAdvanced{first.position, Position{0}}));
  // Monotonic: the same floor again, or a lower one, is refused.
  refused_as<AdvanceFloor>(admin_->submit(AdvanceFloor{first.position, roots_of(first)}), RejectionCode::kConflict,
                           Reason::kFloorNotAdvancing);
  refused_as<AdvanceFloor>(admin_->submit(AdvanceFloor{Position{1}, roots_of(first)}), RejectionCode::kConflict,
                           Reason::kFloorNotAdvancing);

  // A later checkpoint carries the roots of a later state, and chains the
  // earlier one (the head it hashes names it).
  accept(*admin_, CreateRole{{"dev"}, std::nullopt});
  const Receipt second = checkpoint();
  EXPECT_NE(roots_of(second), roots_of(first));
  auto step = trim_history(*admin_);
  ASSERT_TRUE(step.ok()) << step.error().message;
  ASSERT_TRUE(step->receipt);
  EXPECT_EQ(std::get<FloorAdvanced>(step->receipt->outcome), (FloorAdvanced{second.position, first.position}));
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}),
            (CheckpointStatus{second.position, CheckpointInfo{second.position, roots_of(second)}}));
  // A second maintainer's step right after finds nothing left to do.
  auto again = trim_history(*admin_);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->receipt);
  EXPECT_EQ(again->floor, second.position);
}

// The roots are the SHA-256 of the published records, as recovery reads them:
// the same commands on the same (manual) clock give the same roots whether
// the node ran them in one go or recovered in between, and any change to the
// state changes them.
TEST_F(HistoryTest, ACheckpointsRootsAreThoseOfThePublishedStateAsRecovered) {
  const auto run = [&](bool restart_between) {
    fresh(opt_in());
    const ResourceId doc = resource("doc");
    process(doc);
    turns(doc, 3);
    const Receipt first = checkpoint();
    if (restart_between) {
      restart();
      admin_ = std::make_unique<Client>(root());
    }
    return std::pair{roots_of(first), roots_of(checkpoint())};
  };
  const auto live = run(false);
  const auto recovered = run(true);
  EXPECT_EQ(recovered.first, live.first);
  EXPECT_EQ(recovered.second, live.second);  // decided on a recovered state
  EXPECT_NE(live.first, live.second);        // the first checkpoint changed the head it hashes
}

TEST_F(HistoryTest, TrimmingDeletesTheRequestsBelowTheFloorAndGivesTheirDiskSpaceBack) {
  const ResourceId doc = resource("doc");
  process(doc);
  turns(doc, 300);
  const Receipt cp = checkpoint();
  std::uint64_t table_bytes_before = 0, journal_bytes = 0;
  std::size_t receipts = 0;
  {
    Stopped stopped(*this);
    ASSERT_TRUE(stopped.db->Flush(rocksdb::FlushOptions()).ok());
    table_bytes_before = testing::table_file_bytes(dir_);
    const auto positions = testing::journal_positions(*stopped.db);
    ASSERT_EQ(positions.size(), cp.position.value);  // every decision's request, 1..P
    EXPECT_EQ(positions.front(), Position{1});
    const auto [first, end] = node::layout::journal_below(cp.position);
    const rocksdb::Range below(first, end);
    ASSERT_TRUE(stopped.db->GetApproximateSizes(rocksdb::SizeApproximationOptions{}, stopped.db->DefaultColumnFamily(),
                                                &below, 1, &journal_bytes).ok());
    receipts = testing::table_keys(*stopped.db, node::layout::kSequences).size();
    EXPECT_EQ(receipts, cp.position.value);
  }
  EXPECT_GT(journal_bytes * 2, table_bytes_before);  // the requests take most of the table files

  auto step = trim_history(*admin_);
  ASSERT_TRUE(step.ok()) << step.error().message;
  ASSERT_TRUE(step->receipt);
  EXPECT_EQ(step->floor, cp.position);
  wait_reclaimed(cp.position);
  {
    Stopped stopped(*this);
    ASSERT_TRUE(stopped.db->Flush(rocksdb::FlushOptions()).ok());
    // No request below the floor; the floor's own entry, and everything after, stays whole.
    const auto positions = testing::journal_positions(*stopped.db);
    ASSERT_FALSE(positions.empty());
    EXPECT_EQ(positions.front(), cp.position);
    EXPECT_EQ(positions.back(), step->receipt->position);
    EXPECT_EQ(positions.size(), step->receipt->position - cp.position + 1);
    // Receipts are never trimmed: one per decision, the trim's included.
    EXPECT_EQ(testing::table_keys(*stopped.db, node::layout::kSequences).size(), receipts + 1);
    // The space came back: the table files lost at least most of the requests' bytes.
    const std::uint64_t table_bytes_after = testing::table_file_bytes(dir_);
    std::printf("table files %llu -> %llu bytes; requests below the floor took %llu\n",
                (unsigned long long)table_bytes_before, (unsigned long long)table_bytes_after,
                (unsigned long long)journal_bytes);
    EXPECT_LT(table_bytes_after + journal_bytes * 3 / 4, table_bytes_before);
  }
  // Values, inputs, records and the catalog read as before.
  EXPECT_EQ(revision_of(doc), Revision{301});
  auto read = answer<EntryBatch>(*admin_, ReadEntries{doc, std::nullopt, std::nullopt, slots({"k0", "k3"})});
  ASSERT_TRUE(read.entries.items[1]);
  EXPECT_EQ(read.entries.items[1]->value, EntryValue{std::vector<std::uint8_t>(200, static_cast<std::uint8_t>(299))});
}

// Raw HTTP: the answers' bytes themselves are compared.
TEST_F(HistoryTest, ExactRetriesOfTrimmedCommandsGetTheirOriginalReceiptsByteForByte) {
  const ResourceId doc = resource("doc");
  process(doc);
  principal(2, 102, RealmScope{}, kAllPermissions);
  Client worker(options(2, 102));
  const Id generation = ok<ProcessChanged>(worker.submit(Own{kPid, 1})).generation;
  struct Sent {
    std::string body, answer;
  };
  std::vector<Sent> sent;
  const auto send = [&](Command op, Id sequence) {
    const std::string body = to_json(sign(worker.build(std::move(op), sequence), seed_of(102)));
    const auto answer = post("/v1/command", body);
    EXPECT_EQ(answer.status, 200) << answer.body;
    sent.push_back({body, answer.body});
  };
  Id sequence = 2;
  send(Send{kPid, {{1, 2, 3}}}, sequence++);
  send(Turn{kPid, generation, 1, doc, std::nullopt, {{{key("a"), value("x")}}}, {}, {}, {}, std::nullopt}, sequence++);
  send(CreateResource{{"other"}, std::nullopt}, sequence++);
  send(Checkpoint{}, sequence++);
  const Receipt cp = *from_json<Receipt>(sent.back().answer, kMaxAnswerBytes);
  send(AdvanceFloor{cp.position, std::get<Checkpointed>(cp.outcome).roots}, sequence++);
  wait_reclaimed(cp.position);

  const auto retry_all = [&](const char* when) {
    for (const auto& s : sent) {
      const auto again = post("/v1/command", s.body);
      EXPECT_EQ(again.status, 200) << when;
      EXPECT_EQ(again.body, s.answer) << when;
    }
    // Another body at a trimmed sequence is still a conflict: the receipt keeps the digest.
    const auto reused = post("/v1/command", to_json(sign(worker.build(Send{kPid, {{9}}}, 2), seed_of(102))));
    EXPECT_EQ(reused.status, 409) << when;
    EXPECT_EQ(rejection_of(reused).reason, Reason::kSequenceReused) << when;
  };
  {
    Stopped stopped(*this);
    EXPECT_EQ(testing::journal_positions(*stopped.db).front(), cp.position);  // they are trimmed
  }
  retry_all("after the trim");
  restart();
  admin_ = std::make_unique<Client>(root());
  retry_all("after a restart");
  EXPECT_EQ(node_->sequencer().stats().replayed, sent.size());
}

// Decision 66: the floor and the deletion below it are one synced write. A
// sync that fails under advance_floor leaves, after the restart, either both
// (the write reached the log) or neither - never a floor over requests still
// there, nor requests gone under no floor - and the same bytes resent are
// decided once. (The failing file system keeps what was written before the
// failed sync, as a killed process's page cache does; it cannot show a torn
// write that only a power loss would leave.)
class HistoryStorageTest : public HistoryTest {
 protected:
  void SetUp() override {
    storage_env_ = env_.get();
    HistoryTest::SetUp();
  }
  std::shared_ptr<testing::SyncFailingFileSystem> fs_ = std::make_shared<testing::SyncFailingFileSystem>();
  std::unique_ptr<rocksdb::Env> env_ = testing::env_over(fs_);
};

TEST_F(HistoryStorageTest, AFailedSyncUnderTheFloorLeavesBothTheFloorAndTheDeletionOrNeither) {
  const ResourceId doc = resource("doc");
  process(doc);
  turns(doc, 20);
  const Receipt cp = checkpoint();
  const SignedRequest advance = sign(admin_->build(AdvanceFloor{cp.position, roots_of(cp)}, *admin_->next_sequence()), seed_of(0));
  fs_->fail_syncs(true);
  const auto failed = post("/v1/command", to_json(advance));
  EXPECT_EQ(failed.status, 503);
  EXPECT_EQ(rejection_of(failed).reason, Reason::kStorageFailed);
  fs_->fail_syncs(false);

  restart();
  admin_ = std::make_unique<Client>(root());
  const Position floor = answer<CheckpointStatus>(*admin_, CheckpointQuery{}).floor;
  EXPECT_TRUE(floor.value == 0 || floor == cp.position) << floor.value;
  {
    Stopped stopped(*this);
    EXPECT_EQ(testing::journal_positions(*stopped.db).front(), floor.value == 0 ? Position{1} : cp.position) << floor.value;
  }
  auto resent = admin_->resubmit(advance);
  ASSERT_TRUE(resent.ok()) << resent.error().message;
  EXPECT_EQ(std::get<FloorAdvanced>(resent->outcome), (FloorAdvanced{cp.position, Position{0}}));
  EXPECT_EQ(resent->position, cp.position + 1);
  wait_reclaimed(cp.position);
  {
    Stopped stopped(*this);
    EXPECT_EQ(testing::journal_positions(*stopped.db).front(), cp.position);
  }
  EXPECT_EQ(answer<CheckpointStatus>(*admin_, CheckpointQuery{}).floor, cp.position);
}

// Decision 9: the ceiling counts journal positions, which trimming deletes
// requests of but never renumbers; a restart reads the same head.
TEST_F(HistoryTest, NeitherTrimNorRestartResetsTheAdmissionCeilingsCount) {
  fresh(opt_in(8));
  for (int i = 0; i < 5; ++i) accept(*admin_, CreateRole{{numbered("r", i)}, std::nullopt});  // positions 1-5
  const Receipt cp = checkpoint();                                                            // 6
  EXPECT_EQ(trim_history(*admin_)->floor, cp.position);                                      // 7
  wait_reclaimed(cp.position);
  accept(*admin_, CreateRole{{"last"}, std::nullopt});                                       // 8: the ceiling
  refused_as<CreateRole>(admin_->submit(CreateRole{{"over"}, std::nullopt}), RejectionCode::kAdmissionClosed,
                         Reason::kAdmissionCeiling);
  restart();
  admin_ = std::make_unique<Client>(root());
  refused_as<CreateRole>(admin_->submit(CreateRole{{"over"}, std::nullopt}), RejectionCode::kAdmissionClosed,
                         Reason::kAdmissionCeiling);
  refused_as<Checkpoint>(admin_->submit(Checkpoint{}), RejectionCode::kAdmissionClosed, Reason::kAdmissionCeiling);
  EXPECT_EQ(position(), Position{8});
}

}  // namespace
}  // namespace cowboy::transit
