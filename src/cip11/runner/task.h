// The job kinds a runner built on this library executes (docs/cip11.md,
// "Services"). A job's spec payload - SubmitJob.spec, carried inside the
// DevJobSpecV1 the assignment holds - is one JSON object with one key:
//
//   {"echo": "text"}                          the text back
//   {"sha256": "text"}                        the lowercase hex SHA-256 of the text
//   {"sleep_ms": 250}                         waits (at most 60 s), then "slept 250 ms"
//   {"get": "http://127.0.0.1:8080/path"}     the body of an HTTP GET to a loopback URL
//                                             that starts with an allow-listed prefix
//
// Nothing here runs a shell or another program. A spec that is not one of
// these, or a task that fails, still ends the job: its result is the text
// "error: <why>", the same on every runner, so committees agree on it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy::cip11 {

struct EchoTask {
  std::string text;
};
struct Sha256Task {
  std::string text;
};
struct SleepTask {
  std::uint64_t ms = 0;
};
struct GetTask {
  std::string url;
};
using Task = std::variant<EchoTask, Sha256Task, SleepTask, GetTask>;

inline constexpr std::uint64_t kMaxSleepMs = 60'000;

/// Strict: one of the four objects above, nothing else; the error says why.
Result<Task, std::string> parse_task(ByteView spec_payload);

struct TaskLimits {
  std::vector<std::string> allowed_url_prefixes;  // {"get": ...} only for URLs starting with one of these
  std::size_t max_result_bytes = 32 * 1024;       // cip11::chain::kMaxResultBytes
};

/// Set to stop a running task (JobCancel, §10.5); a stopped task's result is never sent.
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

/// Told how far a task is (0-100) while it runs (§10.4): a sleep reports each
/// quarter of its time, a get each quarter of the Content-Length its answer
/// declares, as the body arrives. An echo or a sha256 is done at once and
/// reports nothing.
using ProgressFn = std::function<void(std::uint8_t fraction)>;

/// Runs the task of `spec_payload` to its result bytes (see above). Blocks:
/// call it on an execution thread. nullopt if `cancel` was set meanwhile.
std::optional<Bytes> run_task(ByteView spec_payload, const TaskLimits& limits, const CancelFlag& cancel,
                              const ProgressFn& progress = {});

}  // namespace cowboy::cip11
