// The CIP-39 registry plane as a pure, deterministic state machine: an
// instruction, its sender and a finalized height in; state changes, events,
// metering and a typed rejection out. No I/O, no clock, no randomness.
//
// Every handler runs settle -> effects -> finalize (§6.1) against staged copies
// of the records it touches; only a successful instruction writes them back,
// so a rejected instruction leaves the state exactly as it was.
#pragma once

#include <map>
#include <vector>

#include "cbqs/chain/billing.h"
#include "cbqs/chain/events.h"
#include "cbqs/chain/params.h"
#include "cbqs/wire/types.h"

namespace cowboy::cbqs {

#define CBQS_CHAIN_ERRORS(X)                                                         \
  X(MalformedPayload, "the SYS_CBQS payload failed strict decoding")                 \
  X(UnsupportedVersion, "the SYS_CBQS payload version byte is not 2 (§18 rule 2)")   \
  X(ProviderExists, "the sender already has a provider record")                      \
  X(UnknownProvider, "no such provider")                                             \
  X(InvalidEndpoints, "the endpoint list breaks a §4.1 rule")                        \
  X(EmptyUpdate, "the update changes nothing")                                       \
  X(ProviderNotAccepting, "the provider does not accept new streams")                \
  X(ProviderFull, "the provider has max_streams assigned streams")                   \
  X(StreamExists, "a stream with this stream_id exists (ids are never reused)")      \
  X(UnknownStream, "no such stream")                                                 \
  X(StreamClosed, "the stream is Closed")                                            \
  X(NotAuthorized, "the sender may not do this")                                     \
  X(UnknownAccount, "no account for this (owner, provider)")                         \
  X(AccountSuspended, "the account is suspended")                                    \
  X(AccountUnderfunded, "the account cannot fund one block of its streams")          \
  X(InsufficientFunds, "the sender's native balance is below the charge or amount")  \
  X(TopUpBelowMinimum, "amount below CBQS_MIN_ACCOUNT_TOPUP")                        \
  X(ProviderCloseRefused, "§5.1: the account can still fund a block of its streams") \
  X(WithdrawTooLarge, "amount is zero or above the balance")                         \
  X(WithdrawBelowReserve, "the withdrawal would leave less than one block of rent")  \
  X(HeightRegression, "the height is below the account's last_settled_block")        \
  X(ArithmeticOverflow, "checked arithmetic overflowed; nothing was applied")        \
  X(InvalidParameter, "a governance write outside the §15 rules")                    \
  X(InvalidGenesis, "the genesis parameter set breaks §18 rule 1")

enum class ChainError : std::uint8_t {
#define X(name, text) k##name,
  CBQS_CHAIN_ERRORS(X)
#undef X
};
std::string_view chain_error_name(ChainError e);
std::string_view chain_error_description(ChainError e);

/// §15.1 metered cost of one instruction: distinct records read, distinct
/// records written or deleted, and 32-byte cells of the records written.
struct Metering {
  std::uint32_t charged_reads = 0;
  std::uint32_t charged_writes = 0;
  std::uint64_t cells = 0;
  bool operator==(const Metering&) const = default;
};

/// The registry singleton (§18): chain-wide counters under 0x17.
struct RegistrySingleton {
  std::uint64_t providers = 0;
  std::uint64_t streams = 0;
  bool operator==(const RegistrySingleton&) const = default;
};

/// Fixed addresses. 0x17 is the registry's system address and custodian of
/// every account balance; the platform treasury receives platform shares and
/// registration charges.
Address registry_address();
Address platform_treasury_address();

struct RegistryState {
  Bytes32 chain_instance_id{};
  Address governance_admin{};
  Params params;
  RegistrySingleton singleton;
  std::map<Address, u128> native_balances;
  std::map<Address, ProviderRecordV2> providers;
  std::map<Bytes32, StreamRecordV2> streams;
  std::map<std::pair<Address, Address>, CbqsAccountV2> accounts;  // (owner, provider)
  bool operator==(const RegistryState&) const = default;

  u128 native_balance(const Address& a) const;
  const CbqsAccountV2* account(const Address& owner, const Address& provider) const;
};

struct Genesis {
  Bytes32 chain_instance_id{};
  Address governance_admin{};
  std::vector<std::pair<Address, u128>> balances;
  /// An explicit parameter set, keyed "cbqs.<name>"; §18 rule 1 admits only
  /// §15 names at their defaults. Empty means "all defaults".
  std::vector<std::pair<std::string, std::uint64_t>> parameters;
};
Result<RegistryState, ChainError> make_genesis(const Genesis& genesis);

struct Receipt {
  std::optional<ChainError> error;  // nullopt = applied
  std::vector<ChainEvent> events;   // empty when rejected
  Metering metering;
  bool ok() const { return !error; }
};

struct TxContext {
  Address sender{};
  std::uint64_t height = 0;
};

/// Applies one decoded instruction.
Receipt apply_instruction(RegistryState& state, const TxContext& ctx, const CbqsInstructionV2& instruction);
/// Decodes a SYS_CBQS payload (§18 rule 2) and applies it.
Receipt apply_payload(RegistryState& state, const TxContext& ctx, ByteView payload);
/// A governance parameter write by the genesis-named admin (§15).
Receipt apply_parameter_write(RegistryState& state, const TxContext& ctx, std::string_view name,
                              std::uint64_t value);

}  // namespace cowboy::cbqs
