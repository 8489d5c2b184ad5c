// Small helpers the benchmarks share: CPU time from /proc and order statistics.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace cowboy::bench {

/// utime + stime, in seconds, of a /proc/.../stat file (a process or a thread).
inline double stat_cpu_seconds(const std::filesystem::path& stat_file) {
  std::ifstream stat(stat_file);
  std::string line;
  std::getline(stat, line);
  if (line.empty()) return 0;
  std::istringstream fields(line.substr(line.rfind(')') + 2));  // after "pid (comm) "
  std::string f;
  std::uint64_t utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoull(f);
    if (i == 15) {
      stime = std::stoull(f);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// CPU seconds used so far by this process's threads named `prefix`* (the
/// broker's threads are cbqs-io, cbqs-commit, cbqs-snapshot), from /proc.
inline double thread_cpu_seconds(std::string_view prefix) {
  double total = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name.starts_with(prefix)) total += stat_cpu_seconds(task.path() / "stat");
  }
  return total;
}

/// One process's threads by name: CPU seconds and wake-ups (voluntary context
/// switches) so far, from /proc/<pid>/task. Threads that ended are not in it.
struct ThreadUse {
  double cpu_seconds = 0;
  std::uint64_t wakeups = 0;
};
inline std::map<std::string, ThreadUse> threads_by_name(int pid) {
  std::map<std::string, ThreadUse> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    auto& use = out[name];
    use.cpu_seconds += stat_cpu_seconds(task.path() / "stat");
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.starts_with("voluntary_ctxt_switches:")) use.wakeups += std::stoull(line.substr(24));
  }
  return out;
}

/// Bytes this process has handed to write(2) and its kin so far, every thread
/// counted ("wchar" of /proc/self/io): a store's log, flush and compaction writes.
inline std::uint64_t process_write_bytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value)
    if (key == "wchar:") return value;
  return 0;
}

/// The p-quantile (0..1) of `v` by rank; 0 for an empty sample.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::size_t k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

inline double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

}  // namespace cowboy::bench
