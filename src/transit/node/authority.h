// The realm's state and the rules that change it: principals, roles,
// credentials (principal-role bindings) and grants (authority.cc); resources,
// associations and the reads of them (resources.cc); processes, mailboxes,
// turns, views and outputs (processes.cc); the head (position, policy
// revision, trusted time). Pure: no storage, no threads. Entries, mailbox
// inputs and blocks, which grow without bound, are read through a
// CatalogReader and written through Touched; the sequencer owns the one
// instance and the journal persists what each decision touched.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <span>

#include "common/result.h"
#include "transit/node/records.h"
#include "transit/node/storage.h"
#include "transit/node/resident.h"

namespace cowboy::transit::node {

/// Why a command or query is refused: a catalogued reason, which fixes its code.
struct Refusal {
  Reason reason;
  std::string message;
  RejectionCode code() const { return code_of(reason); }
};

using Bytes = std::vector<std::uint8_t>;

/// What one accepted decision changed, for the journal to write.
struct Touched {
  struct EntryWrite {
    ResourceId resource;
    EntryKey key;
    Revision revision;
    std::optional<EntryValue> value;
  };
  struct InputWrite {
    Pid pid;
    Input input;
  };
  struct BlockWrite {
    ResourceId resource;
    EntryKey name;
    Revision revision;
    const Bytes* body;  // the request's, alive until staged
  };
  std::vector<PrincipalId> principals;
  std::vector<Id> roles, grants_written, grants_removed;
  std::vector<std::pair<PrincipalId, Id>> credentials_added, credentials_removed;
  std::vector<ResourceId> resources;
  std::vector<Pid> processes;
  std::vector<Id> views, outputs, effects, payloads;
  std::vector<Pid> runtime;  // PIDs whose runtime binding changed
  std::vector<std::pair<Pid, Id>> associations;  // (pid, association revision)
  std::vector<EntryWrite> entries;
  std::vector<InputWrite> inputs;
  std::vector<BlockWrite> blocks;
  // Records collection removes (collection.cc, decisions 110-117, 186-187): deleted, never rewritten.
  std::vector<Id> views_removed, outputs_removed, effects_removed, payloads_removed;
  std::vector<std::pair<Pid, Id>> associations_removed, inputs_removed;  // (pid, revision), (pid, input)
  std::vector<BlockInfo> block_records;                   // written whole (decisions 100-109)
  std::vector<std::pair<ResourceId, EntryKey>> blocks_deleted;    // bodies a fence purges past the grace (decision 180)
  std::optional<Position> trim_below;  // a new history floor: journal entries below it go (decision 66)
  std::vector<std::pair<Pid, bool>> ended;  // the ended-process index: (pid, candidate now)
  std::optional<CompactionRecord> compaction;  // storage_compact's ledger record (decision 144)
  // The stored indexes' rows the decision added (true) or removed (decision 170): layout's keys.
  std::vector<std::pair<std::string, bool>> rows;
  // The compaction needs it changed (decision 183): leaf record key, new need (none: the row goes).
  std::vector<std::pair<std::string, std::optional<Id>>> needs;
};

/// A stored record version that does not decode, decodes as another record,
/// or whose key is not of its table's shape (decisions 157, 162, 172): an
/// error, never read as absent; on the wire ServiceUncertain/storage_corrupt.
/// Named by its id where the reader knows one, by its table and key otherwise.
struct CorruptRecord {
  Id pid = 0;  // the record's id: a PID, an association's revision, or another record's id (decisions 170, 175)
  std::string_view kind = "process";
  std::string table{};   // read by key (Catalog::record_at): the registry's name of its table,
  std::string record{};  // the record's key, hex,
  std::string detail{};  // and why it does not decode
  std::string message() const {
    if (!record.empty()) return table + " record " + record + "'s stored version does not decode: " + detail;
    return std::string(kind) + " " + std::to_string(pid) + "'s stored version does not decode";
  }
};

/// The records the authority does not keep resident, read from storage as
/// published, being committed and staged (the journal's; decision 130).
/// Processes, outputs, effects and payloads, resources, associations, views
/// and runtime bindings, and the indexes over them (decisions 170, 175):
/// what grows with a realm's work.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  /// `pid`'s record as of `position` (its newest version at or below it);
  /// null when it had none then; CorruptRecord when that version does not decode.
  virtual Result<std::optional<ProcessRecord>, CorruptRecord> process(Pid pid, Position position) const = 0;
  /// The records in PID order after `after`, each as of `position`, until
  /// `visit` returns false; a version that does not decode stops the scan
  /// and is returned.
  virtual std::optional<CorruptRecord> processes(Pid after, Position position,
                                                 const std::function<bool(const ProcessRecord&)>& visit) const = 0;
  /// The stored value of the record under `record_key` (its table and ids:
  /// layout::key) as of `position`; none when it had none then or was
  /// removed. Undecoded: the authority decodes and checks it.
  virtual std::optional<std::string> record(const std::string& record_key, Position position) const = 0;
  /// The records of `table` in id order after `after`, each as of
  /// `position` (removed ones skipped), until `visit` returns false.
  virtual void records(char table, Id after, Position position,
                       const std::function<bool(Id, std::string_view)>& visit) const = 0;
  /// The keys of the stored index rows (decision 170) that start with
  /// `prefix` and sort after `after` (from the first when empty), in key
  /// order, until `visit` returns false.
  virtual void rows(const std::string& prefix, const std::string& after,
                    const std::function<bool(std::string_view)>& visit) const = 0;
};

/// The growing part of the catalog, as published and staged (the journal's).
/// Every read is at an exact resource revision: versions are immutable, so a
/// revision's state never changes once decided.
class CatalogReader {
 public:
  virtual ~CatalogReader() = default;
  /// `key` in `resource` as of `revision`; null when absent (never written, or deleted).
  virtual std::optional<Entry> entry(ResourceId resource, const EntryKey& key, Revision revision) const = 0;
  struct Scan {
    std::vector<Entry> entries;           // live entries in key order
    std::optional<EntryKey> last_key;     // the last key examined
    bool complete = false;                // no key after last_key
    std::size_t examined = 0;             // the stored keys visited (decision 191)
  };
  /// Entries after `after` (from the first when null) as of `revision`: at
  /// most `limit` live ones, examining at most `budget` keys.
  virtual Scan entries(ResourceId resource, Revision revision, const std::optional<EntryKey>& after, std::size_t limit,
                       std::size_t budget) const = 0;
  virtual std::optional<Input> input(Pid pid, Id input) const = 0;
  /// A block and the revision that wrote it.
  virtual std::optional<std::pair<Revision, Bytes>> block(ResourceId resource, const EntryKey& name) const = 0;
  /// A block's record, whatever its state; none when the name was never published.
  virtual std::optional<BlockInfo> block_record(ResourceId resource, const EntryKey& name) const = 0;
  /// Whether any key of `leaf` is stored (leaf_ranges): a deletion's or a
  /// removal's version is (a compaction leaf, decision 144).
  virtual bool stores(const StorageLeaf& leaf) const = 0;
  /// The journal entry at `position` as published by a synced write: none
  /// when it is trimmed, not yet durable, or does not decode.
  virtual std::optional<JournalEntry> committed_entry(Position position) const = 0;
};

/// What the payload store holds, as the decide thread asks it (payload_store.h
/// implements it): the one fact payload_ready and payload_deleted are judged on.
class PayloadFacts {
 public:
  virtual ~PayloadFacts() = default;
  /// A complete copy of `payload` whose bytes are `length` long with this
  /// SHA-256, written and synced (file and directory), is stored.
  virtual bool holds(Id payload, Id length, const Digest& sha256) const = 0;
  /// Nothing of `payload` (declared with this SHA-256) is stored or being written.
  virtual bool absent(Id payload, const Digest& sha256) const = 0;
};

/// The permission bits `principal` holds at `scope` (none when revoked or unknown).
class Authority {
 public:
  explicit Authority(Genesis genesis);  // the state at position 0
  /// The published state read back from the journal.
  /// Everything else is read when needed (decisions 130, 170, 175).
  struct Published {
    Head head;
    std::map<PrincipalId, PrincipalRecord> principals;
    std::map<Id, RoleRecord> roles;
    std::map<Id, GrantRecord> grants;
    std::set<std::pair<PrincipalId, Id>> credentials;
    std::set<Pid> may_have_ended;  // the ended-process index as stored (processes are read when needed)
    std::map<std::string, Id> needs;  // the compaction needs as stored (decision 183): leaf record key -> need
  };
  Authority(Genesis genesis, Published published);  // recovery

  /// Where process records come from when they are not resident (the
  /// journal; it outlives this authority). Without one (a fresh realm being
  /// created), every process stays resident.
  void read_records_from(const RecordSource* source) { source_ = source; }
  /// At most this many process records stay resident between decisions
  /// (decision 130), and as many outputs, effects, payloads, resources,
  /// associations, views and runtime bindings each (decisions 170, 175); a
  /// decision or query over it starts by dropping the least recently used.
  static constexpr std::size_t kResidentProcesses = 1 << 16;
  /// At most this many leaves' compaction needs are kept (decision 183).
  static constexpr std::size_t kNeedsBound = 4096;
  /// At most this many deleted block bodies one storage_fence purges (decision 180).
  static constexpr std::size_t kPurgesPerFence = 256;
  void limit_resident(std::size_t processes) { resident_limit_ = processes; }
  /// The node's dependency budgets (decision 156), reported in capabilities:
  /// the required names one process may declare, and the resources one
  /// process may own the lifetime of.
  struct DependencyBudgets {
    Id required_resources = kRequiredNames;
    Id lifetime_owner = kLifetimeOwnerBudget;
  };
  void set_budgets(DependencyBudgets budgets) { budgets_ = budgets; }
  const DependencyBudgets& budgets() const { return budgets_; }
  /// Whether a corrupt stored record was met after a decision had begun to
  /// change state (decision 157): every later command is refused until a restart.
  bool failed_closed() const { return failed_closed_; }
  /// The stored entry keys collection's scans have visited since start
  /// (decisions 188, 191): transitd's transitd_collection_keys_visited_total.
  std::uint64_t collection_keys_visited() const { return collection_keys_visited_; }
  /// The corrupt stored record met since the last call, if any (a read made
  /// outside answer(), such as a snapshot's, asks this before answering).
  std::optional<CorruptRecord> take_corrupt() const {
    corrupt_after_change_ = false;
    return std::exchange(corrupt_, std::nullopt);
  }

  /// A fresh command at sequence last + 1, signature already verified, with
  /// the block bodies that came with it: its receipt (the head advanced,
  /// `touched` filled) or why not (nothing changed).
  Result<Receipt, Refusal> decide(const Request& request, const Digest& digest, TrustedMs now_ms,
                                  std::span<const Bytes> blocks, const CatalogReader& catalog,
                                  const PayloadFacts& payloads, Touched& touched);
  /// Refusals that come before the sequence rule: unknown or revoked principal.
  std::optional<Refusal> check_signer(PrincipalId principal) const;
  /// What an exact retry must still hold now, before its original receipt is
  /// returned: for effect evidence, the signer's current effect permission (decision 46).
  std::optional<Refusal> recheck_retry(const Request& request) const;

  Result<QueryResult, Refusal> answer(const Query& query, TrustedMs now_ms, const CatalogReader& catalog) const;

  /// The bits `principal` holds at `target` now: those of its current grants
  /// that cover the target, within its PID scope (decision 25). Every command
  /// and query asks this, so PID scope applies in this one place: a
  /// PID-scoped principal reaches its own PID and the resources that PID is
  /// associated with or owns, never the realm as a whole nor another PID.
  std::uint64_t rights(PrincipalId principal, const Scope& target) const;

  const Genesis& genesis() const { return genesis_; }
  const Head& head() const { return head_; }
  const std::map<PrincipalId, PrincipalRecord>& principals() const { return principals_; }
  const PrincipalRecord* principal(PrincipalId id) const;
  const RoleRecord* role(Id id) const;
  const GrantRecord* grant(Id id) const;
  const std::set<std::pair<PrincipalId, Id>>& credentials() const { return credentials_; }
  const ResourceRecord* resource(ResourceId id) const;
  /// The process as it stands, read from the record source when not resident;
  /// valid until the next decide() or answer().
  const ProcessRecord* process(Pid pid) const;
  const ViewRecord* view(Id id) const;
  /// Outputs, effects and payloads as they stand, read from the record
  /// source when not resident (decision 170); valid until the next decide() or answer().
  const OutputRecord* output(Id id) const;
  const EffectRecord* effect(Id id) const;
  const PayloadRecord* payload(Id id) const;
  const RuntimeRecord* runtime(Pid pid) const;
  const Association* association(Pid pid, Id revision) const;
  Capabilities capabilities() const;

  /// Termination fences an effect intent not yet attempted: why an attempt of
  /// `effect` would be refused now because its caller is retired (decision 60).
  /// The attempt verb asks this of every unattempted intent; an intent already
  /// attempted keeps its executor and deadline whatever becomes of its caller.
  std::optional<Refusal> termination_fence(const EffectInfo& effect, TrustedMs now_ms) const;
  /// Why `caller` may not read `resource`'s entries now: inspect and read on
  /// it, within its PID scope, and the resource's lifetime (decision 27). A
  /// snapshot asks this at every read (decision 72).
  std::optional<Refusal> check_readable(PrincipalId caller, ResourceId resource, TrustedMs now_ms) const {
    return check_resource(caller, resource, kInspect | kRead, now_ms);
  }
  /// The final authority-tail fence: the authority has not moved since `checked_at`.
  std::optional<Refusal> fence(Position checked_at) const;
  /// A filtered page examines at most this many candidates, so a page costs the
  /// same however much is hidden; it may then be empty with a cursor.
  static constexpr std::size_t kScanBudget = 64;

  /// Whether the effect's caller is terminal (retired, or gone): the one rule
  /// behind the fence, cancel_effect and the cancellable listing.
  bool caller_terminal(const EffectInfo& effect, TrustedMs now_ms) const;

 private:
  /// One decision's context for the state commands (resources.cc, processes.cc).
  struct Step {
    PrincipalId caller;
    TrustedMs now_ms;
    std::span<const Bytes> blocks;
    const CatalogReader& catalog;
    Touched& touched;
    Position position;  // the position this decision will take
    const PayloadFacts& payloads;
  };
  /// An administration command (one with expected_revision): authority.cc.
  template <typename C> Result<Outcome, Refusal> administer(PrincipalId caller, const C& command, Touched& touched);
  Result<Outcome, Refusal> apply(const CreateResource& op, Step& step);
  Result<Outcome, Refusal> apply(const RetireResource& op, Step& step);
  Result<Outcome, Refusal> apply(const CreateProcess& op, Step& step);
  Result<Outcome, Refusal> apply(const Associate& op, Step& step);
  Result<Outcome, Refusal> apply(const Initialize& op, Step& step);
  Result<Outcome, Refusal> apply(const Own& op, Step& step);
  Result<Outcome, Refusal> apply(const Send& op, Step& step);
  Result<Outcome, Refusal> apply(const Turn& op, Step& step);
  Result<Outcome, Refusal> apply(const FailTurn& op, Step& step);
  Result<Outcome, Refusal> apply(const Retry& op, Step& step);
  Result<Outcome, Refusal> apply(const Suspend& op, Step& step);
  Result<Outcome, Refusal> apply(const Resume& op, Step& step);
  Result<Outcome, Refusal> apply(const Deliver& op, Step& step);
  // Workers that fail over, processes that end (workers.cc).
  Result<Outcome, Refusal> apply(const RotateWorker& op, Step& step);
  Result<Outcome, Refusal> apply(const Terminate& op, Step& step);
  Result<Outcome, Refusal> apply(const Spawn& op, Step& step);
  /// Why `worker` may not take `process` over at `generation` (rotate_worker, activate).
  std::optional<Refusal> check_takeover(const ProcessRecord& process, PrincipalId worker, Id generation,
                                        TrustedMs now_ms) const;
  /// Why `worker` may not take over `pid` by rotation, the process's rules aside.
  std::optional<Refusal> check_rotatable_worker(const RotateWorker& op) const;
  /// Names `resource` as `name` for `pid` at the next association revision.
  Id add_association(Pid pid, const Name& name, ResourceId resource, Step& step);
  // Effects to closure (effects.cc, decisions 43-49).
  Result<Outcome, Refusal> apply(const AttemptEffect& op, Step& step);
  Result<Outcome, Refusal> apply(const ObserveEffect& op, Step& step);
  Result<Outcome, Refusal> apply(const CloseEffect& op, Step& step);
  Result<Outcome, Refusal> apply(const CancelEffect& op, Step& step);
  Result<Outcome, Refusal> apply(const CancelOutput& op, Step& step);
  Result<Outcome, Refusal> apply(const RecordRetirement& op, Step& step);
  // Checkpoints and the history floor (history.cc).
  Result<Outcome, Refusal> apply(const Checkpoint& op, Step& step);
  Result<Outcome, Refusal> apply(const AdvanceFloor& op, Step& step);
  // Payloads (payloads.cc, decisions 84-86).
  Result<Outcome, Refusal> apply(const DeclarePayload& op, Step& step);
  Result<Outcome, Refusal> apply(const PayloadReady& op, Step& step);
  Result<Outcome, Refusal> apply(const RetirePayload& op, Step& step);
  Result<Outcome, Refusal> apply(const PayloadDeleted& op, Step& step);
  // Runtime binding (runtime.cc, decisions 120-129).
  Result<Outcome, Refusal> apply(const RuntimeIntent& op, Step& step);
  Result<Outcome, Refusal> apply(const RuntimeObserve& op, Step& step);
  Result<Outcome, Refusal> apply(const RuntimeUpgrade& op, Step& step);
  Result<Outcome, Refusal> apply(const Activate& op, Step& step);
  /// Why `pid` may not be run by direct own or rotate_worker: it is bound (decision 122).
  std::optional<Refusal> check_unbound(Pid pid) const;
  /// Why a suspended `pid` may not resume: its binding's provider is not observed stopped (decision 126).
  std::optional<Refusal> check_provider_stopped(Pid pid) const;
  /// Why `worker` may not be bound to `pid` or activated there: the worker rules of rotate_worker.
  std::optional<Refusal> check_bindable_worker(PrincipalId worker, Pid pid) const;
  RuntimeChanged runtime_changed(const RuntimeInfo& r) const;
  // Blocks (blocks.cc, decisions 100-109).
  Result<Outcome, Refusal> apply(const RetireBlock& op, Step& step);
  Result<Outcome, Refusal> apply(const DeleteBlock& op, Step& step);
  /// A block whose next step the caller may take: its resource is writable
  /// by the caller and live, the block is recorded, and the caller
  /// administers its owning process.
  Result<BlockInfo, Refusal> owned_block(ResourceId resource, const EntryKey& name, const Step& step) const;
  /// A payload whose next step the caller may record: it exists, the caller
  /// is its publisher and holds execute at its PID now.
  Result<PayloadInfo*, Refusal> published_payload(Id payload, const Step& step);
  // Storage maintenance (storage.cc, decisions 140-149).
  Result<Outcome, Refusal> apply(const StorageFence& op, Step& step);
  Result<Outcome, Refusal> apply(const StorageCompact& op, Step& step);
  Result<Outcome, Refusal> apply(const PreparedTurn& op, Step& step);
  /// Why `caller` may not maintain storage: realm_control at realm scope, now.
  std::optional<Refusal> check_storage_admin(PrincipalId caller) const;
  /// Why `leaf` names nothing stored.
  std::optional<Refusal> check_leaf(const StorageLeaf& leaf, const CatalogReader& catalog) const;
  void purge_past_grace(Step& step);  // decision 180
  /// Counts the keys an accepted decision wrote into each leaf, and resets
  /// the leaf it relocated, into needs_ and touched.needs (decision 183).
  void note_needs(Touched& touched);
  // Collection (collection.cc, decisions 110-117, 186-187): one kind each; every gate before any removal.
  Result<Outcome, Refusal> apply(const Collect& op, Step& step);
  Result<Outcome, Refusal> collect_output(ProcessRecord& p, Id output, Step& step);
  Result<Outcome, Refusal> collect_effect(ProcessRecord& p, Id effect, Step& step);
  Result<Outcome, Refusal> collect_payload(ProcessRecord& p, Id payload, Step& step);
  Result<Outcome, Refusal> collect_resource(ProcessRecord& p, ResourceId resource, Step& step);
  Result<Outcome, Refusal> collect_process(ProcessRecord& p, Step& step);
  /// Why collect would refuse `r` of `p` now, or the process `p` itself; the
  /// listing for the maintenance process asks the same (decision 155).
  std::optional<Refusal> resource_gate(const ProcessRecord& p, const ResourceRecord& r, TrustedMs now_ms) const;
  std::optional<Refusal> process_gate(const ProcessRecord& p) const;
  void remove_output(Id output, Step& step);
  void remove_effect(Id effect, Step& step);
  void remove_payload(Id payload, Step& step);
  void remove_view(Id view, Step& step);
  void detach(std::pair<Pid, Id> association, Step& step);  // (pid, association revision)
  /// Realm-wide control over history: realm_control, and the genesis opt-in.
  std::optional<Refusal> check_history_control(PrincipalId caller) const;
  /// SHA-256 of the published state as it stands: the head and every record
  /// recovery reads, table by table in key order, each in its canonical JSON.
  Digest roots() const;
  /// process() for changing it (a decision's): the caller stages it through Touched.
  ProcessRecord* process_mut(Pid pid) { return const_cast<ProcessRecord*>(process(pid)); }
  /// Drops the resident process records once they exceed kResidentProcesses:
  /// everything decided is staged by now, so the source holds it.
  void bound_resident() const;
  /// Every process in PID order after `after`, as it stands, until `visit` returns false.
  void visit_processes(Pid after, const std::function<bool(const ProcessRecord&)>& visit) const;
  /// A stored record met by a decision or query that does not decode (decision 157).
  void note_corrupt(CorruptRecord corrupt) const;
  /// The record `id` of `cache`'s table, resident or read from the source (decisions 170, 175).
  template <typename T, typename Key> const T* stored(Resident<T, Key>& cache, char table, const Key& id) const;
  ResourceRecord* resource_mut(ResourceId id) { return const_cast<ResourceRecord*>(resource(id)); }
  RuntimeRecord* runtime_mut(Pid pid) { return const_cast<RuntimeRecord*>(runtime(pid)); }
  OutputRecord* output_mut(Id id) { return const_cast<OutputRecord*>(output(id)); }
  EffectRecord* effect_mut(Id id) { return const_cast<EffectRecord*>(effect(id)); }
  PayloadRecord* payload_mut(Id id) { return const_cast<PayloadRecord*>(payload(id)); }
  /// Every record of `table` in id order after `after`, as it stands, until
  /// `visit` returns false (from storage: only what is staged; a decision that
  /// changed records of the table does not ask).
  template <typename T, typename Key> void visit_stored(Resident<T, Key>& cache, char table, Key after,
                                          const std::function<bool(const T&)>& visit) const;
  // The stored indexes (decision 170): rows keyed by ids, read through the
  // source, with the decision's own changes (rows_) over them.
  void put_row(std::string key, bool present);
  /// The keys of rows under `prefix` after `after`, in key order, until `visit` returns false.
  void visit_rows(const std::string& prefix, const std::string& after,
                  const std::function<bool(std::string_view)>& visit) const;
  /// The record ids (each row's last id) under `prefix` after `after`, until `visit` returns false.
  void visit_ids(const std::string& prefix, Id after, const std::function<bool(Id)>& visit) const;
  std::optional<Id> first_id(const std::string& prefix) const;
  /// first_id of a name's or a (resource, pid)'s association rows, answered
  /// from first_listed_ when resident (decision 177): what every turn asks.
  std::optional<Id> first_listed(const std::string& prefix) const;
  /// Forgets the answer kept for the prefix of `row` (a row is its prefix and one id).
  void forget_listed(const std::string& row) const;
  bool has_row(const std::string& key) const;
  /// The oldest pending output of the route (source, destination), none when
  /// it is empty: first_id of its kRoutes rows, answered from route_heads_
  /// when resident (decision 174).
  std::optional<Id> route_head(Pid source, Pid destination) const;
  /// Keeps route_heads_ exact as a decision changes a route's rows.
  void set_route_head(Pid source, Pid destination, std::optional<Id> head);
  /// The first `limit` ids under `prefix`.
  std::vector<Id> first_ids(const std::string& prefix, std::size_t limit = SIZE_MAX) const;
  /// The PIDs associated with `resource`, each once, in PID order (layout::kAssociatedBy).
  std::vector<Pid> associated_pids(ResourceId resource) const;
  /// Its associations, (pid, revision) in that order: every one, or those of one PID.
  std::vector<std::pair<Pid, Id>> associations_with(ResourceId resource, std::optional<Pid> pid = std::nullopt) const;

  // Reads (resources.cc, processes.cc): each checks authority before reading and fences after.
  struct ReadCtx {
    PrincipalId caller;
    TrustedMs now_ms;
    const CatalogReader& catalog;
  };
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListResources& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListAssociations& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListEntries& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ReadEntries& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const AssociationLookup& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ReadAccess& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ReadBlock& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ProcessRead& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListProcesses& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const EffectRead& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListEffects& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListRoutes& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListEnded& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const CheckpointQuery& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const PayloadRead& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const RuntimeQuery& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const BlockRead& q) const;
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ReadSegment& q) const;      // segments.cc
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const ListCollectable& q) const;  // collection.cc
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const StorageQuery& q) const;           // storage.cc
  Result<QueryResult, Refusal> read(const ReadCtx& ctx, const CompactionNeedsQuery& q) const;   // storage.cc
  /// Why a continuation at `cut` may not go on, given where its catalog last changed (decision 6).
  std::optional<Refusal> stale_cut(Position cut, Position catalog_position) const;

  // The rules shared by commands and reads.
  /// The bits of `principal`'s current grants that cover `scope`, PID scope aside (rights() applies it).
  std::uint64_t granted(PrincipalId principal, const Scope& scope) const;
  /// Whether a principal scoped to `pid` reaches `target`.
  bool reaches(Pid pid, const Scope& target) const;
  /// A process's metadata: inspect or execute at its PID (decision 25).
  bool may_read_metadata(PrincipalId caller, Pid pid) const;
  std::optional<Refusal> check_resource(PrincipalId caller, ResourceId resource, std::uint64_t wanted, TrustedMs now_ms) const;
  /// Which basis an entry read selects: the resource record, the revision to read and the view.
  struct Selected {
    const ResourceRecord* resource;
    Revision revision;
    std::optional<Id> view;
  };
  Result<Selected, Refusal> select(const ReadCtx& ctx, ResourceId resource, std::optional<Revision> revision,
                                   std::optional<Id> view) const;
  Result<Selected, Refusal> select(const ReadCtx& ctx, const Basis& basis) const;
  bool alive(const ResourceRecord& r, TrustedMs now_ms) const;
  bool retired(const ProcessRecord& p, TrustedMs now_ms) const;
  ProcessState state_of(const ProcessRecord& p, TrustedMs now_ms) const;
  /// The state the last decision left, before trusted time or dependencies judge it.
  static ProcessState recorded_state(const ProcessRecord& p);
  std::optional<Refusal> check_required(const ProcessRecord& p, TrustedMs now_ms) const;
  /// Whether one of `p`'s required names is associated with `resource`.
  bool requires_resource(const ProcessRecord& p, ResourceId resource) const;
  /// Initialized, neither retired nor fenced, and owned or holding admitted input (decision 36a).
  bool active(const ProcessRecord& p, TrustedMs now_ms) const;
  /// Retiring `resource` changes the required topology of the processes that
  /// require it: refused while one of them, or one of its borrowers, is active.
  std::optional<Refusal> check_quiescent(ResourceId resource, TrustedMs now_ms) const;
  /// Why a process may not declare `required` names: over the node's budget (decision 156).
  std::optional<Refusal> check_required_budget(std::size_t required) const {
    if (required <= budgets_.required_resources) return std::nullopt;
    return Refusal{Reason::kDependencyBudget, std::to_string(required) + " required names, over the node's budget of " +
                                                  std::to_string(budgets_.required_resources)};
  }
  std::optional<Refusal> check_executor(PrincipalId caller, const ProcessRecord& p, Id generation, TrustedMs now_ms) const;
  // The effect rules (effects.cc).
  std::optional<Refusal> check_effect(const EffectIntent& effect, Pid pid, TrustedMs now_ms) const;
  /// Records a turn's checked intent as authorized at this decision; its id.
  Id authorize_effect(Pid pid, const EffectIntent& intent, Step& step);
  /// A pending output the caller may resolve: it exists, the caller holds
  /// courier at its destination, and it is not resolved (deliver, cancel_output).
  Result<OutputRecord*, Refusal> resolvable_output(Id output, PrincipalId caller);
  /// Why `out` may not be resolved yet: an older output of its route is unresolved.
  std::optional<Refusal> route_order(const OutputRecord& out) const;
  /// A stored effect a command may act on: it exists and its record is consistent.
  Result<EffectInfo*, Refusal> open_effect(Id effect);
  /// Whether the caller may read `pid`'s effects: inspect, or effect, at the PID.
  bool may_read_effects(PrincipalId caller, Pid pid) const;
  /// pid_admin and effect at the effect's process: who may cancel, or close by
  /// deadline, or abandon an orphaned attempt.
  bool administers_effect(PrincipalId caller, const EffectInfo& e) const;
  /// Whether a listing with `filter` shows `e` now.
  bool shown(const EffectInfo& e, EffectFilter filter, TrustedMs now_ms) const;
  void record_closure(EffectInfo& e, ClosureKind kind, const EffectStep& by, std::optional<TrustedMs> trusted_lower_bound_ms);
  const Association* associated(Pid pid, ResourceId resource) const;
  const Association* associated(Pid pid, std::string_view name) const;
  /// A process that exists, is not retired, and on which the caller holds `needs`.
  /// `pid`, known and with `needs` at it for the caller; retired or not.
  Result<ProcessRecord*, Refusal> known_process(Pid pid, const Step& step, Permission needs);
  /// The same, and not retired.
  Result<ProcessRecord*, Refusal> live_process(Pid pid, const Step& step, Permission needs);

  // Routes and ended processes: the maintenance process's work (maintenance.cc, decisions 50-56).
  /// Whether `source`'s pending outputs are fenced: it is retired now, other
  /// than by a dependency's end (whose finished turns' outputs still go, decision 10).
  bool terminated(const ProcessRecord& source, TrustedMs now_ms) const;
  /// How `p` has ended without a command, judged now; null while it has not.
  std::optional<Ending> ending_of(const ProcessRecord& p, TrustedMs now_ms) const;
  /// A new pending output, at the tail of its route.
  void add_pending(OutputRecord output, Position position);
  /// Resolves the head of its route (delivered, disposed or cancelled) and releases the route.
  void resolve(OutputRecord& output, OutputState state, Position position);
  /// The one place a process's retirement is recorded: retired, its unconsumed
  /// inputs counted cancelled, its owner gone; the ended-process index follows.
  Id retire_process(ProcessRecord& p, std::optional<Ending> ending, Step& step);  // returns the inputs it cancelled
  /// Whether `p` may have ended by what is recorded (an index of candidates, judged when listed).
  bool may_have_ended(const ProcessRecord& p) const;
  void refresh_ended(Pid pid, Step& step);
  /// refresh_ended for every process associated with `resource`.
  void refresh_requiring(ResourceId resource, Step& step);

  Result<Outcome, Refusal> apply(PrincipalId caller, const CreatePrincipal& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const CreateRole& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const BindCredential& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const UnbindCredential& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const Grant& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const RevokeGrant& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const RevokePrincipal& op, Touched& touched);
  Result<Outcome, Refusal> apply(PrincipalId caller, const ReplaceGrant& op, Touched& touched);
  Id add_grant(Id role, const Scope& scope, Permissions permissions, Touched& touched);
  /// A new private role for `principal`, bound to it, holding one grant: (role, grant).
  std::pair<Id, Id> add_private_role(PrincipalId principal, const Scope& scope, Permissions permissions, Touched& touched);
  template <typename Map> static const typename Map::mapped_type* find(const Map& map, const typename Map::key_type& key) {
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  }

  // Every table below that recovery reads is also in roots() (history.cc).
  Genesis genesis_;
  Head head_;
  std::map<PrincipalId, PrincipalRecord> principals_;  // every subject ever allocated, revoked ones included
  std::map<Id, RoleRecord> roles_;
  std::map<Id, GrantRecord> grants_;
  std::set<std::pair<PrincipalId, Id>> credentials_;  // (principal, role)
  std::set<std::pair<Id, Id>> grants_by_role_;  // (role, grant), derived from grants_
  // Processes are a bounded cache over source_ (decision 130): resident ones
  // and those a decision is changing, never a complete list; least recently
  // used first out (decision 158). So are resources, associations, views and
  // runtime bindings (decision 175), whose indexes - resource names, lifetime
  // owners, associations by PID, name and resource, views by PID and
  // resource - are stored rows like those over outputs (layout.h).
  mutable Resident<ProcessRecord, Pid> processes_;
  mutable Resident<ResourceRecord, ResourceId> resources_;
  mutable Resident<Association, std::pair<Pid, Id>> associations_;  // (pid, association revision)
  mutable Resident<ViewRecord> views_;
  mutable Resident<RuntimeRecord, Pid> runtime_;  // PID -> its binding, kept for good once bound
  // A resource collection's progress through its entries (decision 188): the
  // last key a collect removed and the revision it made. At that revision no
  // key up to it is live, so the next command's scan starts past it; a hint
  // only (the outcome is the same without it), dropped with the resident
  // records, so a restart scans from the first key once.
  std::map<ResourceId, std::pair<Revision, EntryKey>> collect_after_;
  std::uint64_t collection_keys_visited_ = 0;  // decision 191
  const RecordSource* source_ = nullptr;
  std::size_t resident_limit_ = kResidentProcesses;
  DependencyBudgets budgets_;
  // A corrupt stored record met by the decision or query under way (decision
  // 132), and whether that decision had changed anything by then.
  mutable std::optional<CorruptRecord> corrupt_;
  mutable bool corrupt_after_change_ = false;
  const Touched* deciding_ = nullptr;
  bool failed_closed_ = false;
  // Outputs, effects and payloads are bounded caches over source_, as
  // processes are (decision 170); the indexes over them are stored tables
  // (layout::kRoutes and the rest), read through source_. rows_ holds the
  // rows the decision under way changed (true: present), moved into its
  // Touched as it is accepted; without a source it is the whole index.
  mutable Resident<OutputRecord> outputs_;
  mutable Resident<EffectRecord> effects_;
  mutable Resident<PayloadRecord> payloads_;
  std::map<std::string, bool> rows_;
  // Each route's head (none: empty) as decided so far, bounded like the
  // records (decision 174): what every published output asks. A route the
  // decision under way changed is listed in routes_changed_ and forgotten if
  // the decision is refused, as rows_ is dropped.
  mutable Resident<Id, std::pair<Pid, Pid>> route_heads_;
  std::vector<std::pair<Pid, Pid>> routes_changed_;
  // first_listed's answers by prefix (decision 177). A row is its prefix and
  // one id, so put_row forgets the prefix of every row it changes, and a
  // refused decision forgets those of the rows it dropped.
  mutable Resident<Id, std::string> first_listed_;
  // The positions are where each listing last changed (cuts, decision 6),
  // the head's position after a restart, which only expires more.
  Position routes_position_{};
  std::set<Pid> may_have_ended_;  // PIDs: suspended, or a required dependency recorded as ended
  Position ended_position_{};
  // Compaction needs (decision 183): leaf record key -> keys written into the
  // leaf since its last relocation, at most kNeedsBound leaves, stored as
  // layout::need rows by the decisions that change them and read at start;
  // by_need_ orders them (~need, key): the most needy first.
  std::map<std::string, Id> needs_;
  std::set<std::pair<Id, std::string>> by_need_;
};

}  // namespace cowboy::transit::node
