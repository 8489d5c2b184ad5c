// What the client checks in every answer before handing it over
// (docs/transit.md, decisions 21 and 42): a receipt's outcome is of its
// command's kind and names what was asked; a query result answers the query
// asked, at the basis asked, in dense order, with continuations that advance,
// cuts no later than the response, and active resource metadata where the
// contract promises it.
#include "transit/client/checks.h"

#include "common/crypto.h"
#include "transit/client.h"
#include "transit/contract/operations.h"

namespace cowboy::transit {
namespace {

template <std::size_t N, std::size_t M> std::string_view bytes(const Hex<N, M>& k) {
  return std::string_view(reinterpret_cast<const char*>(k.value.data()), k.value.size());
}

using Problem = std::optional<std::string>;

template <typename Item, typename Key> Problem dense(const std::vector<Item>& items, std::optional<Key> after, auto key_of) {
  for (const auto& item : items) {
    const auto k = key_of(item);
    if (after && !(*after < k)) return std::string("page out of order or not after its cursor");
    after = k;
  }
  return std::nullopt;
}

template <typename C> Problem continuation(const std::optional<C>& asked, Position cut, const std::optional<C>& next,
                                          auto after_of) {
  if (asked && asked->cut != cut) return std::string("continuation at another cut");
  if (next && next->cut != cut) return std::string("cursor of another cut");
  if (asked && next && !(after_of(*asked) < after_of(*next))) return std::string("continuation does not advance");
  return std::nullopt;
}

// Ids and revisions start at 1; an association revision is allocated by one
// decision, so it is no later than the position it is read at.
Problem check_info(const ResourceInfo& r) {
  if (r.resource.value == 0 || r.revision.value == 0) return std::string("resource metadata with a zero id or revision");
  return std::nullopt;
}
Problem check_active(const ResourceInfo& r) {
  if (r.retired) return std::string("retired resource metadata where active metadata is promised");
  return check_info(r);
}
Problem check_association(const Association& a, Position position) {
  if (a.resource.value == 0 || a.revision == 0 || a.revision > position.value)
    return std::string("association with a zero resource or a revision after the response");
  return std::nullopt;
}

Problem check(const ListResources& q, const ResourcePage& page) {
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const ResourceInfo& r) { return r.resource.value; })) return p;
  for (const auto& r : page.items.items)
    if (auto p = check_info(r)) return p;
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().resource.value)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

Problem check(const ListAssociations& q, const AssociationPage& page) {
  if (page.pid != q.pid) return std::string("associations of another process");
  for (const auto& a : page.items.items)
    if (a.pid != q.pid) return std::string("association of another process");
    else if (auto p = check_association(a, page.cut)) return p;
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const Association& a) { return a.revision; })) return p;
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

Problem check(const ListProcesses& q, const ProcessPage& page) {
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const ProcessSummary& s) { return s.pid.value; })) return p;
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().pid.value)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

// Route heads in output order, each a pending route's with a publication no
// later than the page; ended processes in PID order (decisions 53, 54).
Problem check(const ListRoutes& q, const RoutePage& page, Position position) {
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const RouteHead& h) { return h.output; })) return p;
  for (const auto& h : page.items.items)
    if (h.output == 0 || h.pending == 0 || h.published_at.value == 0 || h.published_at > position)
      return std::string("a route head with a zero id or count, or published after the response");
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().output)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

Problem check(const ListEnded& q, const EndedPage& page) {
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const EndedProcess& e) { return e.pid.value; })) return p;
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().pid.value)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

// Collectable records (decision 155): in PID order after the cursor, a
// process named as its own record, the cursor past the page's last PID.
Problem check(const ListCollectable& q, const CollectablePage& page) {
  Id after = q.cursor ? q.cursor->after : 0;
  for (const auto& r : page.items.items) {
    if (r.pid.value == 0 || r.record == 0 || r.pid.value <= (q.cursor ? q.cursor->after : 0) || r.pid.value < after)
      return std::string("collectable records out of PID order or not after the cursor");
    if (r.kind == CollectKind::kProcess && r.record != r.pid.value)
      return std::string("a process listed as another record");
    after = r.pid.value;
  }
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().pid.value)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

Problem check_basis(const Basis& basis, const ResourceInfo& resource, Revision revision, std::optional<Id> view) {
  if (const auto* current = std::get_if<CurrentBasis>(&basis)) {
    if (resource.resource != current->resource || revision != current->revision || view)
      return std::string("entries of another resource or revision");
  } else if (view != std::get<ViewBasis>(basis).view) {
    return std::string("entries of another view");
  }
  return std::nullopt;
}

Problem check(const ListEntries& q, const EntryPage& page) {
  if (auto p = check_basis(q.basis, page.resource, page.revision, page.view)) return p;
  if (auto p = check_active(page.resource)) return p;
  for (const auto& e : page.items.items)
    if (e.revision > page.revision) return std::string("entry newer than the page's revision");
  if (q.key) {
    if (page.items.items.size() > 1 || (page.items.items.size() == 1 && page.items.items[0].key != *q.key) || page.cursor)
      return std::string("a key lookup answered with other entries");
    return std::nullopt;
  }
  const auto after = q.cursor ? std::optional<std::string_view>(bytes(q.cursor->after)) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const Entry& e) { return bytes(e.key); })) return p;
  return continuation(q.cursor, page.cut, page.cursor, [](const EntryCursor& c) { return bytes(c.after); });
}

// A segment (decisions 150-154): the basis asked, the index and count its
// cursor named, dense keys after the cursor's, a chain that is the one its
// items give, and exactly one of a continuation that carries that chain on
// or the evidence that closes the result with it.
Problem check(const ReadSegment& q, const Segment& s) {
  if (auto p = check_basis(q.basis, s.resource, s.revision, s.view)) return p;
  if (auto p = check_active(s.resource)) return p;
  const Id index = q.cursor ? q.cursor->index : 0;
  const Id before = q.cursor ? q.cursor->records : 0;
  if (s.index != index || s.records_before != before) return std::string("a segment at another index or count");
  if (q.cursor && s.cut != q.cursor->cut) return std::string("continuation at another cut");
  Digest chain = q.cursor ? q.cursor->chain : segment_origin(s.resource.resource, s.revision);
  for (const auto& e : s.items.items) {
    if (e.revision > s.revision) return std::string("entry newer than the segment's revision");
    chain = segment_link(chain, e);
  }
  if (chain != s.chain) return std::string("a segment whose chain is not its records'");
  const auto after = q.cursor ? std::optional<std::string_view>(bytes(q.cursor->after)) : std::nullopt;
  if (auto p = dense(s.items.items, after, [](const Entry& e) { return bytes(e.key); })) return p;
  const Id records = before + s.items.items.size();
  if (s.next.has_value() == s.complete.has_value()) return std::string("a segment with both or neither of next and complete");
  if (s.next) {
    const auto& n = *s.next;
    if (n.cut != s.cut || n.index != index + 1 || n.records != records || n.chain != chain)
      return std::string("a continuation that does not carry the segment on");
    if (!s.items.items.empty() && !(bytes(s.items.items.back().key) <= bytes(n.after)))
      return std::string("cursor behind its segment");
    if (after && !(*after < bytes(n.after))) return std::string("continuation does not advance");
  } else if (s.complete->segments != index + 1 || s.complete->records != records || s.complete->digest != chain) {
    return std::string("complete-result evidence that is not the segments'");
  }
  return std::nullopt;
}

Problem check(const ReadEntries& q, const EntryBatch& batch) {
  if (batch.resource.resource != q.resource) return std::string("entries of another resource");
  if (q.revision && batch.revision != *q.revision) return std::string("entries at another revision");
  if (batch.view != q.view) return std::string("entries through another view");
  if (!q.view && batch.revision != batch.resource.revision) return std::string("a current read not at the current revision");
  if (batch.revision > batch.resource.revision) return std::string("a view newer than its resource");
  if (auto p = check_active(batch.resource)) return p;
  for (std::size_t i = 0; i < kPageRecords; ++i) {
    const auto& asked = q.keys.items[i];
    const auto& got = batch.entries.items[i];
    if (!got) continue;
    if (!asked || got->key != *asked) return std::string("slot ") + std::to_string(i) + " answers another key";
    if (got->revision > batch.revision) return std::string("entry newer than the batch's revision");
  }
  return std::nullopt;
}

Problem check(const AssociationLookup& q, const LookupResult& r, Position position) {
  if (r.pid != q.pid || r.name != q.name) return std::string("lookup of another association");
  if (!r.association) return std::nullopt;
  if (r.association->pid != q.pid || r.association->name != q.name)
    return std::string("lookup answered with another association");
  return check_association(*r.association, position);
}

Problem check(const ReadAccess& q, const ResourceAccess& r) {
  if (r.resource.resource != q.resource) return std::string("access to another resource");
  return check_active(r.resource);
}

Problem check(const ProcessRead& q, const ProcessInfo& p) {
  if (p.pid != q.pid) return std::string("another process");
  if (p.input && p.input->input != p.head) return std::string("an input that is not the head");
  return std::nullopt;
}

// A block's body must be what its source says, whatever the node checked (decision 101).
Problem check(const ReadBlock& q, const Block& b) {
  if (b.name != q.name) return std::string("another block");
  if (const auto* current = std::get_if<CurrentBasis>(&q.basis);
      current && (b.resource != current->resource || b.revision > current->revision))
    return std::string("a block of another resource or revision");
  if (q.source && (b.revision != q.source->revision || b.sha256 != q.source->sha256))
    return std::string("a block of another source than the one asked");
  if (b.body.value.empty() || crypto::sha256(ByteView(b.body.value.data(), b.body.value.size())) != b.sha256)
    return std::string("a block body that does not match its SHA-256");
  return std::nullopt;
}

// A block record's state must fit its steps' positions and revisions (decisions 100, 105, 106).
Problem check(const BlockRead& q, const BlockInfo& b, Position position) {
  if (b.resource != q.resource || b.name != q.name) return std::string("another block than the one asked");
  if (b.length == 0 || b.length > kBlockBytes) return std::string("a block length outside its bounds");
  if (b.published_at.value == 0 || b.published_at > position) return std::string("a publication after its response's position");
  const bool retired = b.retired_at.has_value(), deleted = b.deleted_at.has_value();
  const bool steps_fit = [&] {
    switch (b.state) {
      case BlockState::kPublished: return !retired && !deleted && !b.retired_revision;
      case BlockState::kRetired: return retired && !deleted && b.retired_revision;
      case BlockState::kDeleted: return retired && deleted && b.retired_revision;
    }
    return false;
  }();
  if (!steps_fit) return std::string("a block state without its steps' positions, or with later ones");
  if (b.retired_revision && *b.retired_revision <= b.revision) return std::string("a block retired before its source");
  Position last = b.published_at;
  for (const auto& at : {b.retired_at, b.deleted_at})
    if (at) {
      if (*at <= last || *at > position) return std::string("block steps out of order");
      last = *at;
    }
  return std::nullopt;
}

// An effect record must be one the matrix allows, and no step of it later
// than the position it was read at (decision 47).
Problem check_effect(const EffectInfo& e, Position position) {
  if (auto p = effect_inconsistency(e)) return "an inconsistent effect: " + *p;
  const Position last = e.closure ? e.closure->step.position
                  : !e.observations.items.empty() ? e.observations.items.back().step.position
                  : e.attempt ? e.attempt->position
                              : e.authorization.position;
  if (last > position) return std::string("an effect step after the position it was read at");
  return std::nullopt;
}

Problem check(const EffectRead& q, const EffectInfo& e, Position position) {
  if (e.effect != q.effect) return std::string("another effect");
  return check_effect(e, position);
}

Problem check(const ListEffects& q, const EffectPage& page) {
  if (page.pid != q.pid || page.filter != q.filter) return std::string("a listing of another process or filter");
  for (const auto& e : page.items.items) {
    if (q.pid && e.pid != *q.pid) return std::string("an effect of another process");
    if (auto p = check_effect(e, page.cut)) return p;
    const bool open = e.phase != EffectPhase::kClosed;
    if ((q.filter == EffectFilter::kUnresolved || q.filter == EffectFilter::kOverdue) && !open)
      return std::string("a closed effect in a listing of open ones");
    if (q.filter == EffectFilter::kCancellable && e.phase != EffectPhase::kAuthorized)
      return std::string("an attempted or closed effect listed as cancellable");
  }
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const EffectInfo& e) { return e.effect; })) return p;
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().effect)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

// The floor is a checkpoint's position, so it is never above the latest one,
// and neither is after the position the status was read at.
Problem check(const CheckpointQuery&, const CheckpointStatus& s, Position position) {
  const Position latest = s.latest ? s.latest->position : Position{0};
  if (s.floor > latest || latest > position) return std::string("a floor above its latest checkpoint, or a checkpoint after the response");
  if (s.latest && latest.value == 0) return std::string("a checkpoint at position 0");
  return std::nullopt;
}

// Leased snapshots (decisions 70-78): a snapshot of the resource asked,
// pinned no later than the response, and entries of its captured revision
// only, in key order after where the read began.
Problem check_snapshot(const SnapshotInfo& s, Position position) {
  if (s.resource.value == 0 || s.revision.value == 0 || s.position.value == 0 || s.expires_at_ms.value == 0 || s.position > position)
    return std::string("a snapshot with a zero resource, revision, position or lease, or pinned after the response");
  return std::nullopt;
}
Problem captured(const std::vector<Entry>& items, const SnapshotInfo& s, std::optional<std::string_view> after) {
  for (const auto& e : items)
    if (e.revision > s.revision) return std::string("an entry newer than the snapshot's revision");
  return dense(items, after, [](const Entry& e) { return bytes(e.key); });
}

Problem check(const OpenSnapshot& q, const SnapshotOpened& r, Position position) {
  if (r.snapshot.resource != q.resource || r.resource.resource != q.resource) return std::string("a snapshot of another resource");
  if (r.snapshot.revision != r.resource.revision || (q.revision && r.snapshot.revision != *q.revision))
    return std::string("a snapshot of another revision");
  if (r.snapshot.position != position) return std::string("a snapshot not pinned at the position it was opened at");
  if (auto p = check_snapshot(r.snapshot, position)) return p;
  return check_active(r.resource);
}

Problem check(const SnapshotEntries& q, const SnapshotPage& page, Position position) {
  if (page.snapshot.token != q.token) return std::string("a page of another snapshot");
  if (auto p = check_snapshot(page.snapshot, position)) return p;
  if (q.key) {
    if (page.items.items.size() > 1 || (page.items.items.size() == 1 && page.items.items[0].key != *q.key) || page.cursor)
      return std::string("a key lookup answered with other entries");
    return captured(page.items.items, page.snapshot, std::nullopt);
  }
  const auto after = q.cursor ? std::optional<std::string_view>(bytes(q.cursor->after)) : std::nullopt;
  if (auto p = captured(page.items.items, page.snapshot, after)) return p;
  return continuation(q.cursor, page.snapshot.position, page.cursor, [](const EntryCursor& c) { return bytes(c.after); });
}

Problem check(const CloseSnapshot& q, const SnapshotClosed& r) {
  if (r.token != q.token) return std::string("another snapshot closed");
  return std::nullopt;
}

Problem check(const SnapshotRead& q, const SnapshotRange& r, Position position) {
  if (const auto* t = std::get_if<TokenSource>(&q.source); t && r.snapshot.token != t->token)
    return std::string("a range of another snapshot");
  if (const auto* a = std::get_if<AcquireSource>(&q.source)) {
    if (r.snapshot.resource != a->resource || (a->revision && r.snapshot.revision != *a->revision) ||
        r.snapshot.position != position)
      return std::string("an acquired snapshot of another resource, revision or position");
  }
  if (auto p = check_snapshot(r.snapshot, position)) return p;
  if (r.current.resource != r.snapshot.resource || r.current.revision < r.snapshot.revision)
    return std::string("current metadata of another resource, or older than the snapshot");
  if (auto p = check_active(r.current)) return p;
  if (r.items.items.size() > q.limit) return std::string("a range over its limit");
  if (r.released != q.finish) return std::string("a release that was not asked, or not made");
  const auto after = q.after ? std::optional<std::string_view>(bytes(*q.after)) : std::nullopt;
  if (auto p = captured(r.items.items, r.snapshot, after)) return p;
  if (r.next && ((after && !(*after < bytes(*r.next))) ||
                 (!r.items.items.empty() && bytes(*r.next) < bytes(r.items.items.back().key))))
    return std::string("a range whose next key does not advance");
  return std::nullopt;
}

// A payload's steps are taken in order and each records its position once (decisions 84-86).
Problem check(const PayloadRead& q, const PayloadInfo& p, Position position) {
  if (p.payload != q.payload) return std::string("another payload than the one asked");
  if (p.length > kMaxPayloadBytes) return std::string("a payload over its bound");
  if (p.declared_at.value == 0 || p.declared_at > position) return std::string("a declaration after its response's position");
  const bool ready = p.ready_at.has_value(), retired = p.retired_at.has_value(), deleted = p.deleted_at.has_value();
  const bool steps_fit = [&] {
    switch (p.state) {
      case PayloadState::kDeclared: return !ready && !retired && !deleted;
      case PayloadState::kReady: return ready && !retired && !deleted;
      case PayloadState::kRetired: return retired && !deleted;
      case PayloadState::kDeleted: return retired && deleted;
    }
    return false;
  }();
  if (!steps_fit) return std::string("a payload state without its steps' positions, or with later ones");
  if ((retired || deleted) && !p.allow_delete) return std::string("a retired payload declared without allow_delete");
  Position last = p.declared_at;
  for (const auto& at : {p.ready_at, p.retired_at, p.deleted_at})
    if (at) {
      if (*at <= last || *at > position) return std::string("payload steps out of order");
      last = *at;
    }
  return std::nullopt;
}

// A binding's positions are no later than the answer's; an unbound PID's answer carries nothing else.
Problem check(const RuntimeQuery& q, const RuntimeInfo& r, Position position) {
  if (r.pid != q.pid) return std::string("the binding of another process");
  if (!r.bound) {
    RuntimeInfo unbound;
    unbound.pid = q.pid;
    return r == unbound ? Problem{} : std::string("an unbound process with a binding's fields");
  }
  if (r.operation == 0 || r.operation_at.value == 0 || r.operation_at > position || r.provider.value.empty())
    return std::string("a binding without its operation, provider or position");
  if (r.bootstrap && (r.bootstrap->position < r.operation_at || r.bootstrap->position > position ||
                      r.bootstrap->incarnation > r.incarnation))
    return std::string("bootstrap evidence outside its operation");
  if (r.activation && (r.activation->position > position || r.activation->generation == 0))
    return std::string("an activation after its response's position");
  return std::nullopt;
}

// The fence that made the epoch is no later than the answer, and epoch 0 had none (decisions 140-142).
Problem check(const StorageQuery&, const StorageStatus& s, Position position) {
  if (s.fenced_at > position) return std::string("a fence after its response's position");
  if ((s.epoch == 0) != (s.fenced_at.value == 0)) return std::string("an epoch without its fence, or a fence without an epoch");
  if (s.grace_below > s.epoch) return std::string("read-lease grace recorded past the current epoch");
  if (s.compaction_cursor > position.value) return std::string("more relocations than decisions");
  return std::nullopt;
}

// Candidates only, most needy first (decision 183).
Problem check(const CompactionNeedsQuery&, const CompactionNeeds& n) {
  const auto& leaves = n.leaves.items;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].need < kMinCompactionNeed) return std::string("a leaf that needs no relocation");
    if (i > 0 && leaves[i].need > leaves[i - 1].need) return std::string("leaves not in need order");
  }
  return std::nullopt;
}

Problem check(const DecisionQuery& q, const Decision& d) {
  if (d.principal != q.principal) return std::string("decision for another principal");
  return std::nullopt;
}

}  // namespace

// A turn's receipt names its process, consumed input and resource, one view and output per proposal.
static bool turn_matches(const Turn& command, const TurnPublished& o) {
  return o.pid == command.pid && o.views.items.size() == command.views.items.size() &&
         o.outputs.items.size() == command.outputs.items.size() && o.consumed == command.input &&
         o.resource == command.resource;
}

bool outcome_matches(const Command& op, const Outcome& outcome) {
  return std::visit(
      [&](const auto& command) {
        using C = std::decay_t<decltype(command)>;
        const auto* o = std::get_if<OutcomeOf<C>>(&outcome);
        if (!o) return false;
        // ... and it names what was asked.
        if constexpr (std::is_same_v<C, CreatePrincipal> || std::is_same_v<C, ReplaceGrant>)
          return o->principal == command.principal;
        else if constexpr (std::is_same_v<C, RotateWorker>) return o->pid == command.pid && o->worker == command.worker;
        else if constexpr (std::is_same_v<C, RetireResource>) return o->resource == command.resource;
        else if constexpr (std::is_same_v<C, Deliver> || std::is_same_v<C, CancelOutput>) return o->output == command.output;
        else if constexpr (std::is_same_v<C, AdvanceFloor>) return o->floor == command.floor;
        else if constexpr (std::is_same_v<C, Turn>)
          return turn_matches(command, *o);
        else if constexpr (std::is_same_v<C, PreparedTurn>)
          return turn_matches(command.turn, *o);
        else if constexpr (std::is_same_v<C, StorageFence>)  // one epoch on, from the one it named
          return o->epoch == command.epoch + 1 && o->grace_below <= command.epoch;
        else if constexpr (std::is_same_v<C, StorageCompact>)
          return o->cursor == command.cursor + 1 && o->leaf == command.leaf;
        else if constexpr (std::is_same_v<OutcomeOf<C>, EffectChanged>) return o->effect == command.effect;
        else if constexpr (std::is_same_v<C, DeclarePayload>)
          return command.pid == o->pid && o->state == PayloadState::kDeclared;
        else if constexpr (std::is_same_v<OutcomeOf<C>, PayloadChanged>) return o->payload == command.payload;
        else if constexpr (std::is_same_v<C, Collect>)  // the record asked, and no more removed than one command may
          return o->pid == command.pid && o->kind == command.kind && o->record == command.record.value_or(command.pid.value) &&
                 o->removed <= kCollectRemovals;
        else if constexpr (std::is_same_v<C, RetireBlock>)
          return o->resource == command.resource && o->name == command.name && o->state == BlockState::kRetired;
        else if constexpr (std::is_same_v<C, DeleteBlock>)
          return o->resource == command.resource && o->name == command.name && o->state == BlockState::kDeleted;
        else if constexpr (requires { o->pid; command.pid; }) return o->pid == command.pid;
        else return true;
      },
      op);
}

std::optional<std::string> result_problem(const QueryOp& op, const QueryResult& result, Position position) {
  if (result.index() != op.index()) return std::string("response of another query kind");
  return std::visit(
      [&](const auto& q) {
        return std::visit(
            [&](const auto& r) -> Problem {
              if constexpr (requires { r.cut; })
                if (r.cut > position) return std::string("a page cut after its response's position");
              if constexpr (requires { check(q, r, position); }) return check(q, r, position);
              else if constexpr (requires { check(q, r); }) return check(q, r);
              else return std::nullopt;
            },
            result);
      },
      op);
}

}  // namespace cowboy::transit
