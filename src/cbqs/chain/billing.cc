#include "cbqs/chain/billing.h"

namespace cowboy::cbqs {

std::optional<u128> checked_mul(u128 a, u128 b) {
  u128 out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<u128> checked_add(u128 a, u128 b) {
  u128 out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

namespace {
// (H - last) * rate * active, checked.
std::optional<u128> rent_due(const CbqsAccountV2& a, std::uint64_t height) {
  if (height < a.last_settled_block) return std::nullopt;
  auto per_block = checked_mul(a.rate_per_block, a.active_streams);
  if (!per_block) return std::nullopt;
  return checked_mul(height - a.last_settled_block, *per_block);
}
}  // namespace

Result<Settlement, BillingError> settle(CbqsAccountV2& account, std::uint64_t height) {
  if (height < account.last_settled_block) return Err{BillingError::kHeightRegression};
  Settlement s;
  if (!account.suspended) {
    auto due = rent_due(account, height);
    if (!due) return Err{BillingError::kOverflow};
    if (account.balance >= *due) {
      account.balance -= *due;
      s.paid = *due;
    } else {
      s.paid = account.balance;
      s.written_off = *due - account.balance;
      account.balance = 0;
      account.suspended = true;
      s.suspended_now = true;
    }
  }
  account.last_settled_block = height;
  return s;
}

Result<FinalizeOutcome, BillingError> finalize(CbqsAccountV2& account) {
  bool was_suspended = account.suspended;
  if (account.active_streams == 0) {
    account.suspended = false;
  } else if (account.suspended) {
    auto one_block = checked_mul(account.rate_per_block, account.active_streams);
    if (!one_block) return Err{BillingError::kOverflow};
    if (account.balance >= *one_block) account.suspended = false;
  }
  if (account.balance == 0 && account.active_streams == 0) return FinalizeOutcome::kDeleteAccount;
  return (was_suspended && !account.suspended) ? FinalizeOutcome::kResumed : FinalizeOutcome::kKept;
}

Shares distribute(u128 paid) {
  // floor(paid * 9000 / 10000) without forming paid * 9000.
  u128 provider = paid / 10'000 * CBQS_PROVIDER_BPS + (paid % 10'000) * CBQS_PROVIDER_BPS / 10'000;
  return Shares{provider, paid - provider};
}

bool solvent(const CbqsAccountV2& account, std::uint64_t snapshot_height) {
  if (account.suspended) return false;
  auto due = rent_due(account, snapshot_height);
  return due && account.balance >= *due;
}

}  // namespace cowboy::cbqs
