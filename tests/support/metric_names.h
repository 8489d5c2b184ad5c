// What the dashboard and alert tests compare: the metric names a live
// /metrics exports and the ones a PromQL expression queries, in a Grafana
// dashboard's panels or a Prometheus rules file's `expr:` lines.
#pragma once

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

/// A dashboard's or a rules file's queries against what a service exports.
struct QueryCheck {
  std::set<std::string> queried;     // every metric name the file queries
  std::vector<std::string> missing;  // one line per query of a name not exported: where, and the name
};

/// Each panel target's `expr` of a Grafana dashboard (JSON text).
inline QueryCheck check_dashboard(const std::string& json_text, const std::string& service,
                                  const std::set<std::string>& exported) {
  QueryCheck check;
  const auto dashboard = nlohmann::json::parse(json_text);
  for (const auto& panel : dashboard["panels"])
    for (const auto& target : panel["targets"])
      for (const auto& name : queried_names(target["expr"].get<std::string>(), service)) {
        check.queried.insert(name);
        if (!exported.contains(name))
          check.missing.push_back("panel \"" + panel["title"].get<std::string>() + "\" queries " + name);
      }
  return check;
}

/// Each `expr:` line of a Prometheus rules file (YAML text, one expression per line).
inline QueryCheck check_alert_rules(const std::string& yaml_text, const std::string& service,
                                    const std::set<std::string>& exported) {
  QueryCheck check;
  std::istringstream rules(yaml_text);
  for (std::string line; std::getline(rules, line);) {
    const auto at = line.find("expr:");
    if (at == std::string::npos) continue;
    for (const auto& name : queried_names(line.substr(at + 5), service)) {
      check.queried.insert(name);
      if (!exported.contains(name)) check.missing.push_back("an alert queries " + name);
    }
  }
  return check;
}

}  // namespace cowboy::testing
