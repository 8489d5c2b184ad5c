// The Transit v1 client: builds and signs requests, checks every answer before
// handing it over, and never lets an uncertain outcome become a new sequence.
//
//   transit::Client client({.host = "127.0.0.1", .port = 7550, .realm = "dev", .principal = 1, .seed = seed});
//   auto receipt = client.submit(transit::CreateRole{{"ops"}, std::nullopt});
//
// submit() signs at the next sequence and, on a transport loss, a malformed
// success or a ServiceUncertain/ClockUncertain rejection, resends the same
// signed bytes (up to max_attempts). If the outcome is still unknown it returns
// kUncertain and keeps those bytes: the next submit() resends them first and
// only then signs anything new. An exact retry is answered with the original
// receipt, so resending is always safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <string>

#include "common/crypto.h"
#include "common/result.h"
#include "transit/contract/types.h"

namespace cowboy::transit {

struct ClientOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7550;
  std::string realm;
  PrincipalId principal{};
  crypto::Ed25519Seed seed{};
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  int max_attempts = 5;
  std::chrono::milliseconds retry_backoff = std::chrono::milliseconds(50);
  std::uint16_t payload_port = 0;  // the node's payload listener (decision 87); 0: payload bytes are not moved
};

struct ClientError {
  enum class Kind {
    kRejected,   // the node refused it; `rejection` says why, nothing changed
    kUncertain,  // the outcome is unknown; the signed bytes are kept for resubmission
    kMalformed,  // the node answered something this client does not accept
    kInvalid,    // refused before signing (a rule of the contract); nothing was sent
    kUnsupported,  // the peer's capabilities do not list the operation's; nothing was sent
  };
  Kind kind;
  std::optional<Rejection> rejection;
  std::string message;
};

template <typename T> using ClientResult = Result<T, ClientError>;

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(Client&&) noexcept;

  using Bytes = std::vector<std::uint8_t>;
  /// Signs `op` at the next sequence (learnt from the identity query when not
  /// set) and submits it, with the bodies of a turn's block descriptors.
  ClientResult<Receipt> submit(Command op, std::vector<Bytes> blocks = {});
  /// Resends saved signed bytes as they are (an exact retry).
  ClientResult<Receipt> resubmit(const SignedRequest& signed_request, const std::vector<Bytes>& blocks = {});
  /// The signed request whose outcome is unknown, if any.
  const std::optional<SignedRequest>& pending() const;

  ClientResult<Response> query(QueryOp op);
  ClientResult<Identity> identity();
  /// The peer's capabilities, asked once and kept: every other operation is
  /// refused (kUnsupported) before signing unless they list its capability.
  ClientResult<Capabilities> capabilities();
  /// Refuses (kUnsupported) a peer whose capabilities do not list `name`:
  /// for a profile that gates no single operation, such as `station`
  /// (docs/transit.md, decision 128), which a client for Station requires first.
  ClientResult<Capabilities> require(std::string_view name);
  /// A PID's runtime binding (decisions 120-129), refused (kMalformed) unless
  /// its positions fit the response's and an unbound answer is all zero.
  /// Its commands: submit(RuntimeIntent{...}), RuntimeObserve, RuntimeUpgrade, Activate.
  ClientResult<RuntimeInfo> runtime(Pid pid);
  ClientResult<Decision> decision(PrincipalId principal, Scope scope, Permissions permissions);
  /// An effect as recorded: intent, authorization, attempt, every observation
  /// and closure, refused (kMalformed) unless the phase/observation/closure
  /// combination is one the contract allows (docs/transit.md, decisions 43-49).
  /// Its verbs are commands: submit(AttemptEffect{id}), ObserveEffect,
  /// CloseEffect, CancelEffect.
  ClientResult<EffectInfo> effect(Id effect);
  /// One page of effects, in id order: of `pid`, or (null) of every process
  /// the caller may inspect, that `filter` shows. The maintenance process
  /// lists {null, cancellable} and cancels what it finds.
  ClientResult<EffectPage> effects(std::optional<Pid> pid, EffectFilter filter, std::optional<Cursor> cursor = std::nullopt);

  /// Leased snapshots (docs/transit.md, decisions 70-78): a volatile snapshot
  /// of one resource at its current revision, pinned at the position it is
  /// opened at, held by the returned token while reads renew its lease.
  /// Every read rechecks the caller's current rights; close is idempotent.
  /// close_snapshot and snapshot_read with finish are sent with
  /// X-Transit-Control: snapshot, the reserved control admission.
  ClientResult<SnapshotOpened> open_snapshot(ResourceId resource, std::optional<Revision> revision, Millis lease_ms);
  ClientResult<SnapshotPage> snapshot_entries(const SnapshotToken& token, std::optional<EntryCursor> cursor = std::nullopt);
  ClientResult<SnapshotClosed> close_snapshot(const SnapshotToken& token);
  /// A range of up to read.limit captured entries with the resource's current
  /// metadata, acquiring a snapshot or continuing one, releasing it on finish.
  ClientResult<SnapshotRange> snapshot_read(SnapshotRead read);

  /// Segmented results (docs/transit.md, decisions 150-154): one segment of
  /// the entries of `basis`, checked (kMalformed otherwise) to carry on the
  /// chain of the cursor it continues.
  ClientResult<Segment> segment(Basis basis, std::optional<SegmentCursor> cursor = std::nullopt);
  /// The whole logical result: every segment in turn, each entry to `sink`
  /// (false stops the read), until the one with the complete-result
  /// evidence, which is returned; the evidence is checked against the
  /// records `sink` saw. A refused continuation (its resource moved) ends it.
  ClientResult<Completion> read_result(const Basis& basis, const std::function<bool(const Entry&)>& sink);

  /// Payloads (docs/transit.md, decisions 84-92). Their steps are commands:
  /// submit(DeclarePayload{...}), PayloadReady, RetirePayload, PayloadDeleted.
  /// The record, refused (kMalformed) unless its steps' positions fit its state.
  ClientResult<PayloadInfo> payload(Id payload);
  /// Fills the span it is given with the next bytes and returns how many (0: none left).
  using PayloadSource = std::function<std::size_t(std::span<std::uint8_t>)>;
  /// Takes the next bytes; false stops the download.
  using PayloadSink = std::function<bool(std::span<const std::uint8_t>)>;
  /// PUT /v1/payloads/{id} on the payload listener: the declared length of
  /// bytes from `source`, streamed in chunks; the record the node checked it
  /// against. The bytes are kept only if their SHA-256 is the declared one; then submit(PayloadReady{id}).
  ClientResult<PayloadInfo> put_payload(Id payload, const PayloadSource& source);
  /// GET /v1/payloads/{id}: the bytes to `sink` in chunks, their length and
  /// SHA-256 checked against the record as they go by (kMalformed otherwise).
  ClientResult<PayloadInfo> get_payload(Id payload, const PayloadSink& sink);
  /// DELETE /v1/payloads/{id}: the store deletes a retired payload's bytes; then submit(PayloadDeleted{id}).
  ClientResult<PayloadInfo> delete_payload_bytes(Id payload);

  /// An identity observation and the position it was read at. An inspection
  /// client checks read_only(), then lists catalogs at that same position by
  /// starting each listing at first_page_at(position); a later grant change
  /// expires that cut (StaleCut), so the observation is never joined to a
  /// newer page (docs/transit.md, decision 40).
  struct Observation {
    Identity identity;
    Position position{};
    bool read_only() const { return identity.permissions.bits == kReadOnly; }
  };
  ClientResult<Observation> observe();

  void set_next_sequence(Id next);
  std::optional<Id> next_sequence() const;
  /// The highest authority position this client has seen; answers never go below it.
  Position last_position() const;

  /// The request submit(op) would sign next, without sending it.
  Request build(Command op, Id sequence) const;
  /// The query query(op) would send, signed, as canonical JSON (the payload route's X-Transit-Query).
  std::string signed_query(QueryOp op) const;
  const ClientOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The cursor that asks for a listing's first page at `position`: after 0 (or
/// the empty key) is before everything.
inline Cursor first_page_at(Position position) { return Cursor{position, 0}; }
inline EntryCursor first_entries_at(Position position) { return EntryCursor{position, {}}; }

/// The outcome variant a command's receipt must carry, naming what was asked (the client checks it).
bool outcome_matches(const Command& op, const Outcome& outcome);

}  // namespace cowboy::transit
