// The validator's CIP-11 service, what `cip11d` runs: the runner-facing QUIC
// listener (ValidatorLinks) with registry admission, the push dispatcher,
// and the path of result transactions into the chain's admission. It sees
// the chain only through chain::ChainPort (cip11/chain/port.h).
//
//   block durable ──on_block()──> read the block's job records ──post──> io thread:
//       links.on_block (presence timeouts) -> the block's current epoch pairs
//       (§5.3: new Hellos, Goodbye{OverlapExpired} at a cutoff) -> Goodbye to
//       the runners the block deregistered -> dispatcher.on_block of each block
//       now final (§10.1: push, cancel, hard failures; F blocks behind the head
//       with several validators, at once for a lone producer)
//       -> forwarder.on_block (held reveals)
//   runner frame ──io thread──> dispatcher ──checked tx──> forwarder thread -> chain.submit
//   block producer ──presence_field()──> io thread: local presence, ∪ the other
//       validators' fresh gossiped views (§8.2), as PresenceInputV1
//   block durable ──> io thread: local presence ──> gossip thread: signed
//       PresenceViewV1 to each peer (§8.2); a peer's view ──receive_view()──> kept if newer
//
// The service owns its io thread; every public call is safe from any thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "cip11/presence_gossip.h"
#include "cip11/validator/dispatcher.h"
#include "cip11/validator/runner_directory.h"

namespace cowboy::cip11 {

struct ValidatorServiceConfig {
  crypto::Ed25519Seed key{};      // this validator's peer key seed (§5.4)
  quic::EndpointConfig endpoint;  // host, port, certificate and key; the reset secret is derived from `key`
  std::uint64_t ack_timeout_blocks = kAckTimeoutBlocks;
  unsigned signature_threads = 1;
  /// A validator the chain's ValidatorSetSnapshot(0) does not name, which
  /// joins when a later snapshot does (docs/devchain.md D2): opened anyway; it
  /// admits no runner until a current snapshot names it (§5.3).
  bool joining = false;
};

/// A committed block as the service learns of it: from the producer's
/// observer, or from a BlockFollower.
struct AppliedBlock {
  Height height{};
  chain::Effects effects;  // assignments made and ended, runners deregistered
};

/// Result transactions into the chain, on a thread of their own: commitments
/// at once, reveals once the chain would take them (§10.3: never early).
class ChainForwarder final : public ResultSink {
 public:
  explicit ChainForwarder(chain::ChainPort& chain) : chain_(chain) {}
  ~ChainForwarder() override { thread_.join(); }
  void forward(Bytes tx, const Address& runner, const JobId& job_id, bool reveal) override;
  /// A block was committed: held reveals whose window opened go now.
  void on_block(Height height);
  std::uint64_t submitted() const { return submitted_; }
  std::uint64_t held() const { return held_count_; }
  std::uint64_t refused() const { return refused_; }

 private:
  struct Held {
    Bytes tx;
    Address runner;
    JobId job_id;
  };
  /// On the thread: submits now, holds for later, or drops a reveal whose job ended. True when done with it.
  bool try_forward(const Held& h, bool reveal, Height height);

  chain::ChainPort& chain_;
  boost::asio::thread_pool thread_{1};
  std::vector<Held> held_;  // touched on the thread only
  std::atomic<std::uint64_t> submitted_{0}, held_count_{0}, refused_{0};
};

class ValidatorService {
 public:
  /// Reads the CIP-11 genesis from the chain, checks that `config.key` is in
  /// ValidatorSetSnapshot(0), reads the registry and starts listening.
  /// `results`: where checked result transactions go; by default the
  /// chain's admission through a ChainForwarder.
  /// (`config.joining`: or not, see there).
  static Result<std::unique_ptr<ValidatorService>, std::string> open(ValidatorServiceConfig config,
                                                                     chain::ChainPort& chain,
                                                                     ResultSink* results = nullptr);
  /// Says Goodbye{Shutdown} to every runner, then stops.
  ~ValidatorService();

  /// A block is durable (the producer's observer, or a BlockFollower).
  void on_block(const AppliedBlock& block);
  /// The chain un-applied its blocks above `height` to follow another branch
  /// (a devchain with several validators, docs/devchain.md D11): the registry
  /// index is read again and admission reads at `height`; the winning
  /// branch's blocks come after through on_block. The dropped blocks were not
  /// final, so none of their assignments was pushed (§10.1, on_block): they
  /// leave the blocks waiting for finality. The validator-set snapshots the
  /// dropped blocks scheduled are withdrawn (the chain's list is read again,
  /// SharedSnapshots::withdraw).
  void on_rollback(Height height);
  /// The validator-set snapshots held now (§5.3): epoch 0 and the chain's changes.
  std::shared_ptr<const chain::ValidatorSnapshots> snapshots() const { return snapshots_.get(); }
  /// The producer's PresenceInputV1 field for `height`, given |registry(H-1)|:
  /// local presence ∪ every fresh view the other validators gossiped (§8.2).
  std::optional<Bytes> presence_field(Height height, std::uint32_t registry_size);
  /// §8.2: sends this validator's signed view of its local presence to each
  /// peer after every block it commits (on a thread of its own, the latest
  /// view only: a slow peer never queues them up). Set before the first block.
  using ViewSink = std::function<void(const Bytes&)>;
  void set_view_peers(std::vector<ViewSink> peers);
  /// A PresenceViewV1 another validator sent: decoded, checked (check_view,
  /// against this validator's head) and kept when newer than the one held of
  /// its sender. Returns whether it was kept; any thread.
  Res<bool> receive_view(ByteView bytes);
  /// The Prometheus text of /metrics.
  std::string metrics();
  /// The latest JobProgress of a job this validator pushed and has not ended.
  std::optional<JobProgress> progress(const JobId& job_id);
  std::uint16_t port() const { return port_; }
  const chain::ChainSetup& setup() const { return setup_; }
  const Signer& signer() const { return signer_; }

 private:
  ValidatorService(ValidatorServiceConfig config, chain::ChainPort& chain, chain::ChainSetup setup);
  void react_to_epochs(Height height);
  /// Re-reads the chain's validator-set changes; a failed read keeps those held.
  void refresh_snapshots(Height height);
  /// Runs `f` on the io thread and waits for its answer (nullopt after `timeout`).
  template <typename F>
  auto on_io(F f, std::chrono::milliseconds timeout) -> std::optional<decltype(f())>;

  const ValidatorServiceConfig config_;
  chain::ChainPort& chain_;
  const chain::ChainSetup setup_;
  // Epoch 0 and the chain's changes (§5.3), re-read after each block: a set
  // governance schedules by transaction reaches this validator like a genesis one.
  chain::SharedSnapshots snapshots_;
  const Signer signer_;
  SystemEntropy entropy_;
  std::atomic<Height> last_height_{};  // the latest applied block (admission's height)
  RunnerDirectory directory_;
  RegistryAdmission admission_;
  ChainForwarder forwarder_;
  ResultSink* results_ = &forwarder_;
  boost::asio::io_context io_{1};
  std::unique_ptr<ValidatorLinks> links_;    // on the io thread
  std::unique_ptr<Dispatcher> dispatcher_;   // on the io thread
  // On the io thread: applied blocks not yet final, in height order; refilled at
  // open from the chain's blocks above the final height (a restart pushes them).
  std::deque<CommittedAssignments> unfinal_;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<std::uint64_t> overlap_expired_{0};  // Goodbye{OverlapExpired} sent (§5.3 point 4)
  std::atomic<std::uint64_t> shadow_draws_{0}, shadow_agreements_{0}, shadow_present_members_{0};
  // The last PresenceInput this validator stated as a block's producer: its block and how many it marked present.
  std::atomic<Height> presence_input_height_{};
  std::atomic<std::uint64_t> presence_input_runners_{0};

  /// Signs this validator's view at `height` and queues it for the peers.
  void gossip_view(Height height, const std::vector<Address>& present);
  void send_views();
  const crypto::Ed25519Public me_;
  std::mutex views_mu_;
  PresenceAggregator views_;  // under views_mu_
  std::vector<ViewSink> view_peers_;
  std::optional<Bytes> view_to_send_;  // under views_mu_: the latest, not yet sent
  bool view_sending_ = false;          // under views_mu_
  std::atomic<std::uint64_t> views_sent_{0}, views_kept_{0}, views_not_newer_{0}, views_refused_{0},
      views_ahead_{0};
  std::atomic<std::uint64_t> views_unstated_{0};  // blocks at which this validator was in no current snapshot
  std::atomic<Epoch> view_epoch_{};               // the subset_epoch of the last view it signed
  boost::asio::thread_pool gossip_{1};  // last: joined first, before what it uses goes
};

/// For a validator that does not produce the blocks: watches the chain's
/// height and hands each new block's assignments to the service.
class BlockFollower {
 public:
  BlockFollower(chain::ChainPort& chain, ValidatorService& service,
                std::chrono::milliseconds interval = std::chrono::milliseconds(20));
  ~BlockFollower();

 private:
  void run();
  chain::ChainPort& chain_;
  ValidatorService& service_;
  const std::chrono::milliseconds interval_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace cowboy::cip11
