// A one-line progress bar on stderr for long commands: count, rate and, when
// the total is known, a bar and the ETA. Silent unless stderr is a terminal
// (and the command was asked to show it), so scripts and --json stay clean.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace cowboy::cbqs_cli {

class Progress {
 public:
  Progress(std::string label, std::optional<std::uint64_t> total, bool wanted)
      : label_(std::move(label)), total_(total), on_(wanted && ::isatty(2)) {}
  ~Progress() { finish(); }

  void update(std::uint64_t done) {
    if (!on_) return;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(100) && (!total_ || done < *total_)) return;
    last_ = now;
    double seconds = std::chrono::duration<double>(now - start_).count();
    double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    std::string line = "\r" + label_ + " " + std::to_string(done);
    if (total_ && *total_ > 0) {
      int filled = static_cast<int>(30.0 * static_cast<double>(done) / static_cast<double>(*total_));
      line += "/" + std::to_string(*total_) + " [" + std::string(filled, '#') + std::string(30 - std::min(filled, 30), '.') + "]";
      if (rate > 0) line += " ETA " + std::to_string(static_cast<long>(static_cast<double>(*total_ - done) / rate)) + "s";
    }
    line += " " + std::to_string(static_cast<long>(rate)) + "/s";
    std::fputs(line.c_str(), stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fputs("\n", stderr);
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  std::optional<std::uint64_t> total_;
  bool on_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now(), last_{};
};

}  // namespace cowboy::cbqs_cli
