#include "tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cowboy::cbqs_cli {

std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (std::size_t c = 0; c < width.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      if (header) std::transform(cell.begin(), cell.end(), cell.begin(), [](unsigned char ch) { return std::toupper(ch); });
      std::string pad(width[c] - cell.size(), ' ');
      bool number = !header && !cell.empty() && std::isdigit(static_cast<unsigned char>(cell[0]));
      out += number ? pad + cell : cell + pad;
      if (c + 1 < width.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers, true);
  for (const auto& row : rows) out += line(row, false);
  return out;
}

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string per_second(double rate) { return grouped(static_cast<std::uint64_t>(std::llround(std::max(0.0, rate)))) + "/s"; }

std::string duration(double seconds) {
  char buf[48];
  if (seconds < 1) std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1'000);
  else if (seconds < 60) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (seconds < 3'600) std::snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
  else std::snprintf(buf, sizeof buf, "%dh %02dm", static_cast<int>(seconds / 3'600), static_cast<int>(seconds / 60) % 60);
  return buf;
}

std::string bytes(std::uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1'024 && u < 4) {
    v /= 1'024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace cowboy::cbqs_cli
