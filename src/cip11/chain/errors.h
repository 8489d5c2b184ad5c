// Every way the CIP-11 chain plane refuses an instruction: one code per
// rule, named in the transaction's receipt.
#pragma once

#include <cstdint>
#include <string_view>

namespace cowboy::cip11::chain {

#define CIP11_CHAIN_ERRORS(X)                                                                       \
  X(MalformedInstruction, "the CIP-11 payload failed strict decoding")                              \
  X(KeyNotSender, "the runner key does not derive the transaction's sender")                        \
  X(RunnerExists, "the sender is a registered runner")                                              \
  X(UnknownRunner, "the sender is not a registered runner")                                         \
  X(RunnerDeregistered, "the runner is deregistered")                                               \
  X(RunnerBusy, "the runner holds assignments; it can deregister once they end")                    \
  X(StakeBelowMinimum, "stake below MIN_STAKE")                                                     \
  X(InsufficientFunds, "the sender's native balance is below the stake")                            \
  X(TimeoutTooShort, "timeout_blocks ends the job before it can be answered (choices 160, 165)")  \
  X(UnknownJob, "no such job")                                                                      \
  X(JobClosed, "the job is in a terminal state")                                                    \
  X(NotAssigned, "the sender is not in the job's current committee")                                \
  X(AlreadyCommitted, "the runner has a commitment for this job")                                   \
  X(AlreadyRevealed, "the runner has revealed its result for this job")                             \
  X(NoCommitment, "an M > 1 reveal needs the runner's commitment in an earlier block")              \
  X(RevealWindowClosed, "the reveal window has not opened")                                         \
  X(CommitmentMismatch, "the reveal does not match the runner's commitment")                        \
  X(ModeADisabled, "PRESENCE_HARD_EXCLUDE_ENABLED is off: no presence certificate is accepted")     \
  X(RunnerNotSender, "the certificate's runner is not the transaction's sender")                    \
  X(CertificateFromTheFuture, "the certificate's height is above the current block")                \
  X(RunnerKeyMismatch, "a receipt names another runner than the certificate's")                     \
  X(OutOfCycles, "the cycle limit cannot pay for the next charge")                                  \
  X(BelowThreshold, "fewer than t_hard distinct validators with a valid receipt")                   \
  X(NotStrictlyNewer, "the newest counted receipt is not above the runner's presence_anchor")

enum class ChainError : std::uint8_t {
#define X(name, text) k##name,
  CIP11_CHAIN_ERRORS(X)
#undef X
};
std::string_view chain_error_name(ChainError e);

}  // namespace cowboy::cip11::chain
