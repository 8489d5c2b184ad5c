#include "cip11/link/validator_links.h"

#include "common/log.h"

namespace cowboy::cip11 {

namespace {
// A delta's additions leave the removed set and its removals the added one.
template <typename T>
void apply_delta(std::set<T>& added, std::set<T>& removed, const std::vector<T>& adds, const std::vector<T>& removes) {
  for (const T& k : adds) removed.erase(k), added.insert(k);
  for (const T& k : removes) added.erase(k), removed.insert(k);
}
}  // namespace

Result<std::unique_ptr<ValidatorLinks>, std::string> ValidatorLinks::open(boost::asio::io_context& io, const Signer& me,
                                                                          Admission& admission, Entropy& entropy,
                                                                          ValidatorLinksConfig config,
                                                                          Callbacks callbacks) {
  std::unique_ptr<ValidatorLinks> links(
      new ValidatorLinks(io, me, admission, entropy, std::move(config), std::move(callbacks)));
  quic::Events events;
  ValidatorLinks* self = links.get();
  events.on_established = [self](quic::Connection& c) { self->on_established(c); };
  events.on_stream_data = [self](quic::Connection& c, std::int64_t stream, ByteView data) {
    if (auto it = self->peers_.find(&c); it != self->peers_.end()) it->second.channel->on_stream_data(stream, data);
  };
  events.on_stream_end = [self](quic::Connection& c, std::int64_t stream) {
    if (auto it = self->peers_.find(&c); it != self->peers_.end()) it->second.channel->on_stream_end(stream);
  };
  events.on_stream_closed = [self](quic::Connection& c, std::int64_t stream) {
    auto it = self->peers_.find(&c);
    if (it == self->peers_.end()) return;
    it->second.channel->on_stream_closed(stream);
    if (stream != kControlStream) self->on_job_stream_closed(c);
  };
  events.on_closed = [self](quic::Connection& c, const std::string& why) { self->on_closed(c, why); };
  auto endpoint = quic::Endpoint::open(io, links->config_.endpoint, std::move(events));
  if (!endpoint) return Err{endpoint.error()};
  links->endpoint_ = std::move(*endpoint);
  return links;
}

ValidatorLinks::ValidatorLinks(boost::asio::io_context& io, const Signer& me, Admission& admission, Entropy& entropy,
                               ValidatorLinksConfig config, Callbacks callbacks)
    : me_(me), admission_(admission), entropy_(entropy), config_(std::move(config)), callbacks_(std::move(callbacks)),
      budget_(config_.read_budget_bytes), worker_(io, config_.signature_threads) {}

ValidatorLinks::~ValidatorLinks() { peers_.clear(); }

void ValidatorLinks::on_established(quic::Connection& c) {
  Peer& peer = peers_[&c];
  Channel::Callbacks cb;
  cb.on_admitted = [this, &peer](Channel&) { on_admitted(peer); };
  cb.on_frame = [this, &peer](Channel&, std::int64_t stream, const Frame& f, const Res<Unit>& seal) {
    on_frame(peer, stream, f, seal);
  };
  cb.on_goodbye = [this](Channel& channel, const Goodbye& bye, bool by_peer) {
    if (by_peer) return;
    ++stats_.goodbyes_sent;
    if (!channel.admitted()) ++stats_.refused.at(static_cast<std::size_t>(bye.reason));
    log::info("goodbye_sent", log::field("reason", goodbye_reason_name(bye.reason)),
              log::field("detail", bye.detail.value_or("")));
  };
  LocalOffer offer = config_.offer;
  offer.block_height = height_;
  peer.channel = std::make_unique<Channel>(
      c, Channel::Setup{me_, offer, admission_, entropy_, worker_, &budget_, config_.admission_deadline}, std::move(cb));
}

// §6.2: only now may anything about the runner be recorded. §5.2/§15.1: one
// admitted connection per runner identity and epoch pair here, so an identity
// holds at most k = |Sub(R)| across the validator set, 2k during an overlap;
// the newest wins (a runner that reconnects must not wait for its dead
// connection's idle timeout) and the older one is told Goodbye{RateLimited}
// and counts as lost. An older one under the other pair of an overlap with
// job streams open drains first (§11.5, choice 135): it is no longer the
// runner's connection, but its streams still carry results and cancels.
void ValidatorLinks::on_admitted(Peer& peer) {
  auto address = runner_address(peer.channel->binding().runner);
  if (!address) return peer.channel->goodbye(GoodbyeReason::kAuthFailed);
  peer.runner = *address;
  peer.link = next_link_++;
  by_link_[peer.link] = &peer.channel->connection();
  const ConnectionBinding& mine = peer.channel->binding();
  auto same_pair = [&mine](const Peer& other) {
    const ConnectionBinding& b = other.channel->binding();
    return b.subset_epoch == mine.subset_epoch && b.validator_set_hash == mine.validator_set_hash;
  };
  // At most one draining connection per runner, never of the pair just admitted.
  auto end_draining = [this, &peer] {
    auto d = draining_.find(peer.runner);
    if (d == draining_.end()) return;
    auto p = peers_.find(d->second);
    draining_.erase(d);
    if (p != peers_.end()) supersede(p->second);
  };
  if (auto d = draining_.find(peer.runner); d != draining_.end())
    if (auto p = peers_.find(d->second); p == peers_.end() || same_pair(p->second)) end_draining();
  if (auto older = by_runner_.find(peer.runner); older != by_runner_.end()) {
    quic::Connection* superseded = older->second;
    by_runner_.erase(older);
    if (auto p = peers_.find(superseded); p != peers_.end()) {
      Peer& o = p->second;
      if (!same_pair(o) && o.channel->job_streams() > 0 && !o.channel->ended()) {
        end_draining();
        draining_[peer.runner] = superseded;
        log::info("connection_draining", log::field("runner", to_hex0x(peer.runner)),
                  log::field("epoch", o.channel->binding().subset_epoch.value),
                  log::field("job_streams", o.channel->job_streams()));
      } else {
        supersede(o);
      }
    }
    lose(peer.runner, "superseded by a newer connection");
  }
  by_runner_[peer.runner] = &peer.channel->connection();
  presence_.on_admitted(peer.runner);
  ++stats_.admitted;
  if (callbacks_.on_admitted) callbacks_.on_admitted(peer.runner);
}

void ValidatorLinks::on_frame(Peer& peer, std::int64_t stream, const Frame& frame, const Res<Unit>& seal) {
  if (!seal) {
    ++stats_.bad_seals;
    return;
  }
  if (stream != kControlStream) {
    if (callbacks_.on_job_frame) callbacks_.on_job_frame(peer.runner, peer.link, stream, frame);
    return;
  }
  if (const auto* ping = std::get_if<HeartbeatPing>(&frame)) {
    ++stats_.pings;
    if (!peer.nonces.accept_ping(ping->nonce)) {
      ++stats_.stale_nonces;
      return;
    }
    // Presence is stamped with this validator's own height, not the runner's claim.
    if (auto it = by_runner_.find(peer.runner); it != by_runner_.end() && it->second == &peer.channel->connection())
      presence_.on_ping(peer.runner, height_);
    HeartbeatPong pong{height_, ping->nonce, presence_.accepting_new(peer.runner), {}};
    if (peer.channel->send(kControlStream, pong)) ++stats_.pongs;
    // Mode A (§8.3): alongside the Pong, to a runner that asked; the seal fills
    // in the keys, the offer's epoch and set hash, and signs for the chain.
    if (peer.capabilities && peer.capabilities->added.contains(std::string(kPresenceReceiptsCapability))) {
      PresenceReceipt receipt;
      receipt.block_height = pong.block_height;
      receipt.nonce_echo = pong.nonce_echo;
      receipt.accepting_new = pong.accepting_new;
      if (peer.channel->send(kControlStream, receipt)) ++stats_.receipts;
    }
  } else if (const auto* b = std::get_if<BackpressureSignal>(&frame)) {
    const bool was_present = presence_.present(peer.runner);
    presence_.on_backpressure(peer.runner, b->accepting_new);
    if (was_present && !presence_.present(peer.runner)) ++stats_.presence_exits;
  } else if (const auto* d = std::get_if<CapabilityDelta>(&frame)) {
    ++stats_.capability_deltas;
    if (!peer.capabilities) peer.capabilities = std::make_unique<AdvisoryCapabilities>();
    auto& caps = *peer.capabilities;
    apply_delta(caps.added, caps.removed, d->added_capabilities, d->removed_capabilities);
    apply_delta(caps.added_entitlements, caps.removed_entitlements, d->added_entitlements, d->removed_entitlements);
  }
}

void ValidatorLinks::on_closed(quic::Connection& c, const std::string& why) {
  auto it = peers_.find(&c);
  if (it == peers_.end()) return;
  const Address runner = it->second.runner;
  auto owner = by_runner_.find(runner);
  const bool current = owner != by_runner_.end() && owner->second == &c;
  if (auto d = draining_.find(runner); d != draining_.end() && d->second == &c) draining_.erase(d);
  if (it->second.link != 0) {
    by_link_.erase(it->second.link);
    end_link(it->second);
  }
  peers_.erase(it);
  if (!current) return;
  by_runner_.erase(runner);
  lose(runner, why);
}

void ValidatorLinks::on_job_stream_closed(quic::Connection& c) {
  auto it = peers_.find(&c);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  auto d = draining_.find(peer.runner);
  if (d == draining_.end() || d->second != &c || peer.channel->job_streams() > 0) return;
  draining_.erase(d);
  log::info("connection_drained", log::field("runner", to_hex0x(peer.runner)),
            log::field("epoch", peer.channel->binding().subset_epoch.value));
  supersede(peer);
}

void ValidatorLinks::supersede(Peer& older) {
  older.channel->goodbye(GoodbyeReason::kRateLimited, "superseded by a newer connection of this runner");
  end_link(older);
}

void ValidatorLinks::end_link(Peer& peer) {
  if (peer.link_ended) return;
  peer.link_ended = true;
  if (callbacks_.on_link_ended) callbacks_.on_link_ended(peer.runner, peer.link);
}

void ValidatorLinks::lose(const Address& runner, const std::string& why) {
  leave_presence(runner);  // §11.3: at once, routing only
  ++stats_.lost;
  if (callbacks_.on_lost) callbacks_.on_lost(runner, why);
}

void ValidatorLinks::leave_presence(const Address& runner) {
  if (presence_.present(runner)) ++stats_.presence_exits;
  presence_.drop(runner);
}

void ValidatorLinks::on_block(Height height) {
  height_ = std::max(height_, height);
  stats_.presence_exits += presence_.expire(height_).size();
}

const ValidatorLinks::Peer* ValidatorLinks::peer_of(const Address& runner) const {
  auto it = by_runner_.find(runner);
  if (it == by_runner_.end()) return nullptr;
  auto p = peers_.find(it->second);
  return p == peers_.end() ? nullptr : &p->second;
}

std::optional<ValidatorLinks::Pushed> ValidatorLinks::push(const Address& runner, JobAssignment assignment) {
  Peer* peer = peer_of(runner);
  if (!peer) return std::nullopt;
  fill_assignment(assignment, peer->channel->binding());
  const Bytes32 hash = assignment.assignment_hash;
  auto stream = peer->channel->open_job_stream(std::move(assignment));
  if (!stream) return std::nullopt;
  return Pushed{*stream, hash, peer->link};
}

ValidatorLinks::Peer* ValidatorLinks::peer_of(LinkId link) {
  auto it = by_link_.find(link);
  if (it == by_link_.end()) return nullptr;
  auto p = peers_.find(it->second);
  return p == peers_.end() ? nullptr : &p->second;
}

bool ValidatorLinks::send(LinkId link, std::int64_t stream, Frame frame) {
  Peer* peer = peer_of(link);
  return peer && stream != kControlStream && peer->channel->send(stream, std::move(frame));
}

void ValidatorLinks::end_job_stream(LinkId link, std::int64_t stream) {
  if (Peer* peer = peer_of(link)) peer->channel->end_job_stream(stream);
}

bool ValidatorLinks::send(const Address& runner, std::int64_t stream, Frame frame) {
  Peer* peer = peer_of(runner);
  return peer && stream != kControlStream && peer->channel->send(stream, std::move(frame));
}

void ValidatorLinks::end_job_stream(const Address& runner, std::int64_t stream) {
  if (Peer* peer = peer_of(runner)) peer->channel->end_job_stream(stream);
}

void ValidatorLinks::hard_failure(const Address& runner) { leave_presence(runner); }

void ValidatorLinks::goodbye(const Address& runner, GoodbyeReason reason, std::optional<std::string> detail) {
  for (auto& [c, peer] : peers_)
    if (peer.channel && peer.channel->admitted() && peer.runner == runner) peer.channel->goodbye(reason, detail);
}

std::size_t ValidatorLinks::goodbye_where(const std::function<bool(const ConnectionBinding&)>& ends,
                                          GoodbyeReason reason, const std::string& detail) {
  std::size_t n = 0;
  for (auto& [c, peer] : peers_)
    if (peer.channel && peer.channel->admitted() && !peer.channel->ended() && ends(peer.channel->binding())) {
      peer.channel->goodbye(reason, detail);
      ++n;
    }
  return n;
}

void ValidatorLinks::goodbye_all(GoodbyeReason reason, std::optional<std::uint64_t> retry_after_blocks) {
  for (auto& [c, peer] : peers_)
    if (peer.channel) peer.channel->goodbye(reason, std::nullopt, retry_after_blocks);
}

std::size_t ValidatorLinks::job_streams() const {
  std::size_t n = 0;
  for (const auto& [c, peer] : peers_)
    if (peer.channel) n += peer.channel->job_streams();
  return n;
}

const AdvisoryCapabilities* ValidatorLinks::capabilities(const Address& runner) const {
  const Peer* peer = peer_of(runner);
  return peer ? peer->capabilities.get() : nullptr;
}

}  // namespace cowboy::cip11
