// What the abuse tests read about a child process from /proc: its resident
// memory and each thread's CPU time.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

namespace cowboy::testing {

/// VmRSS in KiB (0 when the process is gone).
inline std::uint64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (in >> key)
    if (key == "VmRSS:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib;
    }
  return 0;
}

/// Per-thread CPU seconds (user + system), by thread id.
inline std::map<std::string, double> thread_cpu(pid_t pid) {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(t.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    out[t.path().filename().string()] = (utime + stime) / tick;
  }
  return out;
}

/// The largest share of one CPU any thread used between two thread_cpu readings `seconds` apart.
inline double busiest_thread(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                             double seconds) {
  double busiest = 0;
  for (const auto& [tid, cpu] : after) {
    auto b = before.find(tid);
    busiest = std::max(busiest, (cpu - (b == before.end() ? 0.0 : b->second)) / seconds);
  }
  return busiest;
}

}  // namespace cowboy::testing
