#include "transit/contract/reference.h"

#include <deque>
#include <functional>
#include <map>
#include <stdexcept>

#include "common/bytes.h"
#include "transit/contract/envelope.h"
#include "transit/contract/json.h"
#include "transit/contract/operations.h"
#include "transit/contract/reasons.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

std::string n(std::uint64_t v) { return std::to_string(v); }
// Appends, never inserts at the front: GCC 12 warns, wrongly, on "literal" + std::string.
template <typename... P> std::string cat(const P&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}
std::string code(std::string_view s) { return cat("`", s, "`"); }

// Field types in words, and the tables of the records they name. A record is
// described once, under its kName, the first time a field refers to it.
class Tables {
 public:
  template <typename T> std::string type() { return Describe<T>::get(*this); }

  /// | # | field | type | rows for T's field list.
  template <Record T> std::string table() {
    Rows rows{*this, {}, 0};
    T value{};
    fields(rows, value);
    if (rows.text.empty()) return "No fields: spelled `{}`.\n";
    return cat("| # | field | type |\n|---|---|---|\n", rows.text);
  }

  /// Registers a record for the "Records" section; returns its name.
  template <Record T> std::string record() {
    const std::string name(T::kName);
    auto [it, fresh] = seen_.emplace(name, typeid(T).name());
    if (!fresh && it->second != typeid(T).name()) throw std::logic_error(cat("two records named ", name));
    if (fresh) pending_.push_back([this, name] { return cat("### ", code(name), "\n\n", table<T>(), "\n"); });
    return name;
  }

  /// A record whose table is printed elsewhere: fields name it, the Records section does not repeat it.
  template <Record T> void placed() { seen_.emplace(std::string(T::kName), typeid(T).name()); }

  /// The tables of every record registered so far, and of those they register.
  std::string drain() {
    std::string out;
    while (!pending_.empty()) {
      auto render = std::move(pending_.front());
      pending_.pop_front();
      out += render();
    }
    return out;
  }

 private:
  struct Rows {
    Tables& tables;
    std::string text;
    int i = 0;
    template <typename F> Rows& operator()(std::string_view name, const F&) {
      text += cat("| ", n(++i), " | ", code(name), " | ", tables.type<F>(), " |\n");
      return *this;
    }
  };

  template <typename T, typename = void> struct Describe;

  std::map<std::string, std::string> seen_;
  std::deque<std::function<std::string()>> pending_;
};

template <typename T, typename Enable> struct Tables::Describe {
  static std::string get(Tables& t) {
    if constexpr (std::is_same_v<T, std::uint64_t>) return "integer 0..2^53-1";
    else if constexpr (std::is_same_v<T, bool>) return "`true` or `false`";
    else if constexpr (std::is_same_v<T, Version>) return "`1`";
    else if constexpr (std::is_same_v<T, Definition>) return "the definition string";
    else if constexpr (std::is_same_v<T, Permissions>) return cat("permission mask, integer 0..", n(kAllPermissions));
    else if constexpr (requires { EnumTraits<T>::kNames; }) {
      std::string out = "one of";
      for (auto name : EnumTraits<T>::kNames) out += cat(" `\"", name, "\"`");
      return out;
    } else if constexpr (Record<T>) {
      return cat("object ", code(t.record<T>()));
    } else {
      static_assert(sizeof(T) == 0, "a field type the reference cannot name");
    }
  }
};
template <typename Tag, typename Rep> struct Tables::Describe<StrongId<Tag, Rep>> {
  static std::string get(Tables& t) { return t.type<Rep>(); }  // a strong id is its wire value
};
template <std::size_t Lo, std::size_t Hi> struct Tables::Describe<Text<Lo, Hi>> {
  static std::string get(Tables&) { return cat("UTF-8 text, ", n(Lo), "..", n(Hi), " bytes"); }
};
template <std::size_t N, std::size_t M> struct Tables::Describe<Hex<N, M>> {
  static std::string get(Tables&) { return cat("hex string, ", n(M), "..", n(N), " bytes"); }
};
template <std::size_t N> struct Tables::Describe<Fixed<N>> {
  static std::string get(Tables&) { return cat("array of exactly ", n(N), " integers 0..255"); }
};
template <typename T> struct Tables::Describe<std::optional<T>> {
  static std::string get(Tables& t) { return t.type<T>() + ", or `null`"; }
};
template <typename T, std::size_t N> struct Tables::Describe<List<T, N>> {
  static std::string get(Tables& t) { return cat("array of 0..", n(N), " × (", t.type<T>(), ")"); }
};
template <typename T, std::size_t N> struct Tables::Describe<Slots<T, N>> {
  static std::string get(Tables& t) { return cat("array of exactly ", n(N), " × (", t.type<T>(), ", or `null`)"); }
};
template <typename... A> struct Tables::Describe<std::variant<A...>> {
  static std::string get(Tables& t) {
    std::string out = "union, one of";
    ((out += cat(" ", code(cat("{\"", t.record<A>(), "\":…}")))), ...);
    return out;
  }
};

// The top-level unions have their own sections.
template <> struct Tables::Describe<Command> {
  static std::string get(Tables&) { return "union, one of the commands (section 5)"; }
};
template <> struct Tables::Describe<Outcome> {
  static std::string get(Tables&) { return "union, one of the outcomes (section 6)"; }
};
template <> struct Tables::Describe<QueryOp> {
  static std::string get(Tables&) { return "union, one of the queries (section 7)"; }
};
template <> struct Tables::Describe<QueryResult> {
  static std::string get(Tables&) { return "union, one of the results (section 8)"; }
};
template <> struct Tables::Describe<Reason> {
  static std::string get(Tables&) { return "one of the reasons of section 9, as a string (`\"syntax\"`)"; }
};

// One section per alternative of a top-level union (ops, outcomes, results).
template <typename... A, typename Note>
std::string alternatives(Tables& t, std::type_identity<std::variant<A...>>, Note note) {
  std::string out;
  std::size_t index = 0;
  (
      [&] {
        out += cat("### ", code(A::kName), "\n\n", note(std::type_identity<A>{}, index++));
        out += cat("Spelled, every field at its zero value: ", code(to_json(std::variant<A...>{A{}})), "\n\n");
        out += t.table<A>() + "\n";
      }(),
      ...);
  return out;
}

template <typename... A> std::string_view name_at(std::type_identity<std::variant<A...>>, std::size_t index) {
  constexpr std::string_view names[] = {A::kName...};
  return names[index];
}

std::string bytes_line(std::string_view label, ByteView bytes) {
  return cat("    ", label, to_hex(bytes), "\n");
}

std::string indent(std::string_view text) { return cat("    ", text, "\n"); }

}  // namespace

WorkedExample worked_example() {
  WorkedExample e;
  for (std::size_t i = 0; i < e.seed.size(); ++i) e.seed[i] = static_cast<std::uint8_t>(i);
  e.public_key = crypto::ed25519_from_seed(e.seed).public_key;
  // A block body holding a raw newline: only the first newline of a body separates.
  e.block = "line 1\nline 2\n";
  const std::vector<std::uint8_t> block(e.block.begin(), e.block.end());
  const std::string greeting = "greeting", hello = "hello", notes = "notes";
  Turn turn{Pid{7}, 2, 1, ResourceId{1}, std::nullopt,
            {{{EntryKey{{greeting.begin(), greeting.end()}}, EntryValue{{hello.begin(), hello.end()}}}}},
            {{{EntryKey{{notes.begin(), notes.end()}}, block.size(), crypto::sha256(ByteView(block))}}},
            {},
            {},
            std::nullopt};
  e.command = sign(Request{Version{}, Definition{}, {"dev"}, PrincipalId{1}, 3, turn}, e.seed);
  e.command_inner = to_json(e.command.request);
  e.command_digest = request_digest(e.command.request);
  e.command_body = command_body(to_json(e.command), {block});
  e.query = sign(Query{Version{}, Definition{}, {"dev"}, PrincipalId{1}, IdentityQuery{}}, e.seed);
  e.query_inner = to_json(e.query.query);
  e.query_digest = query_digest(e.query.query);
  e.query_body = to_json(e.query);
  return e;
}

std::string reference_text() {
  Tables t;
  std::string out;
  out += R"(# Transit v1 wire reference

Generated by `build/bin/transit reference` from the contract's field lists
(`src/transit/contract/`), the same source as `schema/transit-v1.schema.json`;
a test (`TransitReference.GeneratedReferenceEqualsTheCheckedInCopy`) fails when
this file differs from what the build generates, so do not edit it by hand:
run `build/bin/transit reference > docs/transit-reference.md`. The rules behind
the fields - who may do what, when a cut expires, what each state means - are
the decisions of `docs/transit.md`, cited here as "decision N".

)";
  out += cat("Definition of this build: ", code(definition()), "\n\n");

  out += R"(## 1. Routes

| route | body | 200 answer | otherwise |
|---|---|---|---|
| `POST /v1/command` | `SignedRequest`, then for a turn with blocks `\n` and the block bodies | `Receipt` | `Rejection` |
| `POST /v1/query` | `SignedQuery` | `Response` | `Rejection` |

The payload listener (`transitd --payload-listen`, decisions 87-90) is apart, with its own transport
budget; each of its requests carries the header `X-Transit-Query`, a `SignedQuery` of `payload` for the
payload the path names (`missing_query_header` otherwise), and its answer is decided by that query's
`PayloadInfo` and who signed it:

| route | body | 200 answer | otherwise |
|---|---|---|---|
| `PUT /v1/payloads/{id}` | the payload's bytes, `Content-Length` the declared length (publisher; `declared`) | `Response` (the `payload` query's) | `Rejection` |
| `GET /v1/payloads/{id}` | none (`read` at its PID; `ready`) | the bytes, `application/octet-stream` | `Rejection` |
| `DELETE /v1/payloads/{id}` | none (publisher; `retired`) | `Response` (the `payload` query's) | `Rejection` |

Every answer is one JSON document in the spelling below (`Content-Type:
application/json`). Nothing else is routed (`unknown_route`,
`method_not_allowed`). The optional header `X-Transit-Control: snapshot` is
accepted only on `POST /v1/query` carrying `close_snapshot` or `snapshot_read`
with `finish: true`, which it admits into the reserved control admission; on
any other request it is `control_hint_not_allowed`, another value
`unknown_control_hint`, two of them `duplicate_control_hint` (decisions 19, 76).

)";
  out += cat("Sizes: the canonical inner `request` or `query` is at most ", n(kMaxRequestBytes),
             " bytes, an envelope at most ", n(kMaxEnvelopeBytes), ", a command body with its blocks at most ",
             n(kMaxCommandBodyBytes), " (413 `TooLarge` before parsing; decision 22). A turn carries at most ",
             n(kTurnBlocks), " blocks of 1..", n(kBlockBytes), " bytes, ", n(kTurnBlockBytes),
             " in all. An answer is at most ", n(kMaxAnswerBytes), " bytes. A page holds at most ", n(kPageRecords),
             " records (decision 29).\n\n");

  out += R"(## 2. Spelling (decision 3) and block bodies (decision 31)

A request is accepted only in its one canonical spelling, and the node writes
every answer in it:

- compact JSON: no whitespace at all outside strings, not even a final newline;
- an object's fields exactly those of its table below, in that order, each
  present: defaults are written out and an absent optional is `null`;
- integers in decimal, no sign, no fraction or exponent, at most 2^53-1;
- strings are UTF-8 and escape only `"` `\` and U+0000..U+001F, as `\b \f \n
  \r \t` or else `\u00xx` with lowercase hex; everything else (`/`, non-ASCII)
  is written raw;
- a union is an object with exactly one key, the alternative's name, whose
  value is that alternative's object (`{"realm":{}}`).

The node decodes, writes the value again and refuses the request
(`non_canonical`) unless the bytes are equal; each other broken rule has its
own reason (decision 3).

**How the two rules meet.** Because canonical JSON has no whitespace and
writes a newline inside a string as the two characters `\n`, the byte 0x0A
never occurs in a canonical envelope. A command body is therefore split at its
first 0x0A: what comes before is the envelope, which must be canonical; what
comes after is the turn's block bodies, raw and back to back in descriptor
order, each exactly `length` bytes with the descriptor's SHA-256. Block bodies
may hold any bytes, newlines included; only the first newline of the body
separates. A body without blocks has no newline at all: `envelope\n` with
nothing after it is `unexpected_blocks`, as is any body after a command that
is not a turn (or a `prepared_turn`, whose turn's descriptors count) with
block descriptors; a short, extra or altered body is
`block_mismatch`. A query body is only its envelope. The envelope's bytes are
signed; the block bodies are bound by their descriptors (`length`, `sha256`),
which are inside the signed request.

Block bodies are never in the journal's records (decision 108). A published
block has a record (`block_info`: its source revision, length, SHA-256 and
owning process); `read_block` answers the body with its source and SHA-256,
which the node checked the stored body against and a client checks again,
and may name the `source` it expects (decisions 100-106).

### Value kinds

| kind in the tables | JSON | example |
|---|---|---|
| integer 0..2^53-1 | number | `42` |
| UTF-8 text, a..b bytes | string; the bound counts bytes, not characters | `"doc"` |
| hex string, a..b bytes | string of lowercase hex digits, two per byte | `"68656c6c6f"` |
| array of exactly N integers 0..255 | keys, signatures, digests: an array even when the bytes are text | `[0,1,2]` |
| permission mask | integer, see section 10 | `3` |
| one of `"a"` `"b"` | string | `"idle"` |
| X, or `null` | X or `null` | `null` |
| array of 0..N × (X) | array | `[]` |
| array of exactly N × (X, or `null`) | array of N slots | `[null,null]` |
| union | single-key object | `{"pid":{"pid":7}}` |
| object `Name` | object with the fields of `Name`'s table | |

)";

  out += "## 3. Signing (decision 4)\n\n";
  out += cat("A command's signature is Ed25519 over the 32-byte digest SHA-256(", code(kRequestDomain),
             " || 0x00 || the canonical JSON of `request`); a query's uses the domain ", code(kQueryDomain));
  out += ". The signed bytes are exactly the envelope's text between `{\"request\":` (or `{\"query\":`) and "
         "`,\"signature\":`. The signature is written as an array of 64 integers. Commands carry the signer's "
         "next sequence (its last accepted + 1, from 1; the identity query reports the last, decision 5); "
         "queries carry none. Section 11 works one example of each.\n\n";

  out += "## 4. Envelopes and answers\n\n";
  t.placed<Request>();
  t.placed<Query>();
  out += cat("### `SignedRequest`\n\n", t.table<SignedRequest>(), "\n");
  out += cat("### `Request`\n\n", t.table<Request>(), "\n");
  out += cat("### `SignedQuery`\n\n", t.table<SignedQuery>(), "\n");
  out += cat("### `Query`\n\n", t.table<Query>(), "\n");
  out += "### `Receipt`\n\nThe answer to an accepted command (also to an exact retry of it, byte for byte).\n\n" +
         t.table<Receipt>() + "\n";
  out += "### `Response`\n\nThe answer to a query; `position` is the authority position it was read at.\n\n" +
         t.table<Response>() + "\n";
  out += cat("### `Rejection`\n\nEvery refusal; section 9 lists the codes and the reasons.\n\n", t.table<Rejection>(), "\n");
  out += "### `Genesis`\n\nNot sent over HTTP: the file `transitd --genesis` reads (decision 23).\n\n" +
         t.table<Genesis>() + "\n";

  out += "## 5. Commands (`Request.op`)\n\n"
         "Each is one alternative of the union in `Request.op`. The capability is the name the node's "
         "capabilities must list for a client to use it (decision 42); the outcome is the `Receipt.outcome` "
         "alternative an accepted command is answered with (section 6).\n\n";
  out += alternatives(t, std::type_identity<Command>{}, [](auto op, std::size_t) {
    using Op = typename decltype(op)::type;
    return cat("Capability ", code(capability::required<Op>()), "; answered with the outcome ",
               code(OutcomeOf<Op>::kName), ".",
               kControl<Op> ? " A control mutation: admitted into the control reserve beyond the admission "
                              "ceiling (decision 63)."
                            : "",
               "\n\n");
  });

  out += "## 6. Receipt outcomes (`Receipt.outcome`)\n\n";
  out += alternatives(t, std::type_identity<Outcome>{}, [](auto, std::size_t) { return std::string(); });

  out += "## 7. Queries (`Query.op`)\n\n"
         "Each is answered by the `Response.result` alternative at its own place in the union (section 8).\n\n";
  out += alternatives(t, std::type_identity<QueryOp>{}, [](auto op, std::size_t index) {
    using Op = typename decltype(op)::type;
    const auto needs = capability::required<Op>();
    return cat(needs.empty() ? std::string("Needs no capability (it is how a client learns them)")
                             : cat("Capability ", code(needs)),
               "; answered with the result ", code(name_at(std::type_identity<QueryResult>{}, index)), ".",
               std::is_same_v<Op, CloseSnapshot> ? " May carry `X-Transit-Control: snapshot` (decision 76)." : "",
               std::is_same_v<Op, SnapshotRead> ? " With `finish: true` it may carry `X-Transit-Control: snapshot` (decision 76)." : "",
               "\n\n");
  });
  out += "## 8. Query results (`Response.result`)\n\n";
  out += alternatives(t, std::type_identity<QueryResult>{}, [](auto, std::size_t) { return std::string(); });

  out += "## 9. Rejections (decision 12)\n\n| code | HTTP status | resend the same bytes? |\n|---|---|---|\n";
  for (std::size_t i = 0; i < EnumTraits<RejectionCode>::kNames.size(); ++i) {
    const auto c = static_cast<RejectionCode>(i);
    const int status = http_status(c);
    out += cat("| ", code(EnumTraits<RejectionCode>::kNames[i]), " | ", n(status), " | ",
               status == 503 ? "yes: the outcome is unknown" : "no: final, nothing changed", " |\n");
  }
  out += "\nA rejection's `reason` names the rule broken and always comes with the one `code` listed for it "
         "below; `message` is for people. A client matches on `code` and `reason`, never on `message`; a "
         "strict decoder refuses any reason not listed here (`unknown_variant`). Every reason, in the "
         "catalogue's order:\n\n| reason | code | HTTP status | meaning |\n|---|---|---|---|\n";
  for (const auto& r : kReasons)
    out += cat("| ", code(r.name), " | ", code(EnumTraits<RejectionCode>::kNames[static_cast<std::size_t>(r.code)]),
               " | ", n(http_status(r.code)), " | ", r.meaning, " |\n");
  out += "\n";

  out += "## 10. Scopes, permissions and capabilities\n\n"
         "A scope is a union (decisions 15 and 25); the CLI spells it `realm`, `pid:N` or `resource:N`.\n\n"
         "| scope | JSON | CLI |\n|---|---|---|\n";
  out += cat("| realm (covers everything) | ", code(to_json(Scope{RealmScope{}})), " | `realm` |\n");
  out += cat("| one process | ", code(to_json(Scope{PidScope{Pid{7}}})), " | `pid:7` |\n");
  out += cat("| one resource | ", code(to_json(Scope{ResourceScope{ResourceId{3}}})), " | `resource:3` |\n\n");
  out += cat("A permission mask is the sum of its bits (decision 7); any other bit is `unknown_permission`. "
             "Exactly read-only is ", n(kReadOnly), " (inspect and read).\n\n| bit | value | name |\n|---|---|---|\n");
  for (std::size_t i = 0; i < kPermissionNames.size(); ++i)
    out += cat("| ", n(i), " | ", n(std::uint64_t{1} << i), " | ", code(kPermissionNames[i]), " |\n");
  out += "\nThe capabilities this build's node reports (`Capabilities.supported`), and the operations each "
         "lets a client use (decision 42):\n\n| capability | operations |\n|---|---|\n";
  for (auto name : capability::kSupported) {
    std::string ops;
    auto collect = [&]<typename... A>(std::type_identity<std::variant<A...>>) {
      ((capability::required<A>() == name ? (void)(ops += cat(ops.empty() ? "" : ", ", code(A::kName))) : (void)0), ...);
    };
    collect(std::type_identity<Command>{});
    collect(std::type_identity<QueryOp>{});
    out += cat("| ", code(name), " | ", ops.empty() ? std::string("(reported; gates no operation of its own)") : ops,
               " |\n");
  }
  out += "\n";

  const auto e = worked_example();
  out += "## 11. Worked example\n\n"
         "With this build's definition (above) and the test key whose 32-byte Ed25519 seed is the bytes "
         "0, 1, ..., 31, a client must produce exactly these bytes. They change with the definition; the "
         "test `TransitReference.TheWorkedExampleVerifies` checks them with an independent hash and "
         "signature check.\n\n";
  out += bytes_line("seed:       ", ByteView(e.seed.data(), e.seed.size()));
  out += bytes_line("public key: ", ByteView(e.public_key.data(), e.public_key.size()));
  out += cat("\n### A turn with one block, principal 1, sequence 3, realm `dev`\n\nThe canonical `request` (",
             n(e.command_inner.size()), " bytes), which is what is hashed:\n\n");
  out += indent(e.command_inner);
  out += cat("\nSHA-256(`", kRequestDomain, "` 0x00 request) and its Ed25519 signature, in hex:\n\n");
  out += bytes_line("digest:    ", ByteView(e.command_digest.data(), e.command_digest.size()));
  out += bytes_line("signature: ", ByteView(e.command.signature.data(), e.command.signature.size()));
  std::string escaped_block;
  json::write_string(escaped_block, e.block);
  out += cat("\nThe `POST /v1/command` body (", n(e.command_body.size()),
             " bytes): the envelope, one 0x0A, then the block's ", n(e.block.size()), " bytes (JSON-escaped here: ",
             code(escaped_block), "). The envelope:\n\n");
  out += indent(to_json(e.command));
  out += cat("\n### The identity query, principal 1\n\nThe canonical `query` (", n(e.query_inner.size()),
             " bytes):\n\n", indent(e.query_inner), "\n");
  out += bytes_line("digest:    ", ByteView(e.query_digest.data(), e.query_digest.size()));
  out += bytes_line("signature: ", ByteView(e.query.signature.data(), e.query.signature.size()));
  out += cat("\nThe `POST /v1/query` body:\n\n", indent(e.query_body), "\n");

  out += "## 12. Records\n\nThe objects that fields above refer to, and the alternatives of nested unions.\n\n";
  out += t.drain();
  while (out.ends_with("\n\n")) out.pop_back();
  return out;
}

}  // namespace cowboy::transit
