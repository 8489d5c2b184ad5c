#include "cbqs/chain/registry.h"

#include "cbqs/chain/endpoints.h"
#include "cbqs/chain/txn.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs {

std::string_view chain_error_name(ChainError e) {
  switch (e) {
#define X(name, text) \
  case ChainError::k##name: return #name;
    CBQS_CHAIN_ERRORS(X)
#undef X
  }
  return "?";
}

std::string_view chain_error_description(ChainError e) {
  switch (e) {
#define X(name, text) \
  case ChainError::k##name: return text;
    CBQS_CHAIN_ERRORS(X)
#undef X
  }
  return "?";
}

Address registry_address() {
  Address a{};
  a[19] = 0x17;
  return a;
}

Address platform_treasury_address() {
  Address a{};
  a[19] = 0x18;
  return a;
}

u128 RegistryState::native_balance(const Address& a) const {
  auto it = native_balances.find(a);
  return it == native_balances.end() ? 0 : it->second;
}

const CbqsAccountV2* RegistryState::account(const Address& owner, const Address& provider) const {
  auto it = accounts.find({owner, provider});
  return it == accounts.end() ? nullptr : &it->second;
}

Result<RegistryState, ChainError> make_genesis(const Genesis& genesis) {
  RegistryState state;
  state.chain_instance_id = genesis.chain_instance_id;
  state.governance_admin = genesis.governance_admin;
  for (const auto& [name, value] : genesis.parameters) {
    const ParamSpec* spec = name.starts_with("cbqs.") ? find_param(name) : nullptr;
    if (!spec || value != spec->default_value) return Err{ChainError::kInvalidGenesis};
  }
  for (const auto& [addr, amount] : genesis.balances) {
    if (addr == registry_address() || state.native_balances.contains(addr)) return Err{ChainError::kInvalidGenesis};
    if (amount != 0) state.native_balances[addr] = amount;
  }
  return state;
}

namespace {

using Events = std::vector<ChainEvent>;

ChainError billing_error(BillingError e) {
  return e == BillingError::kHeightRegression ? ChainError::kHeightRegression : ChainError::kArithmeticOverflow;
}

// settle (§6.1) with its payout, then the rent snapshot: the account's
// rate_per_block takes the current cbqs.stream_rate_per_block for the blocks
// from this height on (docs/protocol.md §I).
std::optional<ChainError> settle_account(Txn& t, CbqsAccountV2& account, const RegistryState& state,
                                         std::uint64_t height, Events& events) {
  auto s = settle(account, height);
  if (!s) return billing_error(s.error());
  Shares shares = distribute(s->paid);
  if (!t.transfer(registry_address(), account.provider, shares.provider_share) ||
      !t.transfer(registry_address(), platform_treasury_address(), shares.platform_share))
    return ChainError::kArithmeticOverflow;  // custody always holds every balance
  events.push_back(event::AccountSettled{account.owner, account.provider, height, s->paid, shares.provider_share,
                                         shares.platform_share});
  if (s->suspended_now) events.push_back(event::AccountSuspended{account.owner, account.provider, s->written_off});
  account.rate_per_block = state.params.stream_rate_per_block;
  return std::nullopt;
}

std::optional<ChainError> finalize_account(Txn& t, CbqsAccountV2& account, Events& events) {
  auto f = finalize(account);
  if (!f) return billing_error(f.error());
  if (*f == FinalizeOutcome::kDeleteAccount) {
    t.delete_account(account.owner, account.provider);
    events.push_back(event::AccountDeleted{account.owner, account.provider});
    return std::nullopt;
  }
  if (*f == FinalizeOutcome::kResumed) events.push_back(event::AccountResumed{account.owner, account.provider});
  t.put_account(account);
  return std::nullopt;
}

/// rate_per_block * active_streams: one block of the account's streams.
std::optional<u128> one_block(const CbqsAccountV2& a) { return checked_mul(a.rate_per_block, a.active_streams); }

class Handler {
 public:
  Handler(const RegistryState& state, const TxContext& ctx) : state_(state), ctx_(ctx), t_(state) {}

  std::optional<ChainError> operator()(const RegisterProviderV2& ins) {
    const Params& p = state_.params;
    if (check_endpoints(ins.endpoints, p.max_provider_endpoints, p.max_provider_endpoint_uri_bytes))
      return ChainError::kInvalidEndpoints;
    if (t_.provider(ctx_.sender)) return ChainError::kProviderExists;
    if (!t_.transfer(ctx_.sender, platform_treasury_address(), CBQS_PROVIDER_REGISTRATION_CHARGE))
      return ChainError::kInsufficientFunds;
    ProviderRecordV2 record;
    record.chain_instance_id = state_.chain_instance_id;
    record.provider = ctx_.sender;
    record.signing_key = ins.signing_key;
    record.signing_key_since = ctx_.height;
    record.previous_signing_key = std::nullopt;
    record.previous_signing_key_since = 0;
    record.endpoints = ins.endpoints;
    record.accepts_new = ins.accepts_new;
    record.max_streams = ins.max_streams;
    record.assigned_streams = 0;
    record.metadata_hash = ins.metadata_hash;
    t_.put_provider(record);
    auto singleton = t_.singleton();
    ++singleton.providers;
    t_.put_singleton(singleton);
    events_.push_back(event::ProviderRegistered{ctx_.sender, CBQS_PROVIDER_REGISTRATION_CHARGE});
    return std::nullopt;
  }

  std::optional<ChainError> operator()(const UpdateProviderV2& ins) {
    const Params& p = state_.params;
    if (!ins.signing_key && !ins.endpoints && !ins.max_streams && !ins.accepts_new && !ins.metadata_hash)
      return ChainError::kEmptyUpdate;
    if (ins.endpoints && check_endpoints(*ins.endpoints, p.max_provider_endpoints, p.max_provider_endpoint_uri_bytes))
      return ChainError::kInvalidEndpoints;
    auto record = t_.provider(ctx_.sender);
    if (!record) return ChainError::kUnknownProvider;
    bool rotated = ins.signing_key && *ins.signing_key != record->signing_key;
    if (rotated) {
      record->previous_signing_key = record->signing_key;
      record->previous_signing_key_since = record->signing_key_since;
      record->signing_key = *ins.signing_key;
      record->signing_key_since = ctx_.height;
    }
    if (ins.endpoints) record->endpoints = *ins.endpoints;
    if (ins.max_streams) record->max_streams = *ins.max_streams;
    if (ins.accepts_new) record->accepts_new = *ins.accepts_new;
    if (ins.metadata_hash) record->metadata_hash = *ins.metadata_hash;
    t_.put_provider(*record);
    events_.push_back(event::ProviderUpdated{ctx_.sender, rotated});
    return std::nullopt;
  }

  std::optional<ChainError> operator()(const CreateStreamV2& ins) {
    auto provider = t_.provider(ins.provider);
    if (!provider) return ChainError::kUnknownProvider;
    if (!provider->accepts_new) return ChainError::kProviderNotAccepting;
    if (provider->assigned_streams >= provider->max_streams) return ChainError::kProviderFull;
    Bytes32 id = stream_id(state_.chain_instance_id, ctx_.sender, ins.owner_nonce);
    if (t_.stream(id)) return ChainError::kStreamExists;
    auto account = t_.account(ctx_.sender, ins.provider);
    if (!account) return ChainError::kUnknownAccount;

    if (auto e = settle_account(t_, *account, state_, ctx_.height, events_)) return e;
    if (account->suspended) return ChainError::kAccountSuspended;
    account->active_streams += 1;
    auto need = one_block(*account);
    if (!need) return ChainError::kArithmeticOverflow;
    if (account->balance < *need) return ChainError::kAccountUnderfunded;
    Shares charge = distribute(CBQS_STREAM_CREATION_CHARGE);
    if (t_.balance(ctx_.sender) < CBQS_STREAM_CREATION_CHARGE) return ChainError::kInsufficientFunds;
    if (!t_.transfer(ctx_.sender, ins.provider, charge.provider_share) ||
        !t_.transfer(ctx_.sender, platform_treasury_address(), charge.platform_share))
      return ChainError::kInsufficientFunds;

    provider->assigned_streams += 1;
    t_.put_provider(*provider);
    StreamRecordV2 stream;
    stream.chain_instance_id = state_.chain_instance_id;
    stream.stream_id = id;
    stream.owner = ctx_.sender;
    stream.owner_nonce = ins.owner_nonce;
    stream.admin_key = ins.admin_key;
    stream.provider = ins.provider;
    stream.authorization_generation = 0;
    stream.status = StreamStatusV2::kActive;
    t_.put_stream(stream);
    auto singleton = t_.singleton();
    ++singleton.streams;
    t_.put_singleton(singleton);
    events_.push_back(event::StreamCreated{id, ctx_.sender, ins.provider, CBQS_STREAM_CREATION_CHARGE});
    return finalize_account(t_, *account, events_);
  }

  std::optional<ChainError> operator()(const UpdateStreamV2& ins) {
    auto stream = t_.stream(ins.stream_id);
    if (!stream) return ChainError::kUnknownStream;
    if (stream->owner != ctx_.sender) return ChainError::kNotAuthorized;
    if (stream->status == StreamStatusV2::kClosed) return ChainError::kStreamClosed;
    bool rotated = ins.admin_key && *ins.admin_key != stream->admin_key;
    if (!rotated && !ins.bump_authorization_generation) return ChainError::kEmptyUpdate;
    if (rotated) stream->admin_key = *ins.admin_key;
    if (ins.bump_authorization_generation) {
      if (stream->authorization_generation == UINT64_MAX) return ChainError::kArithmeticOverflow;
      ++stream->authorization_generation;
    }
    t_.put_stream(*stream);
    events_.push_back(event::StreamUpdated{stream->stream_id, rotated, stream->authorization_generation});
    return std::nullopt;
  }

  std::optional<ChainError> operator()(const CloseStreamV2& ins) {
    auto stream = t_.stream(ins.stream_id);
    if (!stream) return ChainError::kUnknownStream;
    if (stream->status == StreamStatusV2::kClosed) return ChainError::kStreamClosed;
    bool by_owner = ctx_.sender == stream->owner;
    bool by_provider = !by_owner && ctx_.sender == stream->provider;
    if (!by_owner && !by_provider) return ChainError::kNotAuthorized;
    auto account = t_.account(stream->owner, stream->provider);
    if (!account) return ChainError::kUnknownAccount;  // unreachable while the invariants hold

    if (auto e = settle_account(t_, *account, state_, ctx_.height, events_)) return e;
    if (by_provider) {  // §5.1, evaluated after the settlement
      auto need = one_block(*account);
      if (!need) return ChainError::kArithmeticOverflow;
      if (!(account->balance < *need)) return ChainError::kProviderCloseRefused;
    }
    stream->status = StreamStatusV2::kClosed;
    t_.put_stream(*stream);
    account->active_streams -= 1;
    auto provider = t_.provider(stream->provider);
    if (provider) {
      provider->assigned_streams -= 1;
      t_.put_provider(*provider);
    }
    events_.push_back(event::StreamClosed{stream->stream_id, by_provider});
    return finalize_account(t_, *account, events_);
  }

  std::optional<ChainError> operator()(const TopUpAccountV2& ins) {
    if (ins.amount < CBQS_MIN_ACCOUNT_TOPUP) return ChainError::kTopUpBelowMinimum;
    if (!t_.provider(ins.provider)) return ChainError::kUnknownProvider;
    auto account = t_.account(ins.owner, ins.provider);
    if (!account) {  // §4.3 initial fields
      account = CbqsAccountV2{};
      account->owner = ins.owner;
      account->provider = ins.provider;
      account->balance = ins.amount;
      account->active_streams = 0;
      account->suspended = false;
      account->rate_per_block = 0;
      account->last_settled_block = ctx_.height;
      events_.push_back(event::AccountCreated{ins.owner, ins.provider, ins.amount});
    } else {
      if (auto e = settle_account(t_, *account, state_, ctx_.height, events_)) return e;
      auto balance = checked_add(account->balance, ins.amount);
      if (!balance) return ChainError::kArithmeticOverflow;
      account->balance = *balance;
      events_.push_back(event::AccountToppedUp{ins.owner, ins.provider, ins.amount});
    }
    if (!t_.transfer(ctx_.sender, registry_address(), ins.amount)) return ChainError::kInsufficientFunds;
    return finalize_account(t_, *account, events_);
  }

  std::optional<ChainError> operator()(const SettleAccountV2& ins) {
    auto account = t_.account(ins.owner, ins.provider);
    if (!account) return ChainError::kUnknownAccount;
    if (auto e = settle_account(t_, *account, state_, ctx_.height, events_)) return e;
    return finalize_account(t_, *account, events_);
  }

  std::optional<ChainError> operator()(const WithdrawAccountV2& ins) {
    auto account = t_.account(ctx_.sender, ins.provider);
    if (!account) return ChainError::kUnknownAccount;
    if (auto e = settle_account(t_, *account, state_, ctx_.height, events_)) return e;
    u128 amount = ins.amount.value_or(account->balance);
    if (amount == 0 || amount > account->balance) return ChainError::kWithdrawTooLarge;
    if (account->active_streams > 0) {
      auto reserve = one_block(*account);
      if (!reserve) return ChainError::kArithmeticOverflow;
      if (account->balance - amount < *reserve) return ChainError::kWithdrawBelowReserve;
    }
    account->balance -= amount;
    if (!t_.transfer(registry_address(), ctx_.sender, amount)) return ChainError::kArithmeticOverflow;
    events_.push_back(event::AccountWithdrawn{ctx_.sender, ins.provider, amount});
    return finalize_account(t_, *account, events_);
  }

  Receipt finish(std::optional<ChainError> error, RegistryState& state) && {
    Receipt r;
    r.metering = t_.metering();
    r.error = error;
    if (error) {  // nothing is written on a rejection path: it meters its reads only
      r.metering.charged_writes = 0;
      r.metering.cells = 0;
    } else {
      r.events = std::move(events_);
      std::move(t_).commit(state);
    }
    return r;
  }

  Txn& txn() { return t_; }
  Events& events() { return events_; }

 private:
  const RegistryState& state_;
  const TxContext& ctx_;
  Txn t_;
  Events events_;
};

}  // namespace

Receipt apply_instruction(RegistryState& state, const TxContext& ctx, const CbqsInstructionV2& instruction) {
  Handler h(state, ctx);
  auto error = std::visit(h, instruction);
  return std::move(h).finish(error, state);
}

Receipt apply_payload(RegistryState& state, const TxContext& ctx, ByteView payload) {
  auto decoded = decode<CbqsInstructionV2>(payload);
  if (!decoded) {
    Receipt r;
    r.error = decoded.error() == DecodeError::kBadVersion ? ChainError::kUnsupportedVersion
                                                           : ChainError::kMalformedPayload;
    return r;
  }
  return apply_instruction(state, ctx, *decoded);
}

Receipt apply_parameter_write(RegistryState& state, const TxContext& ctx, std::string_view name,
                              std::uint64_t value) {
  Handler h(state, ctx);
  std::optional<ChainError> error;
  if (ctx.sender != state.governance_admin) {
    error = ChainError::kNotAuthorized;
  } else if (!name.starts_with("cbqs.") || validate_param_write(name, value)) {
    error = ChainError::kInvalidParameter;
  } else {
    std::uint64_t old_value = *state.params.get(name);
    h.txn().put_param(name, value);
    h.events().push_back(event::ParameterChanged{std::string(name), old_value, value});
  }
  return std::move(h).finish(error, state);
}

}  // namespace cowboy::cbqs
