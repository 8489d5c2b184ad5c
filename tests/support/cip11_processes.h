// Real `cip11d` and `cip11-runner` child processes on loopback, and what the
// service tests read from them: the dev manifest, /metrics, runner events.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cip11/chain/machine.h"
#include "devchain/http_client.h"
#include "devchain/json.h"
#include "devchain/keyfile.h"
#include "devchain/wallet.h"
#include "net/prometheus_text.h"
#include "process.h"

namespace cowboy::testing {

inline std::uint16_t port_in(const std::optional<std::string>& line, const std::string& pattern) {
  std::smatch m;
  if (line && std::regex_search(*line, m, std::regex(pattern))) return static_cast<std::uint16_t>(std::stoi(m[1]));
  return 0;
}

/// The --block-ms value `extra` holds (taken out of it), else 100.
inline std::string take_block_ms(std::vector<std::string>& extra) {
  auto it = std::find(extra.begin(), extra.end(), "--block-ms");
  if (it == extra.end() || it + 1 == extra.end()) return "100";
  std::string ms = *(it + 1);
  extra.erase(it, it + 2);
  return ms;
}

/// `cip11d --dev` with 100 ms blocks unless `extra` says --block-ms (or, with
/// --chain-url and --key in `extra`, a validator following that chain).
class Cip11dProcess {
 public:
  /// `log_file`: where cip11d's logfmt log (stderr) goes; default this process's stderr.
  /// `prefix` runs before the binary (e.g. prlimit).
  Cip11dProcess(const std::filesystem::path& data, std::vector<std::string> extra = {}, std::uint16_t chain_port = 0,
                std::uint16_t admin_port = 0, const std::string& log_file = {}, std::vector<std::string> prefix = {})
      : data_(data), child_([&] {
          std::vector<std::string> argv = std::move(prefix);
          for (std::string a : {std::string(COWBOY_BIN_DIR) + "/cip11d", std::string("--data-dir"), data.string(),
                                std::string("--admin-listen"), "127.0.0.1:" + std::to_string(admin_port)})
            argv.push_back(std::move(a));
          bool follower = false;
          for (const auto& a : extra) follower = follower || a == "--chain-url";
          if (!follower)
            for (std::string a : {std::string("--dev"), std::string("--dev-listen"), std::string("127.0.0.1:0"),
                                  std::string("--chain-listen"), "127.0.0.1:" + std::to_string(chain_port),
                                  std::string("--block-ms"), take_block_ms(extra)})
              argv.push_back(std::move(a));
          for (auto& a : extra) argv.push_back(std::move(a));
          return argv;
        }(), log_file) {
    auto first = child_.wait_for_line("cip11d listening on quic://");
    if (first && first->find("admin") == std::string::npos) first.reset();
    admin_port_ = port_in(first, R"(admin http://127\.0\.0\.1:(\d+))");
    quic_port_ = port_in(first, R"(quic://127\.0\.0\.1:(\d+))");
    std::ifstream in(data_ / "cip11-dev.json");
    manifest_ = nlohmann::json::parse(in, nullptr, false);
  }
  bool up() const { return admin_port_ != 0; }
  std::uint16_t admin_port() const { return admin_port_; }
  std::uint16_t quic_port() const { return quic_port_; }
  const std::filesystem::path& data() const { return data_; }
  const nlohmann::json& manifest() const { return manifest_; }
  std::string chain_url() const { return manifest_.value("chain_url", std::string()); }
  devchain::HttpClient chain() const { return *devchain::HttpClient::from_url(chain_url()); }
  std::uint16_t chain_port() const { return static_cast<std::uint16_t>(std::stoi(chain_url().substr(chain_url().rfind(':') + 1))); }

  /// /metrics, each series summed over its labels; a series by its exact labelled line otherwise.
  std::map<std::string, double> metrics() const {
    devchain::HttpClient admin("127.0.0.1", admin_port_);
    auto text = admin.get_text("/metrics");
    return text ? net::sum_series(text->body) : std::map<std::string, double>{};
  }
  double metric(const std::string& name) const {
    auto m = metrics();
    auto it = m.find(name);
    return it == m.end() ? -1 : it->second;
  }
  std::string metrics_text() const {
    devchain::HttpClient admin("127.0.0.1", admin_port_);
    auto text = admin.get_text("/metrics");
    return text ? text->body : "";
  }
  /// The `height=` field of an event line (0 if it has none).
  static std::uint64_t height_of(const std::string& line) {
    auto at = line.find(" height=");
    return at == std::string::npos ? 0 : std::stoull(line.substr(at + 8));
  }
  void kill9() { child_.kill(SIGKILL); }
  void terminate() { child_.kill(SIGTERM); }
  pid_t pid() const { return child_.pid(); }

 private:
  std::filesystem::path data_;
  ChildProcess child_;
  std::uint16_t admin_port_ = 0, quic_port_ = 0;
  nlohmann::json manifest_;
};

/// `cip11-runner --dev DIR --runner N`, its event lines kept for later questions.
class RunnerProcess {
 public:
  RunnerProcess(const std::filesystem::path& dev_dir, unsigned index, std::vector<std::string> extra = {})
      : RunnerProcess([&] {
          std::vector<std::string> args{"--dev", dev_dir.string(), "--runner", std::to_string(index), "--block-ms",
                                        take_block_ms(extra)};
          for (auto& a : extra) args.push_back(std::move(a));
          return args;
        }()) {}
  /// `cip11-runner` with exactly these arguments.
  explicit RunnerProcess(std::vector<std::string> args)
      : child_([&] {
          args.insert(args.begin(), std::string(COWBOY_BIN_DIR) + "/cip11-runner");
          return args;
        }()) {}

  /// The first event line (seen before or arriving within `timeout`) containing every needle.
  std::optional<std::string> wait_for(const std::vector<std::string>& needles,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    auto matches = [&](const std::string& line) {
      return std::all_of(needles.begin(), needles.end(), [&](const std::string& n) { return line.find(n) != std::string::npos; });
    };
    for (const auto& l : lines_)
      if (matches(l)) return l;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto line = child_.wait_for_line("", left);
      if (!line) return std::nullopt;
      lines_.push_back(*line);
      if (matches(*line)) return line;
    }
  }
  /// Whether any line read so far (after draining what is waiting for `settle`) contains every needle.
  bool saw(const std::vector<std::string>& needles, std::chrono::milliseconds settle = std::chrono::milliseconds(0)) {
    return wait_for(needles, settle).has_value();
  }
  /// Waits until `n` event lines hold `needle`.
  bool wait_count(const std::string& needle, std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (count(needle) < n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      auto line = child_.wait_for_line("", left);
      if (!line) return false;
      lines_.push_back(*line);
    }
    return true;
  }
  std::size_t count(const std::string& needle) const {
    return static_cast<std::size_t>(
        std::count_if(lines_.begin(), lines_.end(), [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
  }
  /// The event lines read so far that contain `needle`.
  std::vector<std::string> lines_with(const std::string& needle) const {
    std::vector<std::string> out;
    std::copy_if(lines_.begin(), lines_.end(), std::back_inserter(out),
                 [&](const std::string& l) { return l.find(needle) != std::string::npos; });
    return out;
  }
  /// The `height=` field of an event line (0 if it has none).
  static std::uint64_t height_of(const std::string& line) {
    auto at = line.find(" height=");
    return at == std::string::npos ? 0 : std::stoull(line.substr(at + 8));
  }
  void kill9() { child_.kill(SIGKILL); }
  void terminate() { child_.kill(SIGTERM); }

 private:
  ChildProcess child_;
  std::vector<std::string> lines_;
};

/// The job_id of a SubmitJob the dev submitter signs.
inline std::optional<cip11::JobId> submit_job(devchain::ChainApi& chain, const std::filesystem::path& submitter_key,
                                               const std::string& spec, std::uint64_t timeout_blocks = 50,
                                               std::uint32_t runners = 1) {
  auto key = devchain::load_key(submitter_key);
  if (!key) return std::nullopt;
  devchain::Wallet wallet(chain, *key);
  cip11::chain::SubmitJob job{cip11::JobKind::kCustom, Bytes(spec.begin(), spec.end()), timeout_blocks, runners, 0};
  auto receipt = wallet.send_and_wait(devchain::Cip11Call{cip11::chain::encode_instruction(job)});
  if (!receipt || !receipt->ok()) return std::nullopt;
  return receipt->job_id;
}

}  // namespace cowboy::testing
