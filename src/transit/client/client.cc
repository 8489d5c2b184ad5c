#include "transit/client.h"

#include <thread>

#include "net/http_connection.h"
#include "transit/client/checks.h"
#include "transit/contract/operations.h"
#include "transit/contract/rules.h"
#include "transit/contract/envelope.h"
#include "transit/contract/signing.h"

namespace cowboy::transit {
namespace {

ClientError malformed(std::string message) { return ClientError{ClientError::Kind::kMalformed, std::nullopt, std::move(message)}; }
ClientError invalid(const DecodeError& e) {
  return ClientError{ClientError::Kind::kInvalid, std::nullopt, "not sent: " + e.message()};
}

bool uncertain(RejectionCode code) {
  return code == RejectionCode::kServiceUncertain || code == RejectionCode::kClockUncertain;
}

}  // namespace

struct Client::Impl {
  ClientOptions options;
  net::HttpConnection connection;
  std::optional<Id> next_sequence;
  std::optional<SignedRequest> pending;
  std::vector<Bytes> pending_blocks;
  Position last_position{};
  std::optional<Capabilities> peer;  // asked once, before the first operation that needs one

  explicit Impl(ClientOptions o)
      : options(std::move(o)), connection(options.host, options.port, options.timeout, kMaxAnswerBytes) {}

  // One exchange: a checked answer body for 200, the rejection otherwise, or a transport loss.
  enum class Exchange { kOk, kRejected, kLost };
  Exchange exchange(const std::string& target, const std::string& body, bool control, std::string& answer,
                    Rejection& rejection, std::string& why) {
    static const std::vector<std::pair<std::string, std::string>> kNone, kControl = {{"X-Transit-Control", "snapshot"}};
    auto res = connection.post(target, body, control ? kControl : kNone);
    if (!res.ok()) return why = res.error(), Exchange::kLost;
    if (res->status == 200) return answer = std::move(res->body), Exchange::kOk;
    auto decoded = from_json<Rejection>(res->body, kMaxAnswerBytes);
    if (!decoded.ok()) return why = "HTTP " + std::to_string(res->status) + " without a valid Rejection", Exchange::kLost;
    rejection = std::move(*decoded);
    return Exchange::kRejected;
  }

  void observe(Position position) { last_position = std::max(last_position, position); }

  std::optional<std::string> check_receipt(const Receipt& r, const SignedRequest& s, const Digest& digest) const {
    if (r.realm.value != options.realm) return "receipt of another realm";
    if (r.principal != s.request.principal || r.sequence != s.request.sequence) return "receipt for another request";
    if (r.request_digest != digest) return "receipt of another body";
    if (r.position.value == 0) return "receipt at position 0";
    if (!outcome_matches(s.request.op, r.outcome)) return "receipt outcome of another kind";
    return std::nullopt;
  }

  /// What a 200 answer comes to: the value, a problem to resend over, or a final error.
  struct Resend {
    std::string problem;
  };
  template <typename T> using Settled = std::variant<T, Resend, ClientError>;

  // Sends `body` until it is settled: accepted, refused for good, or still unknown after max_attempts.
  template <typename T, typename OnOk>
  ClientResult<T> settle(const std::string& target, const std::string& body, OnOk on_ok, bool control = false) {
    std::string last_problem;
    for (int attempt = 0; attempt < std::max(1, options.max_attempts); ++attempt) {
      if (attempt) std::this_thread::sleep_for(options.retry_backoff * attempt);
      std::string answer, why;
      Rejection rejection;
      switch (exchange(target, body, control, answer, rejection, why)) {
        case Exchange::kLost: last_problem = why; continue;
        case Exchange::kRejected: {
          const std::string what = std::string(name_of(rejection.reason)) + ": " + rejection.message.value;
          if (uncertain(rejection.code)) { last_problem = what; continue; }
          return Err{ClientError{ClientError::Kind::kRejected, rejection, what}};
        }
        case Exchange::kOk: {
          Settled<T> settled = on_ok(answer);
          if (auto* resend = std::get_if<Resend>(&settled)) { last_problem = resend->problem; continue; }
          if (auto* error = std::get_if<ClientError>(&settled)) return Err{std::move(*error)};
          return std::move(std::get<T>(settled));
        }
      }
    }
    return Err{ClientError{ClientError::Kind::kUncertain, std::nullopt, "outcome unknown after " +
                           std::to_string(options.max_attempts) + " attempts: " + last_problem}};
  }

  ClientResult<Receipt> send(const SignedRequest& s, const std::vector<Bytes>& blocks) {
    const Digest digest = request_digest(s.request);
    return settle<Receipt>("/v1/command", command_body(to_json(s), blocks), [&](const std::string& answer) -> Settled<Receipt> {
      // A malformed success authorizes nothing new: treat it as a loss and resend the same bytes.
      auto receipt = from_json<Receipt>(answer, kMaxAnswerBytes);
      if (!receipt.ok()) return Resend{"malformed receipt: " + receipt.error().message()};
      if (auto problem = check_receipt(*receipt, s, digest)) return Resend{*problem};
      observe(receipt->position);
      return std::move(*receipt);
    });
  }

  // The peer must list the capability `op` needs, else it is not sent (decision 42).
  template <typename Op> std::optional<ClientError> require(const Op& op) {
    const std::string_view needed = capability::required(op);
    if (needed.empty()) return std::nullopt;
    if (!peer) {
      auto asked = ask(CapabilitiesQuery{});
      if (!asked.ok()) return asked.error();
      peer = std::get<Capabilities>(asked->result);
    }
    for (const auto& name : peer->supported.items)
      if (name.value == needed) return std::nullopt;
    return ClientError{ClientError::Kind::kUnsupported, std::nullopt,
                       "not sent: the peer does not support " + std::string(needed)};
  }

  ClientResult<Response> ask(QueryOp op) {
    if (auto broken = check_rules(op)) return Err{invalid(*broken)};
    if (auto unsupported = require(op)) return Err{std::move(*unsupported)};
    const SignedQuery s = sign(Query{Version{}, Definition{}, {options.realm}, options.principal, op}, options.seed);
    // A snapshot's release asks for the reserved control admission (decision 76).
    const bool control = takes_control_hint(op);
    return settle<Response>("/v1/query", to_json(s), [&](const std::string& answer) -> Settled<Response> {
      auto response = from_json<Response>(answer, kMaxAnswerBytes);
      if (!response.ok()) return malformed("malformed response: " + response.error().message());
      if (response->realm.value != options.realm) return malformed("response of another realm");
      if (auto problem = result_problem(op, response->result, response->position)) return malformed(*problem);
      if (response->position < last_position) return malformed("response position went backwards");
      if (const auto* i = std::get_if<Identity>(&response->result); i && i->principal != options.principal)
        return malformed("identity of another principal");
      observe(response->position);
      return std::move(*response);
    }, control);
  }
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;

Request Client::build(Command op, Id sequence) const {
  return Request{Version{}, Definition{}, {impl_->options.realm}, impl_->options.principal, sequence, std::move(op)};
}

ClientResult<Receipt> Client::submit(Command op, std::vector<Bytes> blocks) {
  if (auto broken = check_rules(op)) return Err{invalid(*broken)};
  if (auto unsupported = impl_->require(op)) return Err{std::move(*unsupported)};
  if (impl_->pending) {  // settle the unknown outcome before signing anything new
    const SignedRequest pending = *impl_->pending;
    auto settled = resubmit(pending, impl_->pending_blocks);
    if (!settled.ok() && settled.error().kind == ClientError::Kind::kUncertain) return settled;
  }
  if (!impl_->next_sequence) {
    auto me = identity();
    if (!me.ok()) return Err{me.error()};
    impl_->next_sequence = me->sequence + 1;
  }
  const SignedRequest s = sign(build(std::move(op), *impl_->next_sequence), impl_->options.seed);
  return resubmit(s, blocks);
}

ClientResult<Receipt> Client::resubmit(const SignedRequest& s, const std::vector<Bytes>& blocks) {
  if (auto unsupported = impl_->require(s.request.op)) return Err{std::move(*unsupported)};
  auto result = impl_->send(s, blocks);
  const bool ours = s.request.principal == impl_->options.principal;
  if (!result.ok() && result.error().kind == ClientError::Kind::kUncertain) {
    if (ours) impl_->pending = s, impl_->pending_blocks = blocks;
    return result;
  }
  if (ours && impl_->pending && impl_->pending->request.sequence == s.request.sequence)
    impl_->pending.reset(), impl_->pending_blocks.clear();
  // Accepted, or refused without consuming it: the sequence after an accepted one is next.
  if (ours && result.ok()) impl_->next_sequence = std::max(impl_->next_sequence.value_or(0), s.request.sequence + 1);
  if (ours && !result.ok() && result.error().rejection) {
    const Reason reason = result.error().rejection->reason;
    if (reason == Reason::kSequenceGap || reason == Reason::kSequenceReused) impl_->next_sequence.reset();  // learn it again
  }
  return result;
}

const std::optional<SignedRequest>& Client::pending() const { return impl_->pending; }

ClientResult<Response> Client::query(QueryOp op) { return impl_->ask(std::move(op)); }

ClientResult<Identity> Client::identity() {
  auto r = query(IdentityQuery{});
  if (!r.ok()) return Err{r.error()};
  return std::get<Identity>(r->result);
}

ClientResult<Capabilities> Client::capabilities() {
  if (!impl_->peer) {
    auto r = query(CapabilitiesQuery{});
    if (!r.ok()) return Err{r.error()};
    impl_->peer = std::get<Capabilities>(r->result);
  }
  return *impl_->peer;
}

ClientResult<Capabilities> Client::require(std::string_view name) {
  auto c = capabilities();
  if (!c.ok()) return c;
  for (const auto& n : c->supported.items)
    if (n.value == name) return c;
  return Err{ClientError{ClientError::Kind::kUnsupported, std::nullopt,
                         "the peer does not support " + std::string(name)}};
}

ClientResult<RuntimeInfo> Client::runtime(Pid pid) {
  auto r = query(RuntimeQuery{pid});
  if (!r.ok()) return Err{r.error()};
  return std::get<RuntimeInfo>(std::move(r->result));
}

ClientResult<Client::Observation> Client::observe() {
  auto r = query(IdentityQuery{});
  if (!r.ok()) return Err{r.error()};
  return Observation{std::get<Identity>(r->result), r->position};
}

ClientResult<Decision> Client::decision(PrincipalId principal, Scope scope, Permissions permissions) {
  auto r = query(DecisionQuery{principal, std::move(scope), permissions});
  if (!r.ok()) return Err{r.error()};
  return std::get<Decision>(r->result);
}

const ClientOptions& Client::options() const { return impl_->options; }

std::string Client::signed_query(QueryOp op) const {
  const auto& o = impl_->options;
  return to_json(sign(Query{Version{}, Definition{}, {o.realm}, o.principal, std::move(op)}, o.seed));
}

ClientResult<PayloadInfo> Client::payload(Id payload) {
  auto r = query(PayloadRead{payload});
  if (!r.ok()) return Err{r.error()};
  return std::get<PayloadInfo>(std::move(r->result));
}

ClientResult<EffectInfo> Client::effect(Id effect) {
  auto r = query(EffectRead{effect});
  if (!r.ok()) return Err{r.error()};
  return std::get<EffectInfo>(std::move(r->result));
}

ClientResult<EffectPage> Client::effects(std::optional<Pid> pid, EffectFilter filter, std::optional<Cursor> cursor) {
  auto r = query(ListEffects{pid, filter, cursor});
  if (!r.ok()) return Err{r.error()};
  return std::get<EffectPage>(std::move(r->result));
}

void Client::set_next_sequence(Id next) { impl_->next_sequence = next; }
std::optional<Id> Client::next_sequence() const { return impl_->next_sequence; }
Position Client::last_position() const { return impl_->last_position; }

ClientResult<SnapshotOpened> Client::open_snapshot(ResourceId resource, std::optional<Revision> revision, Millis lease_ms) {
  auto r = query(OpenSnapshot{resource, revision, lease_ms});
  if (!r.ok()) return Err{r.error()};
  return std::get<SnapshotOpened>(r->result);
}

ClientResult<SnapshotPage> Client::snapshot_entries(const SnapshotToken& token, std::optional<EntryCursor> cursor) {
  auto r = query(SnapshotEntries{token, std::nullopt, std::move(cursor)});
  if (!r.ok()) return Err{r.error()};
  return std::get<SnapshotPage>(r->result);
}

ClientResult<SnapshotClosed> Client::close_snapshot(const SnapshotToken& token) {
  auto r = query(CloseSnapshot{token});
  if (!r.ok()) return Err{r.error()};
  return std::get<SnapshotClosed>(r->result);
}

ClientResult<SnapshotRange> Client::snapshot_read(SnapshotRead read) {
  auto r = query(std::move(read));
  if (!r.ok()) return Err{r.error()};
  return std::get<SnapshotRange>(r->result);
}

ClientResult<Segment> Client::segment(Basis basis, std::optional<SegmentCursor> cursor) {
  auto r = query(ReadSegment{std::move(basis), std::move(cursor)});
  if (!r.ok()) return Err{r.error()};
  return std::get<Segment>(r->result);
}

ClientResult<Completion> Client::read_result(const Basis& basis, const std::function<bool(const Entry&)>& sink) {
  std::optional<SegmentCursor> cursor;
  for (;;) {
    auto s = segment(basis, cursor);
    if (!s.ok()) return Err{s.error()};
    // Each segment was checked to chain on from its cursor (checks.cc), so
    // the evidence below covers exactly the records handed to sink.
    for (const auto& e : s->items.items)
      if (!sink(e)) return Err{ClientError{ClientError::Kind::kInvalid, std::nullopt, "stopped by the caller"}};
    if (s->complete) return *s->complete;
    cursor = s->next;
  }
}

}  // namespace cowboy::transit
