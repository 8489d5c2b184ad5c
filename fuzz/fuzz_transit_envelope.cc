// Transit's strict JSON decoder and the two signed envelopes (a command with
// any block bodies after it), as any HTTP client can reach them, plus the answers a client decodes. The first byte
// picks the type. Whatever decodes is canonical: its spelling is the input,
// byte for byte; whatever is refused names a catalogued rule in a Rejection
// that is itself valid JSON.
#include <cstdlib>

#include "transit/contract/envelope.h"
#include "transit/contract/signing.h"

namespace {

// A refusal names a catalogued reason, and the Rejection quoting it is valid
// JSON (so valid UTF-8) whatever bytes the input held.
bool answerable(const cowboy::transit::DecodeError& e) {
  using namespace cowboy::transit;
  if (static_cast<std::size_t>(e.reason) >= std::size(kReasons)) return false;
  return from_json<Rejection>(to_json(make_rejection({"dev"}, e.reason, e.message())), kMaxAnswerBytes).ok();
}

template <typename T, typename Decode> void check(std::string_view text, Decode decode) {
  auto value = decode(text);
  if (!value.ok()) {
    if (!answerable(value.error())) std::abort();
    return;
  }
  if (cowboy::transit::to_json(*value) != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy::transit;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {  // a command body: the envelope, then any block bodies
      Digest digest{};
      auto r = decode_command_body(text, &digest);
      if (!r.ok()) {
        if (!answerable(r.error())) std::abort();
        break;
      }
      if (digest != request_digest(r->request.request)) std::abort();  // the inner text is the canonical request
      if (command_body(to_json(r->request), r->blocks) != text) std::abort();
      break;
    }
    case 1:
      check<SignedQuery>(text, [](std::string_view t) {
        Digest digest{};
        auto q = decode_signed_query(t, &digest);
        if (q.ok() && digest != query_digest(q->query)) std::abort();
        return q;
      });
      break;
    case 2: check<Receipt>(text, [](std::string_view t) { return from_json<Receipt>(t, kMaxAnswerBytes); }); break;
    case 3: check<Response>(text, [](std::string_view t) { return from_json<Response>(t, kMaxAnswerBytes); }); break;
    case 4: check<Rejection>(text, [](std::string_view t) { return from_json<Rejection>(t, kMaxAnswerBytes); }); break;
    case 5: check<Genesis>(text, [](std::string_view t) { return from_json<Genesis>(t, kMaxAnswerBytes); }); break;
  }
  return 0;
}
