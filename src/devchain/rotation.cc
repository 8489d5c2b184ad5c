#include "devchain/rotation.h"

#include <algorithm>
#include <future>
#include <system_error>

#include "common/log.h"

namespace cowboy::devchain {

Rotation::Rotation(Node& node, std::shared_ptr<PeerApis> peers, RotationConfig config)
    : node_(node),
      peers_(std::move(peers)),
      config_(config) {
  // A follower's transactions never reach its node: its chain API sends them
  // to a validator (ForwardingApi, D14), so it has nothing to forward here.
  if (config_.follow_only) return;
  node_.set_submit_observer([this](const Transaction& tx) {
    std::lock_guard lock(mu_);
    if (to_forward_.size() >= kMaxForwardQueue) return;  // the client's own resubmission covers the rest
    to_forward_.push_back(tx);
    wake_.notify_all();
  });
}

Rotation::~Rotation() { stop(); }

std::vector<std::shared_ptr<HttpClient>> Rotation::peers() {
  if (auto named = node_.validators()) peers_->learn(*named);
  return peers_->clients();
}

void Rotation::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
  if (!config_.follow_only) forwarder_ = std::thread([this] { forward_loop(); });
}

void Rotation::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (forwarder_.joinable()) forwarder_.join();
}

void Rotation::forward_loop() {
  for (;;) {
    Transaction tx;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !to_forward_.empty(); });
      if (stopping_) return;
      tx = std::move(to_forward_.front());
      to_forward_.pop_front();
    }
    // A peer that is down misses it; the others hold it.
    for (auto& peer : peers_->clients()) (void)peer->submit(tx);
  }
}

PeerHeads Rotation::peer_heads() const {
  std::lock_guard lock(mu_);
  return peer_heads_;
}

bool Rotation::catch_up() {
  using Clock = std::chrono::steady_clock;
  const ChainHead before = node_.head();
  // Each peer whose head is not on this chain: one ahead is caught up with,
  // one on another branch is followed when its branch wins (Node::follow,
  // docs/devchain.md D11). The highest first, so a validator behind fetches
  // from the one furthest ahead. The heads are asked all at once: a peer that
  // hangs costs one timeout, not one each.
  std::vector<std::pair<ChainHead, HttpClient*>> heads;
  const auto peers = this->peers();
  // A follower asks them all at once (a peer that hangs costs one timeout, not
  // one each); a validator asks in turn, as before, and so does a follower
  // that cannot start a thread.
  std::vector<std::future<ApiResult<ChainHead>>> asked;
  for (auto& peer : peers) {
    if (!config_.follow_only) break;
    try {
      asked.push_back(std::async(std::launch::async, [p = peer.get()] { return p->chain_head(); }));
    } catch (const std::system_error&) {
      break;
    }
  }
  for (std::size_t i = 0; i < peers.size(); ++i)
    if (auto h = i < asked.size() ? asked[i].get() : peers[i]->chain_head()) heads.emplace_back(*h, peers[i].get());
  std::sort(heads.begin(), heads.end(), [](const auto& a, const auto& b) { return a.first.height > b.first.height; });
  if (!heads.empty()) {
    std::lock_guard lock(mu_);
    peer_heads_ = PeerHeads{heads.front().first.height, Clock::now()};
  }
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const auto& [theirs, peer] = heads[i];
    if (stopped()) break;
    const ChainHead mine = node_.head();
    if (theirs.digest == mine.digest) continue;
    if (theirs.height < mine.height)
      if (auto own = node_.block_at(theirs.height); own && own->digest == theirs.digest) continue;  // behind on this chain
    // A follower gives each peer five block intervals (at least one block) while
    // another peer waits behind it: one that serves slowly, or claims more than
    // it serves, holds the next peers back that long; the last peer is not cut
    // short (over a slow link it is all the follower has). A stop ends it
    // between two blocks.
    const bool others_wait = config_.follow_only && i + 1 < heads.size();
    const auto until = Clock::now() + 5 * std::max(config_.block_interval, std::chrono::milliseconds(200));
    auto followed = node_.follow(*peer, [&] { return stopped() || (others_wait && Clock::now() >= until); });
    if (!followed) {
      log::warn("catch_up_refused", log::field("height", theirs.height), log::field("why", followed.error().message));
      continue;
    }
    if (followed->dropped > 0)
      log::warn("fork_resolved", log::field("dropped", followed->dropped), log::field("accepted", followed->accepted),
                log::field("height", node_.head().height));
  }
  const ChainHead after = node_.head();
  if (after == before) return false;
  log::info("caught_up", log::field("height", after.height));
  return true;
}

bool Rotation::stopped() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void Rotation::hold(const SignedBlock& block) {
  if (!config_.hold_from_view || held_ || block.block.view < *config_.hold_from_view) return;
  held_ = true;
  log::warn("block_held", log::field("height", block.block.height), log::field("view", block.block.view.value),
            log::field("ms", config_.hold_for.count()));
  // Until a peer has committed a block at its height (the fork, not timing
  // luck), or hold_for at most.
  const auto until = std::chrono::steady_clock::now() + config_.hold_for;
  for (;;) {
    for (auto& peer : peers_->clients())
      if (auto h = peer->chain_head(); h && h->height >= block.block.height) return;
    std::unique_lock lock(mu_);
    if (wake_.wait_until(lock, std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(20)),
                         [this] { return stopping_; }) ||
        std::chrono::steady_clock::now() >= until)
      return;
  }
}

void Rotation::broadcast(const SignedBlock& block) {
  for (auto& peer : peers_->clients()) {  // no learning here: the node is mid-proposal
    auto r = peer->accept_block(block);
    if (!r && r.error().code == ApiErrorCode::kBlockRefused)
      log::warn("block_refused_by_peer", log::field("height", block.block.height),
                log::field("why", r.error().message));
  }
}

void Rotation::run() {
  using Clock = std::chrono::steady_clock;
  const auto tick = std::max(std::chrono::milliseconds(5), std::min(config_.block_interval, config_.view_timeout) / 4);
  (void)catch_up();  // back from a crash: the blocks it missed first
  ChainHead last = node_.head();
  auto since = Clock::now();  // when `last` became the head here
  auto synced = since;
  const auto started = since;
  // The last round this validator proposed (or passed); views restart per
  // round epoch, so rounds are compared (docs/cip11.md choice 140).
  cip11::chain::Round proposed = node_.round_of(last.height, last.view);
  // Back on a chain that has blocks, its clock does not know the others' views
  // yet: it proposes only once it has committed a block from them, or after a
  // whole rotation of timeouts with none (then nobody else is proposing).
  bool joined = last.height == 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, tick, [this] { return stopping_; })) return;
    }
    // A peer's block built on another block at a height this one holds: follow
    // the peers now (D11) rather than after a view timeout.
    if (node_.take_fork_seen() && catch_up()) continue;
    const auto now = Clock::now();
    if (config_.follow_only) {  // no block comes to it unasked: it asks (D14)
      if (now - synced >= config_.block_interval) synced = now, (void)catch_up();
      continue;
    }
    const ChainHead head = node_.head();
    if (head != last) {
      last = head, since = now, joined = true;
      (void)peers();  // a block may have named a validator that joins: it gets the next ones
    }
    const auto elapsed = now - since;
    if (elapsed < config_.block_interval) continue;
    // The view due now: the one after the head's (0 where the next height
    // starts a round epoch, choice 140), one more per view_timeout without a
    // block; a view timed out belongs to the epoch of the next height.
    const std::uint64_t skipped =
        static_cast<std::uint64_t>((elapsed - config_.block_interval) / config_.view_timeout);
    const cip11::View view = node_.first_view(head) + skipped;
    if (skipped > 0 && now - synced >= config_.view_timeout) {
      synced = now;
      if (catch_up()) continue;  // behind: the head moved, timing starts again from it
    }
    // The leader of the view among the validators active at the next height (D2).
    const cip11::chain::Round round = node_.round_of(head.height + 1, view);
    if (!node_.leads(head.height + 1, view) || round <= proposed) continue;
    const auto proposers = node_.proposers();  // held: the node may publish others meanwhile
    const auto* producers = proposers->at(head.height + 1);
    const auto alone = config_.view_timeout * static_cast<std::int64_t>(producers ? producers->peers.size() : 1);
    if (!joined && now - started < alone) continue;
    if (catch_up()) continue;  // never propose on a stale head
    proposed = round;
    // Sent before this validator's own write (Node::propose_block).
    auto block = node_.propose_block(view, [this](const SignedBlock& b) {
      hold(b);
      broadcast(b);
    });
    if (!block) log::warn("propose_failed", log::field("view", view.value), log::field("why", block.error().message));
  }
}

}  // namespace cowboy::devchain
