// §6 billing: settle, finalize and distribute exactly as the §6.1 pseudo-code,
// and the §6.2 solvency predicate the broker evaluates on every append and
// every state-creating request. All arithmetic is checked u128 and fails
// closed: an overflow or a height below last_settled_block is an error and the
// account is left untouched.
#pragma once

#include "cbqs/wire/types.h"
#include "common/result.h"

namespace cowboy::cbqs {

inline constexpr u128 CBQS_STREAM_CREATION_CHARGE = 5'000'000'000;
inline constexpr u128 CBQS_PROVIDER_REGISTRATION_CHARGE = 5'000'000'000;
inline constexpr u128 CBQS_MIN_ACCOUNT_TOPUP = 1'000'000'000;
inline constexpr u128 CBQS_PROVIDER_BPS = 9'000;

enum class BillingError : std::uint8_t { kHeightRegression, kOverflow };

struct Settlement {
  u128 paid = 0;
  u128 written_off = 0;  // due - paid on the partial branch (§6.3); never carried
  bool suspended_now = false;
};

/// §6.1 settle: charges rent up to height H. On error the account is unchanged.
Result<Settlement, BillingError> settle(CbqsAccountV2& account, std::uint64_t height);

enum class FinalizeOutcome : std::uint8_t { kKept, kResumed, kDeleteAccount };
/// §6.1 finalize: runs last in every handler. kDeleteAccount tells the caller to
/// delete the record; kResumed that `suspended` went from true to false.
Result<FinalizeOutcome, BillingError> finalize(CbqsAccountV2& account);

struct Shares {
  u128 provider_share = 0;
  u128 platform_share = 0;
};
/// provider_share = paid * CBQS_PROVIDER_BPS / 10000, computed without overflow.
Shares distribute(u128 paid);

/// §6.2: suspended == false AND balance >= (H_snapshot - last_settled_block) *
/// rate_per_block * active_streams. Overflow or a regressed height fails closed.
bool solvent(const CbqsAccountV2& account, std::uint64_t snapshot_height);

/// Checked helpers shared by the chain handlers.
std::optional<u128> checked_mul(u128 a, u128 b);
std::optional<u128> checked_add(u128 a, u128 b);

}  // namespace cowboy::cbqs
