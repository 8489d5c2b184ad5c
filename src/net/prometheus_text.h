// Reading the Prometheus text format cbqsd's /metrics serves: each series
// summed over its labels. For tools (cbqs status, the peer benchmark).
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace cowboy::net {

/// Series name -> the sum of its samples (labels folded together); comments skipped.
inline std::map<std::string, double> sum_series(const std::string& text) {
  std::map<std::string, double> sums;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto value = line.rfind(' ');
    if (value == std::string::npos) continue;
    try {
      sums[line.substr(0, line.find_first_of("{ "))] += std::stod(line.substr(value + 1));
    } catch (const std::exception&) {  // a value that is not a number: not a sample we read
    }
  }
  return sums;
}

}  // namespace cowboy::net
