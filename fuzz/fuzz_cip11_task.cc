// A job's spec payload as the runner parses it (cip11/runner/task.h): any
// bytes a submitter puts on chain. Parsing never crashes, and what parses
// keeps the bounds the runner relies on.
#include <cstdlib>

#include "cip11/runner/task.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  auto task = cip11::parse_task(ByteView(data, size));
  if (!task) {
    if (task.error().empty()) std::abort();  // a refusal always says why
    return 0;
  }
  if (const auto* s = std::get_if<cip11::SleepTask>(&*task); s && s->ms > cip11::kMaxSleepMs) std::abort();
  return 0;
}
