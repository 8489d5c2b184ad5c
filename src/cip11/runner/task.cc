#include "cip11/runner/task.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

#include "common/crypto.h"
#include "net/host_port.h"
#include "net/http_connection.h"

namespace cowboy::cip11 {
namespace {

using Json = nlohmann::json;

Bytes text_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }
Bytes failure(std::string_view why) { return text_bytes("error: " + std::string(why)); }

// "http://<loopback host>:<port><path>"; the host must name this machine.
std::optional<std::pair<std::pair<std::string, std::uint16_t>, std::string>> loopback_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) return std::nullopt;
  std::string rest = url.substr(kScheme.size());
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  auto host_port = net::parse_host_port(authority);
  if (!host_port) return std::nullopt;
  const std::string& host = host_port->first;
  if (host != "127.0.0.1" && host != "localhost") return std::nullopt;
  return std::pair{*host_port, path};
}

Bytes run_get(const std::string& url, const TaskLimits& limits, const ProgressFn& progress) {
  bool allowed = false;
  for (const auto& prefix : limits.allowed_url_prefixes) allowed = allowed || (!prefix.empty() && url.starts_with(prefix));
  if (!allowed) return failure("url not allow-listed");
  auto parts = loopback_url(url);
  if (!parts) return failure("only http:// URLs on 127.0.0.1 or localhost are fetched");
  net::HttpConnection client(parts->first.first, parts->first.second, std::chrono::seconds(5), limits.max_result_bytes);
  // Each quarter of a declared Content-Length, once, as the body arrives (§10.4).
  int quarter = 0;
  net::BodyProgress body_progress;
  if (progress)
    body_progress = [&](std::size_t received, std::size_t total) {
      while (quarter < 3 && total > 0 && received * 4 >= total * static_cast<std::size_t>(quarter + 1))
        progress(static_cast<std::uint8_t>(25 * ++quarter));
    };
  auto reply = client.get(parts->second, body_progress);
  if (!reply) return failure(reply.error());
  if (reply->status != 200) return failure("status " + std::to_string(reply->status));
  return text_bytes(reply->body);
}

}  // namespace

Result<Task, std::string> parse_task(ByteView spec_payload) {
  Json j = Json::parse(spec_payload.begin(), spec_payload.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.size() != 1)
    return Err{std::string("the spec must be a JSON object with one key: echo, sha256, sleep_ms or get")};
  const std::string key = j.begin().key();  // items() would hand out a proxy that dies with the statement
  const Json& value = j.begin().value();
  if ((key == "echo" || key == "sha256" || key == "get") && !value.is_string())
    return Err{"\"" + key + "\" takes a string"};
  if (key == "echo") return Task{EchoTask{value.get<std::string>()}};
  if (key == "sha256") return Task{Sha256Task{value.get<std::string>()}};
  if (key == "get") return Task{GetTask{value.get<std::string>()}};
  if (key == "sleep_ms") {
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() > kMaxSleepMs)
      return Err{"\"sleep_ms\" takes an integer from 0 to " + std::to_string(kMaxSleepMs)};
    return Task{SleepTask{value.get<std::uint64_t>()}};
  }
  return Err{"unknown task \"" + key + "\": echo, sha256, sleep_ms or get"};
}

std::optional<Bytes> run_task(ByteView spec_payload, const TaskLimits& limits, const CancelFlag& cancel,
                              const ProgressFn& progress) {
  auto cancelled = [&] { return cancel && cancel->load(); };
  auto task = parse_task(spec_payload);
  Bytes result;
  if (!task) {
    result = failure(task.error());
  } else if (const auto* t = std::get_if<EchoTask>(&*task)) {
    result = text_bytes(t->text);
  } else if (const auto* t = std::get_if<Sha256Task>(&*task)) {
    result = text_bytes(to_hex(crypto::sha256(as_bytes(t->text))));
  } else if (const auto* t = std::get_if<SleepTask>(&*task)) {
    // In slices, so a JobCancel stops it within 10 ms.
    const auto start = std::chrono::steady_clock::now();
    auto until = start + std::chrono::milliseconds(t->ms);
    int quarter = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (cancelled()) return std::nullopt;
      const auto done = std::chrono::steady_clock::now() - start;
      if (progress && quarter < 3 && done >= std::chrono::milliseconds(t->ms) * (quarter + 1) / 4)
        progress(static_cast<std::uint8_t>(25 * ++quarter));
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(10), until - std::chrono::steady_clock::now()));
    }
    result = text_bytes("slept " + std::to_string(t->ms) + " ms");
  } else {
    result = run_get(std::get<GetTask>(*task).url, limits, progress);
  }
  if (cancelled()) return std::nullopt;
  if (result.size() > limits.max_result_bytes) result = failure("the result exceeds " + std::to_string(limits.max_result_bytes) + " bytes");
  return result;
}

}  // namespace cowboy::cip11
