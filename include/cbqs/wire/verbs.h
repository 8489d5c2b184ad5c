// The verb bits of a StreamGrantV2 (docs/protocol.md §C), and the names the
// cbqs CLI gives them: defined here once, for the broker's checks, the CLI,
// cbqsd --dev and the tests.
#pragma once

#include <cstdint>
#include <string_view>

namespace cowboy::cbqs::verb {

inline constexpr std::uint16_t kAppend = 0x0001;
inline constexpr std::uint16_t kConsume = 0x0002;
inline constexpr std::uint16_t kReplay = 0x0004;
inline constexpr std::uint16_t kManageLanes = 0x0008;
inline constexpr std::uint16_t kManageGroups = 0x0010;
inline constexpr std::uint16_t kManageSettings = 0x0020;
inline constexpr std::uint16_t kAll = 0x003f;          // every verb the protocol defines
inline constexpr std::uint16_t kAllowedBits = 0x00ff;  // bits 0..7; a grant with others is refused

struct Name {
  std::string_view name;
  std::uint16_t bits;
};
inline constexpr Name kNames[] = {{"append", kAppend}, {"consume", kConsume},       {"replay", kReplay},
                                  {"lanes", kManageLanes}, {"groups", kManageGroups}, {"settings", kManageSettings},
                                  {"all", kAll}};

}  // namespace cowboy::cbqs::verb
