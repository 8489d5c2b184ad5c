// What /proc says about another process, for the abuse tests: its resident
// memory and the CPU each of its threads has used.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

namespace cowboy::testing {

/// A field of /proc/PID/status in KiB (0 when the process is gone).
inline std::uint64_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (in >> key)
    if (key == field) {
      std::uint64_t kib = 0;
      in >> kib;
      return kib;
    }
  return 0;
}
/// Resident memory now (VmRSS), and the most it has been (VmHWM) since start or reset_peak_rss.
inline std::uint64_t rss_kib(pid_t pid) { return status_kib(pid, "VmRSS:"); }
inline std::uint64_t peak_rss_kib(pid_t pid) { return status_kib(pid, "VmHWM:"); }
/// Sets VmHWM to VmRSS (Linux 4.0+, a process of the same user); false if refused.
inline bool reset_peak_rss(pid_t pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

/// CPU seconds (user + system) of each thread of `pid`, by thread id.
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

/// The largest share of one core any thread of `pid` used from `before` to `after`, `seconds` apart.
inline double busiest_thread(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                             double seconds) {
  double busiest = 0;
  for (const auto& [tid, cpu] : after) {
    auto it = before.find(tid);
    busiest = std::max(busiest, (cpu - (it == before.end() ? 0.0 : it->second)) / seconds);
  }
  return busiest;
}

}  // namespace cowboy::testing
