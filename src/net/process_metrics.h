// The process_* series every Prometheus client library exports (CPU, memory,
// file descriptors, start time), read from /proc/self, so dashboards written
// for any exporter work on our services too.
#pragma once

#include <string>

namespace cowboy::net {

/// process_cpu_seconds_total, process_resident_memory_bytes,
/// process_virtual_memory_bytes, process_open_fds, process_max_fds and
/// process_start_time_seconds, in the text exposition format.
std::string process_metrics_text();

}  // namespace cowboy::net
