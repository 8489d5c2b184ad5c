// What the client checks in every answer before handing it over
// (docs/transit.md, decision 21): a receipt's outcome is of its command's kind
// and names what was asked; a query result answers the query asked, at the
// basis asked, in dense order, with continuations that advance.
#include "transit/client/checks.h"

#include "transit/client.h"

namespace cowboy::transit {
namespace {

std::string_view bytes(const EntryKey& k) {
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

template <typename C> Problem continuation(const std::optional<C>& asked, Id cut, const std::optional<C>& next,
                                          auto after_of) {
  if (asked && asked->cut != cut) return std::string("continuation at another cut");
  if (next && next->cut != cut) return std::string("cursor of another cut");
  if (asked && next && !(after_of(*asked) < after_of(*next))) return std::string("continuation does not advance");
  return std::nullopt;
}

Problem check(const ListResources& q, const ResourcePage& page) {
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const ResourceInfo& r) { return r.resource; })) return p;
  if (page.cursor && !page.items.items.empty() && page.cursor->after < page.items.items.back().resource)
    return std::string("cursor behind its page");
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

Problem check(const ListAssociations& q, const AssociationPage& page) {
  if (page.pid != q.pid) return std::string("associations of another process");
  for (const auto& a : page.items.items)
    if (a.pid != q.pid) return std::string("association of another process");
  const auto after = q.cursor ? std::optional<Id>(q.cursor->after) : std::nullopt;
  if (auto p = dense(page.items.items, after, [](const Association& a) { return a.revision; })) return p;
  return continuation(q.cursor, page.cut, page.cursor, [](const Cursor& c) { return c.after; });
}

Problem check_basis(const Basis& basis, const ResourceInfo& resource, Id revision, std::optional<Id> view) {
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

Problem check(const ReadEntries& q, const EntryBatch& batch) {
  if (batch.resource.resource != q.resource) return std::string("entries of another resource");
  if (q.revision && batch.revision != *q.revision) return std::string("entries at another revision");
  if (batch.view != q.view) return std::string("entries through another view");
  if (!q.view && batch.revision != batch.resource.revision) return std::string("a current read not at the current revision");
  for (std::size_t i = 0; i < kPageRecords; ++i) {
    const auto& asked = q.keys.items[i];
    const auto& got = batch.entries.items[i];
    if (!got) continue;
    if (!asked || got->key != *asked) return std::string("slot ") + std::to_string(i) + " answers another key";
    if (got->revision > batch.revision) return std::string("entry newer than the batch's revision");
  }
  return std::nullopt;
}

Problem check(const AssociationLookup& q, const LookupResult& r) {
  if (r.pid != q.pid || r.name != q.name) return std::string("lookup of another association");
  if (r.association && (r.association->pid != q.pid || r.association->name != q.name))
    return std::string("lookup answered with another association");
  return std::nullopt;
}

Problem check(const ReadAccess& q, const ResourceAccess& r) {
  if (r.resource.resource != q.resource) return std::string("access to another resource");
  return std::nullopt;
}

Problem check(const ProcessRead& q, const ProcessInfo& p) {
  if (p.pid != q.pid) return std::string("another process");
  if (p.input && p.input->input != p.head) return std::string("an input that is not the head");
  return std::nullopt;
}

Problem check(const ReadBlock& q, const Block& b) {
  if (b.name != q.name) return std::string("another block");
  if (const auto* current = std::get_if<CurrentBasis>(&q.basis);
      current && (b.resource != current->resource || b.revision > current->revision))
    return std::string("a block of another resource or revision");
  return std::nullopt;
}

Problem check(const DecisionQuery& q, const Decision& d) {
  if (d.principal != q.principal) return std::string("decision for another principal");
  return std::nullopt;
}

template <typename Outcome, typename C> bool names(const Outcome* o, const C& c) {
  if (!o) return false;
  if constexpr (requires { o->pid; c.pid; }) return o->pid == c.pid;
  return true;
}

}  // namespace

bool outcome_matches(const Command& op, const Outcome& outcome) {
  return std::visit(
      [&](const auto& command) {
        using C = std::decay_t<decltype(command)>;
        if constexpr (std::is_same_v<C, CreatePrincipal>) {
          const auto* created = std::get_if<PrincipalCreated>(&outcome);
          return created && created->principal == command.principal;
        } else if constexpr (std::is_same_v<C, CreateRole>) {
          return std::holds_alternative<RoleCreated>(outcome);
        } else if constexpr (std::is_same_v<C, Grant>) {
          return std::holds_alternative<Granted>(outcome);
        } else if constexpr (requires { command.expected_revision; }) {
          return std::holds_alternative<PolicyChanged>(outcome);
        } else if constexpr (std::is_same_v<C, CreateResource>) {
          return std::holds_alternative<ResourceCreated>(outcome);
        } else if constexpr (std::is_same_v<C, RetireResource>) {
          const auto* r = std::get_if<ResourceRetired>(&outcome);
          return r && r->resource == command.resource;
        } else if constexpr (std::is_same_v<C, Associate>) {
          return names(std::get_if<Associated>(&outcome), command);
        } else if constexpr (std::is_same_v<C, Send>) {
          return names(std::get_if<Sent>(&outcome), command);
        } else if constexpr (std::is_same_v<C, Turn>) {
          const auto* t = std::get_if<TurnPublished>(&outcome);
          return names(t, command) && t->views.items.size() == command.views.items.size() &&
                 t->outputs.items.size() == command.outputs.items.size() && t->consumed == command.input &&
                 t->resource == command.resource;
        } else if constexpr (std::is_same_v<C, Deliver>) {
          const auto* d = std::get_if<Delivered>(&outcome);
          return d && d->output == command.output;
        } else {
          return names(std::get_if<ProcessChanged>(&outcome), command);
        }
      },
      op);
}

std::optional<std::string> result_problem(const QueryOp& op, const QueryResult& result) {
  if (result.index() != op.index()) return std::string("response of another query kind");
  return std::visit(
      [&](const auto& q) {
        return std::visit(
            [&](const auto& r) -> Problem {
              if constexpr (requires { check(q, r); }) return check(q, r);
              else return std::nullopt;
            },
            result);
      },
      op);
}

}  // namespace cowboy::transit
