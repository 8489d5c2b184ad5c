// What the dashboard and alert tests compare: the metric names a live
// /metrics exports and the ones a PromQL expression queries.
#pragma once

#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace cowboy::testing {

/// Sample names /metrics can carry: each family of a "# TYPE" line, and a
/// histogram's _bucket, _sum and _count.
inline std::set<std::string> exported_names(const std::string& text) {
  std::set<std::string> names;
  std::istringstream in(text);
  const std::regex type_line(R"(^# TYPE (\S+) (\S+)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, type_line)) continue;
    names.insert(m[1]);
    if (m[2] == "histogram")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(std::string(m[1]) + suffix);
  }
  return names;
}

/// The metric names in a PromQL expression: words starting `<service>_` or `process_`.
inline std::set<std::string> queried_names(const std::string& expr, const std::string& service) {
  std::set<std::string> names;
  const std::regex metric("\\b((?:" + service + "|process)_[a-z0-9_]+)\\b");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1]);
  return names;
}

}  // namespace cowboy::testing
