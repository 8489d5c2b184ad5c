// §16 chain events (docs/protocol.md §H). Every state change an instruction
// makes is announced by exactly one of these, in the order the handler made it.
#pragma once

#include <string>
#include <variant>

#include "cbqs/wire/types.h"

namespace cowboy::cbqs::event {

struct ProviderRegistered { Address provider{}; u128 charge = 0; bool operator==(const ProviderRegistered&) const = default; };
struct ProviderUpdated { Address provider{}; bool signing_key_rotated = false; bool operator==(const ProviderUpdated&) const = default; };
struct StreamCreated {
  Bytes32 stream_id{};
  Address owner{};
  Address provider{};
  u128 charge = 0;
  bool operator==(const StreamCreated&) const = default;
};
struct StreamUpdated {
  Bytes32 stream_id{};
  bool admin_key_rotated = false;
  std::uint64_t authorization_generation = 0;
  bool operator==(const StreamUpdated&) const = default;
};
struct StreamClosed { Bytes32 stream_id{}; bool by_provider = false; bool operator==(const StreamClosed&) const = default; };
struct AccountCreated { Address owner{}; Address provider{}; u128 balance = 0; bool operator==(const AccountCreated&) const = default; };
struct AccountToppedUp { Address owner{}; Address provider{}; u128 amount = 0; bool operator==(const AccountToppedUp&) const = default; };
struct AccountSettled {
  Address owner{};
  Address provider{};
  std::uint64_t height = 0;
  u128 paid = 0;
  u128 provider_share = 0;
  u128 platform_share = 0;
  bool operator==(const AccountSettled&) const = default;
};
struct AccountSuspended { Address owner{}; Address provider{}; u128 written_off = 0; bool operator==(const AccountSuspended&) const = default; };
struct AccountResumed { Address owner{}; Address provider{}; bool operator==(const AccountResumed&) const = default; };
struct AccountWithdrawn { Address owner{}; Address provider{}; u128 amount = 0; bool operator==(const AccountWithdrawn&) const = default; };
struct AccountDeleted { Address owner{}; Address provider{}; bool operator==(const AccountDeleted&) const = default; };
struct ParameterChanged {
  std::string name;
  std::uint64_t old_value = 0;
  std::uint64_t new_value = 0;
  bool operator==(const ParameterChanged&) const = default;
};

}  // namespace cowboy::cbqs::event

namespace cowboy::cbqs {
using ChainEvent = std::variant<event::ProviderRegistered, event::ProviderUpdated, event::StreamCreated,
                                event::StreamUpdated, event::StreamClosed, event::AccountCreated,
                                event::AccountToppedUp, event::AccountSettled, event::AccountSuspended,
                                event::AccountResumed, event::AccountWithdrawn, event::AccountDeleted,
                                event::ParameterChanged>;
/// The event's name as docs/protocol.md §H spells it.
std::string_view event_name(const ChainEvent& e);
}  // namespace cowboy::cbqs
