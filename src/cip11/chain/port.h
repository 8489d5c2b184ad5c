// The chain as the CIP-11 services see it: the reads cip11d's service and
// the runner make, and the submission of transactions they sign or forward.
// Nothing else of a chain reaches them, so the services build and link
// against this header and the chain plane's data (state.h, machine.h's
// Effects) only (the build checks it: cmake/forbid_link.cmake).
//
// The devchain implements it (devchain/cip11_port.h: in process over a Node,
// or over the devchain's HTTP API); a client of a Cowboy node would be another
// implementation. Every read answers as of the latest block the chain applied.
//
//   setup()             the CIP-11 genesis: parameters, ValidatorSetSnapshot(0)
//                       and its scheduled successors, and the chain's
//                       transaction format (TxFormat)
//   runner(), runners() the Runner Registry (§7.1, §8.5)
//   job(), runner_jobs() a job record; the CIP-2 poll view (§14)
//   block_effects(h)    what block h assigned and ended (a validator that does
//                       not produce the blocks follows the chain with it)
//   validator_set_changes()  the snapshots after epoch 0 as the chain holds them
//                       now (scheduled at genesis or later by governance)
//   validators()        every validator named so far, with its QUIC endpoint
//   next_nonce(), inclusion(), submit()   an account's transactions
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cip11/chain/machine.h"
#include "cip11/chain/snapshots.h"

namespace cowboy::cip11::chain {

enum class PortErrc : std::uint8_t {
  kNotFound,     // no such record (an unregistered runner, an unknown job)
  kGone,         // the route is retired on this chain (the §14 poll view with CIP11_POLL_DISABLED)
  kRefused,      // the chain refused a submission (nonce, signature, size, a full mempool)
  kUnavailable,  // the chain did not answer, or answered with something unreadable
};
struct PortError {
  PortErrc code = PortErrc::kUnavailable;
  std::string message;
};
template <typename T>
using PortResult = Result<T, PortError>;

/// A transaction signed in the chain's format: what a result frame carries as tx_bytes.
struct SignedTx {
  Bytes bytes;
  Bytes32 hash{};
  std::uint64_t nonce = 0;
};

/// What a transaction says, as far as the §10.3 checks on a result frame go.
struct OpenedTx {
  Address sender{};
  std::uint64_t nonce = 0;
  std::optional<Bytes> cip11_payload;  // a CIP-11 call's instruction payload (instructions.h); none for other calls
};

/// The chain's transaction format: pure, no I/O. It names the chain, so it
/// comes with the chain's setup.
class TxFormat {
 public:
  virtual ~TxFormat() = default;
  /// A CIP-11 call of `payload` from the account of `secret`, with `nonce`.
  virtual SignedTx sign(const crypto::Secp256k1Secret& secret, std::uint64_t nonce, Bytes payload) const = 0;
  /// nullopt when `tx` is not a transaction of this chain or recovers no sender.
  virtual std::optional<OpenedTx> open(ByteView tx) const = 0;
};

/// What a CIP-11 chain fixed at genesis.
struct ChainSetup {
  Bytes32 chain_instance_id{};  // what the chain's transactions name (a runner's journal is bound to it)
  ChainParams params;
  std::vector<ValidatorEntry> validators;  // ValidatorSetSnapshot(0), in snapshot order
  std::shared_ptr<const TxFormat> tx_format;
  /// The later snapshots (epochs 1, 2, ...), their members among `validators`.
  std::vector<ValidatorSetChange> changes = {};
  std::uint64_t overlap_blocks = kOverlapBlocks;  // OVERLAP_BLOCKS (§13)
  /// How many blocks below the head a block is final: the genesis finality
  /// depth with several validators, 0 for a lone producer (docs/cip11.md choice 156).
  std::uint64_t finality_depth = 0;
  /// The highest final block of a chain whose head is `head` (§10.1: what a
  /// validator pushes from, and what a runner executes from).
  Height final_height(Height head) const { return Height{head.value > finality_depth ? head.value - finality_depth : 0}; }
  /// The validators' peer keys in snapshot order (what subsets and validator_set_hash are over).
  std::vector<crypto::Ed25519Public> validator_keys() const;
  /// ValidatorSetSnapshot(0) and every change: what §5.3 reacts to.
  ValidatorSnapshots snapshots() const;
  /// ValidatorSetSnapshot(0) and `later` (the chain's changes as read now, in place of `changes`).
  ValidatorSnapshots snapshots(const std::vector<ValidatorSetChange>& later) const;
};

/// A transaction the chain included, and how its instruction fared.
struct Inclusion {
  Height height{};
  std::optional<std::string> error;  // the instruction's refusal, when refused (its nonce is consumed anyway)
};

class ChainPort {
 public:
  virtual ~ChainPort() = default;
  virtual PortResult<ChainSetup> setup() = 0;
  virtual PortResult<Height> height() = 0;
  virtual PortResult<RunnerRecord> runner(const Address& runner) = 0;
  /// Every registered runner, in registry (ACTIVE_RUNNERS_KEY) index order.
  virtual PortResult<std::vector<RunnerRecord>> runners() = 0;
  virtual PortResult<JobRecord> job(const JobId& job_id) = 0;
  /// The jobs in state Assigned whose current committee holds `runner`.
  virtual PortResult<std::vector<JobRecord>> runner_jobs(const Address& runner) = 0;
  /// The assignments block `height` made and ended (consumed seeds left out).
  virtual PortResult<Effects> block_effects(Height height) = 0;
  /// Every snapshot after ValidatorSetSnapshot(0) as the chain holds it now,
  /// epoch n at index n-1: the genesis schedule's, then any a governance
  /// transaction scheduled since (§5.4). The services re-read it as blocks
  /// come. By default setup()'s, for a chain whose schedule is fixed at genesis.
  virtual PortResult<std::vector<ValidatorSetChange>> validator_set_changes();
  /// Every validator the chain has named, as where to reach it: the genesis
  /// entries, then each one a later snapshot named first, with its QUIC
  /// endpoint (docs/cip11.md choice 130). A runner dials a validator that
  /// joined by a change at the endpoint this gives. By default setup()'s.
  virtual PortResult<std::vector<ValidatorEntry>> validators();
  virtual PortResult<std::uint64_t> next_nonce(const Address& account) = 0;
  /// nullopt while the transaction is pending or unknown.
  virtual PortResult<std::optional<Inclusion>> inclusion(const Bytes32& tx_hash) = 0;
  /// Hands signed bytes (TxFormat) to the chain's admission; the transaction's hash.
  virtual PortResult<Bytes32> submit(ByteView signed_tx) = 0;
};

}  // namespace cowboy::cip11::chain
