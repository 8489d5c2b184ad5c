#include "transit/node/http_routes.h"

#include "transit/contract/envelope.h"
#include "transit/contract/operations.h"
#include "transit/contract/signing.h"

namespace cowboy::transit::node {
namespace {

constexpr std::string_view kControlHeader = "X-Transit-Control";

net::HttpReply ok(std::string body) { return net::HttpReply{200, "application/json", std::move(body)}; }

}  // namespace

net::HttpReply Routes::reject(const Refusal& refusal) const {
  ++rejected_[static_cast<std::size_t>(refusal.reason)];
  const Rejection r = make_rejection(sequencer_.genesis().realm, refusal.reason, refusal.message);
  return net::HttpReply{http_status(refusal.code()), "application/json", to_json(r)};
}

net::HttpReply Routes::reject(const DecodeError& error) const {
  return reject(Refusal{error.reason, error.message()});
}

void Routes::handle(net::HttpRequest request, net::HttpResponder respond) {
  const std::string_view path = std::string_view(request.target).substr(0, request.target.find('?'));
  const bool is_command = path == "/v1/command";
  if (!is_command && path != "/v1/query")
    return respond(reject(Refusal{Reason::kUnknownRoute, "routes: POST /v1/command, POST /v1/query"}));
  if (request.method != "POST")
    return respond(reject(Refusal{Reason::kMethodNotAllowed, "use POST"}));
  // The hint is unsigned scheduling metadata: it admits a snapshot's release
  // into the control reserve and proves nothing (decision 76).
  bool control = false;
  if (const auto hints = request.header_count(kControlHeader)) {
    if (hints > 1) return respond(reject(Refusal{Reason::kDuplicateControlHint, "one X-Transit-Control at most"}));
    if (request.header(kControlHeader) != "snapshot")
      return respond(reject(Refusal{Reason::kUnknownControlHint, "the only hint is snapshot"}));
    if (is_command) return respond(reject(hint_not_allowed()));
    control = true;
  }
  if (is_command) return command(request, std::move(respond));
  query(request, control, std::move(respond));
}

Refusal Routes::hint_not_allowed() {
  return Refusal{Reason::kControlHintNotAllowed, "snapshot is only for close_snapshot and snapshot_read with finish: true"};
}

Result<PublicKey, Refusal> authenticate(const Sequencer& sequencer, const Text<1, 64>& realm, PrincipalId principal,
                                        const Digest& digest, const Signature& signature) {
  if (realm != sequencer.genesis().realm)
    return Err{Refusal{Reason::kForeignRealm, "this node serves another realm"}};
  const auto key = sequencer.key_of(principal);
  if (!key) return Err{Refusal{Reason::kUnknownPrincipal, "no live principal " + std::to_string(principal.value)}};
  if (!verify_digest(digest, signature, *key))
    return Err{Refusal{Reason::kBadSignature, "the signature does not verify"}};
  return *key;
}

template <typename Answer> std::function<void(Result<Answer, Refusal>)> Routes::answer_with(net::HttpResponder respond) const {
  return [this, respond = std::move(respond)](Result<Answer, Refusal> r) {
    respond(r.ok() ? ok(to_json(*r)) : reject(r.error()));
  };
}

void Routes::command(const net::HttpRequest& http, net::HttpResponder respond) {
  Digest digest;
  auto decoded = decode_command_body(http.body, &digest);
  if (!decoded.ok()) return respond(reject(decoded.error()));
  const auto& request = decoded->request;
  auto key = authenticate(sequencer_, request.request.realm, request.request.principal, digest, request.signature);
  if (!key.ok()) return respond(reject(key.error()));
  sequencer_.submit(std::move(*decoded), digest, *key, answer_with<Receipt>(std::move(respond)));
}

void Routes::query(const net::HttpRequest& http, bool control, net::HttpResponder respond) {
  Digest digest;
  auto decoded = decode_signed_query(http.body, &digest);
  if (!decoded.ok()) return respond(reject(decoded.error()));
  // Which queries may carry the hint is known once the body is decoded; still before the signature.
  if (control && !takes_control_hint(decoded->query.op)) return respond(reject(hint_not_allowed()));
  auto key = authenticate(sequencer_, decoded->query.realm, decoded->query.principal, digest, decoded->signature);
  if (!key.ok()) return respond(reject(key.error()));
  sequencer_.query(std::move(*decoded), digest, *key, answer_with<Response>(std::move(respond)), control);
}

}  // namespace cowboy::transit::node
