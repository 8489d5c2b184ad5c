// Transit v1 state types: resources and their entries, processes with their
// mailboxes, turns, views and outputs, and the bounded catalog pages that
// read them (docs/transit.md, decisions 6, 10 and 24-38). Same conventions as types.h:
// one field list per type, declaration order is wire order.
#pragma once

#include "transit/contract/values.h"

namespace cowboy::transit {

// ---- bounds (per operation, not per catalog) ---------------------------------
inline constexpr std::size_t kPageRecords = 8;
inline constexpr std::size_t kRequiredNames = 4;
inline constexpr std::size_t kTurnMutations = 4;
inline constexpr std::size_t kTurnBlocks = 16;
inline constexpr std::size_t kTurnBlockBytes = 128 * 1024;
inline constexpr std::size_t kBlockBytes = 64 * 1024;
inline constexpr std::size_t kTurnViews = 4;
inline constexpr std::size_t kTurnOutputs = 4;

using Name = Text<1, 32>;           // resource and association names
using EntryKey = Hex<32, 1>;        // 1-32 bytes
using EntryValue = Hex<256>;        // at most 256 bytes
using InputValue = Hex<256>;        // a mailbox input or an output

// ---- commands ----------------------------------------------------------------

/// A resource at revision 1 with no entries. `owner` is its lifetime owner:
/// when that process retires, the resource's lifetime ends. Its name stays
/// reserved forever, retired or not.
struct CreateResource {
  static constexpr std::string_view kName = "create_resource";
  Name name;
  std::optional<Pid> owner;
  bool operator==(const CreateResource&) const = default;
};
template <typename V> void fields(V& v, CreateResource& t) { v("name", t.name)("owner", t.owner); }

struct RetireResource {
  static constexpr std::string_view kName = "retire_resource";
  ResourceId resource{};
  bool operator==(const RetireResource&) const = default;
};
template <typename V> void fields(V& v, RetireResource& t) { v("resource", t.resource); }

/// A process, uninitialized, declaring the association names it needs.
/// `allow_collection`: opts into working-catalog collection, recorded now
/// since it cannot be given after admission (collection itself is not built).
struct CreateProcess {
  static constexpr std::string_view kName = "create";
  Pid pid{};
  List<Name, kRequiredNames> required;
  bool allow_collection = false;
  bool operator==(const CreateProcess&) const = default;
};
template <typename V> void fields(V& v, CreateProcess& t) {
  v("pid", t.pid)("required", t.required)("allow_collection", t.allow_collection);
}

/// Names `resource` as `name` for `pid`; the association gets the next association revision.
struct Associate {
  static constexpr std::string_view kName = "associate";
  Pid pid{};
  Name name;
  ResourceId resource{};
  bool operator==(const Associate&) const = default;
};
template <typename V> void fields(V& v, Associate& t) { v("pid", t.pid)("name", t.name)("resource", t.resource); }

/// initialize, own and resume: each fences the process at `generation`.
struct Initialize {
  static constexpr std::string_view kName = "initialize";
  Pid pid{};
  Id generation = 0;
  bool operator==(const Initialize&) const = default;
};
template <typename V> void fields(V& v, Initialize& t) { v("pid", t.pid)("generation", t.generation); }

struct Own {
  static constexpr std::string_view kName = "own";
  Pid pid{};
  Id generation = 0;
  bool operator==(const Own&) const = default;
};
template <typename V> void fields(V& v, Own& t) { v("pid", t.pid)("generation", t.generation); }

struct Send {
  static constexpr std::string_view kName = "send";
  Pid pid{};
  InputValue value;
  bool operator==(const Send&) const = default;
};
template <typename V> void fields(V& v, Send& t) { v("pid", t.pid)("value", t.value); }

/// null `value` deletes the key.
struct EntryMutation {
  static constexpr std::string_view kName = "EntryMutation";
  EntryKey key;
  std::optional<EntryValue> value;
  bool operator==(const EntryMutation&) const = default;
};
template <typename V> void fields(V& v, EntryMutation& t) { v("key", t.key)("value", t.value); }

/// An immutable block's descriptor; its body travels after the envelope
/// (decision 31) and is not in the journal.
struct BlockMutation {
  static constexpr std::string_view kName = "BlockMutation";
  EntryKey name;
  Id length = 0;
  Digest sha256{};
  bool operator==(const BlockMutation&) const = default;
};
template <typename V> void fields(V& v, BlockMutation& t) { v("name", t.name)("length", t.length)("sha256", t.sha256); }

struct OutputProposal {
  static constexpr std::string_view kName = "OutputProposal";
  Pid destination{};
  InputValue value;
  bool operator==(const OutputProposal&) const = default;
};
template <typename V> void fields(V& v, OutputProposal& t) { v("destination", t.destination)("value", t.value); }

/// `observation_budget`: how many results the executor may record, 1..16
/// (decision 44); the budget-th non-final one closes the effect.
struct EffectIntent {
  static constexpr std::string_view kName = "EffectIntent";
  PrincipalId executor{};
  std::optional<TrustedMs> deadline_ms;
  Hex<256> intent;
  Id observation_budget = 1;
  bool operator==(const EffectIntent&) const = default;
};
template <typename V> void fields(V& v, EffectIntent& t) {
  v("executor", t.executor)("deadline_ms", t.deadline_ms)("intent", t.intent)("observation_budget", t.observation_budget);
}

/// One bounded unit of work, published as one decision or not at all.
/// `input`: the mailbox head it consumes (null: none). `resource`: the one
/// writable associated resource, at `resource_revision` when given. `views`:
/// associated resources whose state after the turn is retained as views.
struct Turn {
  static constexpr std::string_view kName = "turn";
  Pid pid{};
  Id generation = 0;
  std::optional<Id> input;
  std::optional<ResourceId> resource;
  std::optional<Revision> resource_revision;
  List<EntryMutation, kTurnMutations> mutations;
  List<BlockMutation, kTurnBlocks> blocks;
  List<ResourceId, kTurnViews> views;  // the resources viewed
  List<OutputProposal, kTurnOutputs> outputs;
  std::optional<EffectIntent> effect;
  bool operator==(const Turn&) const = default;
};
template <typename V> void fields(V& v, Turn& t) {
  v("pid", t.pid)("generation", t.generation)("input", t.input)("resource", t.resource)(
      "resource_revision", t.resource_revision)("mutations", t.mutations)("blocks", t.blocks)("views", t.views)(
      "outputs", t.outputs)("effect", t.effect);
}

/// The handler failed on `input` (the head): the process blocks on it.
struct FailTurn {
  static constexpr std::string_view kName = "fail_turn";
  Pid pid{};
  Id generation = 0;
  Id input = 0;
  Text<0, 256> reason;
  bool operator==(const FailTurn&) const = default;
};
template <typename V> void fields(V& v, FailTurn& t) {
  v("pid", t.pid)("generation", t.generation)("input", t.input)("reason", t.reason);
}

struct Retry {
  static constexpr std::string_view kName = "retry";
  Pid pid{};
  Id expected_generation = 0;
  Id failure_input = 0;
  bool operator==(const Retry&) const = default;
};
template <typename V> void fields(V& v, Retry& t) {
  v("pid", t.pid)("expected_generation", t.expected_generation)("failure_input", t.failure_input);
}

struct Suspend {
  static constexpr std::string_view kName = "suspend";
  Pid pid{};
  Id generation = 0;
  TrustedMs resume_by_ms{};
  bool operator==(const Suspend&) const = default;
};
template <typename V> void fields(V& v, Suspend& t) {
  v("pid", t.pid)("generation", t.generation)("resume_by_ms", t.resume_by_ms);
}

struct Resume {
  static constexpr std::string_view kName = "resume";
  Pid pid{};
  Id generation = 0;
  bool operator==(const Resume&) const = default;
};
template <typename V> void fields(V& v, Resume& t) { v("pid", t.pid)("generation", t.generation); }

/// A courier moves the oldest pending output of its route into the destination's mailbox.
struct Deliver {
  static constexpr std::string_view kName = "deliver";
  Id output = 0;
  bool operator==(const Deliver&) const = default;
};
template <typename V> void fields(V& v, Deliver& t) { v("output", t.output); }

// ---- receipts ------------------------------------------------------------------

struct ResourceCreated {
  static constexpr std::string_view kName = "resource_created";
  ResourceId resource{};
  Revision revision{};
  bool operator==(const ResourceCreated&) const = default;
};
template <typename V> void fields(V& v, ResourceCreated& t) { v("resource", t.resource)("revision", t.revision); }

struct ResourceRetired {
  static constexpr std::string_view kName = "resource_retired";
  ResourceId resource{};
  bool operator==(const ResourceRetired&) const = default;
};
template <typename V> void fields(V& v, ResourceRetired& t) { v("resource", t.resource); }

struct Associated {
  static constexpr std::string_view kName = "associated";
  Pid pid{};
  Id association_revision = 0;
  bool operator==(const Associated&) const = default;
};
template <typename V> void fields(V& v, Associated& t) {
  v("pid", t.pid)("association_revision", t.association_revision);
}

/// create, initialize, own, fail_turn, retry, suspend, resume.
struct ProcessChanged {
  static constexpr std::string_view kName = "process_changed";
  Pid pid{};
  Id generation = 0;
  bool operator==(const ProcessChanged&) const = default;
};
template <typename V> void fields(V& v, ProcessChanged& t) { v("pid", t.pid)("generation", t.generation); }

struct Sent {
  static constexpr std::string_view kName = "sent";
  Pid pid{};
  Id input = 0;  // its place in the mailbox, from 1
  bool operator==(const Sent&) const = default;
};
template <typename V> void fields(V& v, Sent& t) { v("pid", t.pid)("input", t.input); }

struct TurnPublished {
  static constexpr std::string_view kName = "turn_published";
  Pid pid{};
  Id generation = 0;
  std::optional<Id> consumed;
  std::optional<ResourceId> resource;
  std::optional<Revision> revision;  // the written resource's new revision
  List<Id, kTurnViews> views;
  List<Id, kTurnOutputs> outputs;
  std::optional<Id> effect;
  bool operator==(const TurnPublished&) const = default;
};
template <typename V> void fields(V& v, TurnPublished& t) {
  v("pid", t.pid)("generation", t.generation)("consumed", t.consumed)("resource", t.resource)("revision", t.revision)(
      "views", t.views)("outputs", t.outputs)("effect", t.effect);
}

struct Delivered {
  static constexpr std::string_view kName = "delivered";
  Id output = 0;
  Pid pid{};
  std::optional<Id> input;  // null: the destination was retired, the output is disposed of
  bool operator==(const Delivered&) const = default;
};
template <typename V> void fields(V& v, Delivered& t) { v("output", t.output)("pid", t.pid)("input", t.input); }

// ---- queries ---------------------------------------------------------------------

/// A continuation: the cut (the first page's authority position) and where the
/// last page stopped. A first page may name its cut with `after` 0, before
/// every id (decision 40).
struct Cursor {
  static constexpr std::string_view kName = "Cursor";
  Position cut{};
  Id after = 0;  // a resource id, an association revision or a PID
  bool operator==(const Cursor&) const = default;
};
template <typename V> void fields(V& v, Cursor& t) { v("cut", t.cut)("after", t.after); }

/// `after` is the last key examined; empty: before the first key, which is
/// how a first page names its cut (decision 40).
struct EntryCursor {
  static constexpr std::string_view kName = "EntryCursor";
  Position cut{};
  Hex<32> after;
  bool operator==(const EntryCursor&) const = default;
};
template <typename V> void fields(V& v, EntryCursor& t) { v("cut", t.cut)("after", t.after); }

struct ListResources {
  static constexpr std::string_view kName = "list_resources";
  std::optional<Cursor> cursor;
  bool operator==(const ListResources&) const = default;
};
template <typename V> void fields(V& v, ListResources& t) { v("cursor", t.cursor); }

struct ListAssociations {
  static constexpr std::string_view kName = "list_associations";
  Pid pid{};
  std::optional<Cursor> cursor;
  bool operator==(const ListAssociations&) const = default;
};
template <typename V> void fields(V& v, ListAssociations& t) { v("pid", t.pid)("cursor", t.cursor); }

/// An entry read's one basis: the resource at its exact current revision, or a retained view.
struct CurrentBasis {
  static constexpr std::string_view kName = "current";
  ResourceId resource{};
  Revision revision{};
  bool operator==(const CurrentBasis&) const = default;
};
template <typename V> void fields(V& v, CurrentBasis& t) { v("resource", t.resource)("revision", t.revision); }

struct ViewBasis {
  static constexpr std::string_view kName = "view";
  Id view = 0;
  bool operator==(const ViewBasis&) const = default;
};
template <typename V> void fields(V& v, ViewBasis& t) { v("view", t.view); }

using Basis = std::variant<CurrentBasis, ViewBasis>;

/// A page of entries in key order; `key` (a direct lookup) and `cursor` are exclusive.
struct ListEntries {
  static constexpr std::string_view kName = "list_entries";
  Basis basis;
  std::optional<EntryKey> key;
  std::optional<EntryCursor> cursor;
  bool operator==(const ListEntries&) const = default;
};
template <typename V> void fields(V& v, ListEntries& t) { v("basis", t.basis)("key", t.key)("cursor", t.cursor); }

/// One to eight distinct keys of one resource, in one observation.
struct ReadEntries {
  static constexpr std::string_view kName = "read_entries";
  ResourceId resource{};
  std::optional<Revision> revision;
  std::optional<Id> view;
  Slots<EntryKey, kPageRecords> keys;
  bool operator==(const ReadEntries&) const = default;
};
template <typename V> void fields(V& v, ReadEntries& t) {
  v("resource", t.resource)("revision", t.revision)("view", t.view)("keys", t.keys);
}

struct AssociationLookup {
  static constexpr std::string_view kName = "association_lookup";
  Pid pid{};
  Name name;
  bool operator==(const AssociationLookup&) const = default;
};
template <typename V> void fields(V& v, AssociationLookup& t) { v("pid", t.pid)("name", t.name); }

struct ReadAccess {
  static constexpr std::string_view kName = "read_access";
  ResourceId resource{};
  bool operator==(const ReadAccess&) const = default;
};
template <typename V> void fields(V& v, ReadAccess& t) { v("resource", t.resource); }

/// A process's metadata and, when the caller may execute it now, its next input.
struct ProcessRead {
  static constexpr std::string_view kName = "process";
  Pid pid{};
  bool operator==(const ProcessRead&) const = default;
};
template <typename V> void fields(V& v, ProcessRead& t) { v("pid", t.pid); }

/// The processes the caller may inspect, in PID order, with their recorded metadata.
struct ListProcesses {
  static constexpr std::string_view kName = "list_processes";
  std::optional<Cursor> cursor;
  bool operator==(const ListProcesses&) const = default;
};
template <typename V> void fields(V& v, ListProcesses& t) { v("cursor", t.cursor); }

// ---- query results ------------------------------------------------------------------

struct ResourceInfo {
  static constexpr std::string_view kName = "ResourceInfo";
  ResourceId resource{};
  Name name;
  std::optional<Pid> owner;
  Revision revision{};
  bool retired = false;
  bool operator==(const ResourceInfo&) const = default;
};
template <typename V> void fields(V& v, ResourceInfo& t) {
  v("resource", t.resource)("name", t.name)("owner", t.owner)("revision", t.revision)("retired", t.retired);
}

struct Association {
  static constexpr std::string_view kName = "Association";
  Pid pid{};
  Name name;
  ResourceId resource{};
  Id revision = 0;  // the association revision
  bool operator==(const Association&) const = default;
};
template <typename V> void fields(V& v, Association& t) {
  v("pid", t.pid)("name", t.name)("resource", t.resource)("revision", t.revision);
}

struct Entry {
  static constexpr std::string_view kName = "Entry";
  EntryKey key;
  EntryValue value;
  Revision revision{};  // the resource revision that wrote it
  bool operator==(const Entry&) const = default;
};
template <typename V> void fields(V& v, Entry& t) { v("key", t.key)("value", t.value)("revision", t.revision); }

struct ResourcePage {
  static constexpr std::string_view kName = "resource_page";
  Position cut{};
  List<ResourceInfo, kPageRecords> items;
  std::optional<Cursor> cursor;  // null: the listing is complete
  bool operator==(const ResourcePage&) const = default;
};
template <typename V> void fields(V& v, ResourcePage& t) { v("cut", t.cut)("items", t.items)("cursor", t.cursor); }

struct AssociationPage {
  static constexpr std::string_view kName = "association_page";
  Position cut{};
  Pid pid{};
  List<Association, kPageRecords> items;
  std::optional<Cursor> cursor;
  bool operator==(const AssociationPage&) const = default;
};
template <typename V> void fields(V& v, AssociationPage& t) {
  v("cut", t.cut)("pid", t.pid)("items", t.items)("cursor", t.cursor);
}

struct EntryPage {
  static constexpr std::string_view kName = "entry_page";
  Position cut{};
  ResourceInfo resource;
  Revision revision{};  // the state read: the basis revision, or the view's
  std::optional<Id> view;
  List<Entry, kPageRecords> items;
  std::optional<EntryCursor> cursor;
  bool operator==(const EntryPage&) const = default;
};
template <typename V> void fields(V& v, EntryPage& t) {
  v("cut", t.cut)("resource", t.resource)("revision", t.revision)("view", t.view)("items", t.items)(
      "cursor", t.cursor);
}

struct EntryBatch {
  static constexpr std::string_view kName = "entry_batch";
  ResourceInfo resource;
  Revision revision{};
  std::optional<Id> view;
  Slots<Entry, kPageRecords> entries;  // slot i answers keys[i]; null: absent (or not asked)
  bool operator==(const EntryBatch&) const = default;
};
template <typename V> void fields(V& v, EntryBatch& t) {
  v("resource", t.resource)("revision", t.revision)("view", t.view)("entries", t.entries);
}

struct LookupResult {
  static constexpr std::string_view kName = "association";
  Pid pid{};
  Name name;
  std::optional<Association> association;  // null: absent or hidden, alike
  bool operator==(const LookupResult&) const = default;
};
template <typename V> void fields(V& v, LookupResult& t) { v("pid", t.pid)("name", t.name)("association", t.association); }

struct ResourceAccess {
  static constexpr std::string_view kName = "read_access";
  ResourceInfo resource;
  bool operator==(const ResourceAccess&) const = default;
};
template <typename V> void fields(V& v, ResourceAccess& t) { v("resource", t.resource); }

/// A process read's current state (decisions 32-36); `fenced`: a required
/// dependency is gone, so it cannot execute, though nothing has retired it yet.
enum class ProcessState : std::uint8_t { kUninitialized, kIdle, kOwned, kBlocked, kSuspended, kRetired, kFenced };
template <> struct EnumTraits<ProcessState> {
  static constexpr std::array<std::string_view, 7> kNames = {"uninitialized", "idle",    "owned", "blocked",
                                                             "suspended",     "retired", "fenced"};
};

/// disposed: delivered to a retired destination; cancelled: its source was terminated (decision 51).
enum class OutputState : std::uint8_t { kPending, kDelivered, kDisposed, kCancelled };
template <> struct EnumTraits<OutputState> {
  static constexpr std::array<std::string_view, 4> kNames = {"pending", "delivered", "disposed", "cancelled"};
};

struct Origin {
  static constexpr std::string_view kName = "Origin";
  std::optional<PrincipalId> principal;  // a send's signer, or an effect observation's executor
  std::optional<Id> output;     // a delivered output
  std::optional<Pid> source;     // ... and the process that produced it
  std::optional<Id> effect;     // an observation of the caller's effect (decision 44)
  bool operator==(const Origin&) const = default;
};
template <typename V> void fields(V& v, Origin& t) {
  v("principal", t.principal)("output", t.output)("source", t.source)("effect", t.effect);
}

struct Input {
  static constexpr std::string_view kName = "Input";
  Id input = 0;
  InputValue value;
  Origin origin;
  bool operator==(const Input&) const = default;
};
template <typename V> void fields(V& v, Input& t) { v("input", t.input)("value", t.value)("origin", t.origin); }

struct ProcessInfo {
  static constexpr std::string_view kName = "process";
  Pid pid{};
  Id generation = 0;
  ProcessState state = ProcessState::kUninitialized;
  std::optional<PrincipalId> owner;
  std::optional<Id> failure;  // the failed input a blocked process waits on
  std::optional<TrustedMs> resume_by_ms;
  List<Name, kRequiredNames> required;
  Id head = 1;  // the next input to consume
  Id tail = 0;  // the last input admitted
  Id cancelled = 0;
  std::optional<Input> input;  // released only to its current executor
  std::optional<Pid> parent = std::nullopt;  // the process that spawned it
  bool allow_collection = false;
  bool operator==(const ProcessInfo&) const = default;
};
template <typename V> void fields(V& v, ProcessInfo& t) {
  v("pid", t.pid)("generation", t.generation)("state", t.state)("owner", t.owner)("failure", t.failure)(
      "resume_by_ms", t.resume_by_ms)("required", t.required)("head", t.head)("tail", t.tail)(
      "cancelled", t.cancelled)("input", t.input)("parent", t.parent)("allow_collection", t.allow_collection);
}

/// A process as recorded: the state its last decision left, judged neither by
/// trusted time (an expired suspension still reads `suspended`, with its
/// `resume_by_ms` in the past) nor by its dependencies. Only the process read
/// judges readiness now (decision 41).
struct ProcessSummary {
  static constexpr std::string_view kName = "ProcessSummary";
  Pid pid{};
  Id generation = 0;
  ProcessState state = ProcessState::kUninitialized;
  std::optional<PrincipalId> owner;
  std::optional<Id> failure;
  std::optional<TrustedMs> resume_by_ms;
  List<Name, kRequiredNames> required;
  Id head = 1;
  Id tail = 0;
  Id cancelled = 0;
  std::optional<Pid> parent = std::nullopt;
  bool allow_collection = false;
  bool operator==(const ProcessSummary&) const = default;
};
template <typename V> void fields(V& v, ProcessSummary& t) {
  v("pid", t.pid)("generation", t.generation)("state", t.state)("owner", t.owner)("failure", t.failure)(
      "resume_by_ms", t.resume_by_ms)("required", t.required)("head", t.head)("tail", t.tail)(
      "cancelled", t.cancelled)("parent", t.parent)("allow_collection", t.allow_collection);
}

struct ProcessPage {
  static constexpr std::string_view kName = "process_page";
  Position cut{};
  List<ProcessSummary, kPageRecords> items;
  std::optional<Cursor> cursor;  // null: the listing is complete
  bool operator==(const ProcessPage&) const = default;
};
template <typename V> void fields(V& v, ProcessPage& t) { v("cut", t.cut)("items", t.items)("cursor", t.cursor); }

// read_block and its Block answer: blocks.h.

}  // namespace cowboy::transit
