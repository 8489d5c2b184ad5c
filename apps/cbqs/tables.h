// Human output for cbqs: aligned tables and numbers with their units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cowboy::cbqs_cli {

/// Columns padded to their widest cell under upper-case headers; numbers
/// (cells starting with a digit) right-aligned.
std::string table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);
/// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t n);
/// 12345.6 -> "12,346/s".
std::string per_second(double rate);
/// Seconds as "850 ms", "12.5 s", "3m 20s" or "2h 5m".
std::string duration(double seconds);
/// 1536 -> "1.5 KiB".
std::string bytes(std::uint64_t n);

}  // namespace cowboy::cbqs_cli
