#include "net/process_metrics.h"

#include "net/metrics_text.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace cowboy::net {

namespace {

// Fields of /proc/self/stat after the command name (which may hold spaces):
// index 0 is field 3 ("state") of proc(5).
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  auto close = line.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(line.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double boot_time_seconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double v = 0;
      in >> v;
      return v;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

}  // namespace

std::string process_metrics_text() {
  MetricsText out;  // its precision keeps a start time's fraction (seconds since 1970)
  auto series = [&](const char* name, const char* type, const char* help, double value) {
    out.series(name, type, help, value);
  };
  auto f = stat_fields();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  auto field = [&](std::size_t proc5_index) {  // proc(5) numbers fields from 1; f[0] is field 3
    return proc5_index - 3 < f.size() ? std::stod(f[proc5_index - 3]) : 0.0;
  };
  series("process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.",
         (field(14) + field(15)) / ticks);
  series("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         field(24) * static_cast<double>(::sysconf(_SC_PAGESIZE)));
  series("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", field(23));
  series("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.",
         boot_time_seconds() + field(22) / ticks);
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++fds;
  series("process_open_fds", "gauge", "Open file descriptors.", fds);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  series("process_max_fds", "gauge", "The most file descriptors the process may open.", static_cast<double>(limit.rlim_cur));
  return out.text();
}

}  // namespace cowboy::net
