#include "cip11/validator/service.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <future>

#include "cip11/subset.h"
#include "common/log.h"
#include "net/metrics_text.h"

namespace cowboy::cip11 {

namespace asio = boost::asio;

void ChainForwarder::forward(Bytes tx, const Address& runner, const JobId& job_id, bool reveal) {
  asio::post(thread_, [this, h = Held{std::move(tx), runner, job_id}, reveal] {
    auto height = chain_.height();
    if (!height) {
      ++refused_;
      return;
    }
    if (!try_forward(h, reveal, *height)) {
      ++held_count_;
      held_.push_back(h);
    }
  });
}

void ChainForwarder::on_block(Height height) {
  asio::post(thread_, [this, height] {
    std::erase_if(held_, [&](const Held& h) { return try_forward(h, true, height); });
  });
}

bool ChainForwarder::try_forward(const Held& h, bool reveal, Height height) {
  if (reveal) {
    auto job = chain_.job(h.job_id);
    if (!job) return false;  // the chain did not answer: try again next block
    if (chain::terminal(job->state)) return true;  // nothing left to reveal for
    // §10.3: a reveal the next block could not include is held, never sent early.
    if (!chain::reveal_allowed(*job, h.runner, height + 1)) return false;
  }
  auto submitted = chain_.submit(h.tx);
  if (submitted) {
    ++submitted_;
  } else {
    ++refused_;
    log::warn("result_not_admitted", log::field("job_id", to_hex0x(h.job_id.value)),
              log::field("why", submitted.error().message));
  }
  return true;
}

template <typename F>
auto ValidatorService::on_io(F f, std::chrono::milliseconds timeout) -> std::optional<decltype(f())> {
  auto promise = std::make_shared<std::promise<decltype(f())>>();
  auto answer = promise->get_future();
  asio::post(io_, [promise, f = std::move(f)]() mutable { promise->set_value(f()); });
  if (answer.wait_for(timeout) != std::future_status::ready) return std::nullopt;
  return answer.get();
}

namespace {
// What a block hands the dispatcher once final: its assignments with each
// job's record (read now: the push carries its spec) and its ends.
CommittedAssignments committed_of(chain::ChainPort& chain, Height height, const chain::Effects& effects) {
  CommittedAssignments work{height, std::chrono::steady_clock::now(), {}, effects.ended};
  for (const auto& notice : effects.assigned)
    if (auto job = chain.job(notice.job_id)) work.assigned.push_back({notice, std::move(*job)});
  return work;
}
}  // namespace

Result<std::unique_ptr<ValidatorService>, std::string> ValidatorService::open(ValidatorServiceConfig config,
                                                                              chain::ChainPort& chain,
                                                                              ResultSink* results) {
  auto setup = chain.setup();
  if (!setup) return Err{"the chain has no CIP-11 genesis: " + setup.error().message};
  if (!setup->params.transport_enabled)  // §14: the QUIC transport runs only from Phase 1
    return Err{std::string("this chain's genesis has CIP11_TRANSPORT_ENABLED off: there is no QUIC transport to run")};
  const auto me = crypto::ed25519_from_seed(config.key).public_key;
  bool listed = false;
  for (const auto& v : setup->validators) listed = listed || v.peer_key == me;
  if (!listed && !config.joining)
    return Err{std::string("this validator key is not in the chain's ValidatorSetSnapshot(0)")};
  std::unique_ptr<ValidatorService> s(new ValidatorService(std::move(config), chain, std::move(*setup)));
  if (results) s->results_ = results;
  if (!s->directory_.refresh()) return Err{std::string("the chain's runner registry cannot be read")};

  ValidatorLinksConfig links;
  links.endpoint = s->config_.endpoint;
  // Kept across restarts, so a restarted validator resets its runners' old
  // connections at once (RFC 9000 §10.3); derived, so no second secret to keep.
  links.endpoint.stateless_reset_secret =
      crypto::keccak256({as_bytes("cowboy/cip11-stateless-reset/v1"), ByteView(s->config_.key)});
  auto height = chain.height();
  s->last_height_ = height ? *height : Height{0};
  s->refresh_snapshots(s->last_height_);  // what was scheduled since the genesis, by transaction
  links.offer = chain::offer_at(*s->snapshots_.get(), s->setup_.params.chain_id, s->last_height_);
  links.signature_threads = s->config_.signature_threads;
  ValidatorService* self = s.get();
  ValidatorLinks::Callbacks cb;
  cb.on_admitted = [self](const Address& runner) {
    log::info("runner_admitted", log::field("runner", to_hex0x(runner)));
    // Its Hello was judged before a block that deregistered it: that block's Goodbye applies.
    if (self->directory_.deregistered(runner)) self->links_->goodbye(runner, GoodbyeReason::kAuthFailed, "deregistered");
  };
  cb.on_lost = [self](const Address& runner, const std::string& why) {
    log::info("runner_lost", log::field("runner", to_hex0x(runner)), log::field("why", why));
  };
  cb.on_link_ended = [self](const Address&, ValidatorLinks::LinkId link) { self->dispatcher_->on_link_ended(link); };
  cb.on_job_frame = [self](const Address& runner, ValidatorLinks::LinkId link, std::int64_t stream, const Frame& f) {
    self->dispatcher_->on_job_frame(runner, link, stream, f);
  };
  auto opened = ValidatorLinks::open(s->io_, s->signer_, s->admission_, s->entropy_, std::move(links), std::move(cb));
  if (!opened) return Err{"cannot listen: " + opened.error()};
  s->links_ = std::move(*opened);
  s->dispatcher_ = std::make_unique<Dispatcher>(*s->links_, *s->results_, *s->setup_.tx_format, s->config_.ack_timeout_blocks);
  s->port_ = s->links_->port();
  // The blocks applied before a restart but not final then (§10.1, choice
  // 158): no push of theirs was sent, so they wait for finality again here.
  for (Height h = s->setup_.final_height(s->last_height_) + 1; h <= s->last_height_; ++h) {
    auto effects = chain.block_effects(h);
    if (!effects) return Err{"block " + std::to_string(h.value) + "'s effects cannot be read: " + effects.error().message};
    s->unfinal_.push_back(committed_of(chain, h, *effects));
  }
  s->thread_ = std::thread([self] {
    auto guard = asio::make_work_guard(self->io_);
    self->io_.run();
  });
  return s;
}

ValidatorService::ValidatorService(ValidatorServiceConfig config, chain::ChainPort& chain, chain::ChainSetup setup)
    : config_(std::move(config)),
      chain_(chain),
      setup_(std::move(setup)),
      snapshots_(setup_.snapshots()),
      signer_(Signer::validator(config_.key)),
      directory_(chain),
      admission_(directory_, snapshots_, crypto::ed25519_from_seed(config_.key).public_key, setup_.params.subset,
                 last_height_),
      forwarder_(chain),
      me_(crypto::ed25519_from_seed(config_.key).public_key) {}

ValidatorService::~ValidatorService() {
  if (thread_.joinable()) {
    on_io([this] { return (links_->goodbye_all(GoodbyeReason::kShutdown), 0); }, std::chrono::seconds(1));
    // Each runner closes once it has read its Goodbye; closing first could beat the Goodbye there.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < deadline &&
           on_io([this] { return links_->connections(); }, std::chrono::milliseconds(100)).value_or(0) > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    io_.stop();
    thread_.join();
  }
  dispatcher_.reset();
  links_.reset();
}

void ValidatorService::on_block(const AppliedBlock& block) {
  // Off the io thread: what the pushes carry is read here, so the io thread never waits on the chain.
  const std::uint64_t durable_us = unix_micros();  // before the job reads, as the steady time committed_of takes
  CommittedAssignments work = committed_of(chain_, block.height, block.effects);
  for (const auto& notice : block.effects.assigned)
    log::info("assignment", log::field("job_id", to_hex0x(notice.job_id.value)), log::field("runner", to_hex0x(notice.runner)),
              log::field("height", block.height.value), log::field("durable_at_us", durable_us));
  for (const auto& d : block.effects.shadow) {  // §14 Phase 1 telemetry: what CIP-11 selection would have drawn
    ++shadow_draws_;
    shadow_present_members_ += d.shadow_present;
    if (d.shadow == d.live) ++shadow_agreements_;
  }
  // §6.2: a deregistered runner is no longer admitted, from the block that deregistered it on.
  directory_.on_deregistered(block.effects.deregistered);
  refresh_snapshots(block.height);  // before admission judges at this height
  last_height_ = block.height;
  asio::post(io_, [this, work = std::move(work), deregistered = block.effects.deregistered, durable_us] {
    links_->on_block(work.height);
    react_to_epochs(work.height);
    // §8.2: the other validators' proposers hear of this local presence as of this block.
    if (!view_peers_.empty()) gossip_view(work.height, links_->presence().present_runners());
    for (const auto& runner : deregistered) {
      log::info("runner_deregistered", log::field("runner", to_hex0x(runner)), log::field("height", work.height.value));
      links_->goodbye(runner, GoodbyeReason::kAuthFailed, "deregistered at block " + std::to_string(work.height.value));
    }
    // §10.1: pushed only once final (docs/cip11.md choice 158). The
    // dispatcher sees the final chain, block by block, F behind the head with
    // several validators (its ack timeouts count those heights alike); a lone
    // producer's block is final at once.
    unfinal_.push_back(std::move(work));
    const Height final = setup_.final_height(unfinal_.back().height);
    while (!unfinal_.empty() && unfinal_.front().height <= final) {
      // With several validators, when each assignment became final here: this
      // block's durable time (what cip11_push_bench --validators measures from).
      if (setup_.finality_depth > 0)
        for (const auto& a : unfinal_.front().assigned)
          log::info("assignment_final", log::field("job_id", to_hex0x(a.notice.job_id.value)),
                    log::field("runner", to_hex0x(a.notice.runner)), log::field("height", unfinal_.front().height.value),
                    log::field("final_at_us", durable_us));
      dispatcher_->on_block(unfinal_.front());
      unfinal_.pop_front();
    }
  });
  forwarder_.on_block(block.height);
}

void ValidatorService::on_rollback(Height height) {
  log::warn("chain_rolled_back", log::field("height", height.value));
  last_height_ = height;
  (void)directory_.refresh();  // a dropped block may have registered runners the winning branch orders otherwise
  // A validator set a dropped block scheduled no longer holds (the chain has
  // withdrawn it); the winning branch's blocks bring theirs through on_block.
  if (auto changes = chain_.validator_set_changes(); changes && snapshots_.withdraw(*changes)) {
    const auto held = snapshots_.get();
    log::warn("validator_set_withdrawn", log::field("height", height.value), log::field("epochs", held->epochs().size()));
    asio::post(io_, [this, height] { react_to_epochs(height); });
  }
  // The dropped blocks were not final (a node un-applies none that is), so
  // nothing they assigned or ended reached the dispatcher: they are dropped
  // from what waits for finality, and no push is withdrawn.
  asio::post(io_, [this, height] {
    while (!unfinal_.empty() && unfinal_.back().height > height) unfinal_.pop_back();
  });
}

// §5.3 at block `height`, on the io thread: new connections are offered the
// pairs current now, and at a cutoff every connection admitted under the
// epoch it ends is told Goodbye{OverlapExpired} (point 4). Its runner drains
// what it had in flight on it through the chain (§11.5) and does not come
// back under that pair: no validator admits it any more.
void ValidatorService::refresh_snapshots(Height height) {
  auto changes = chain_.validator_set_changes();
  if (!changes || !snapshots_.update(*changes)) return;
  const auto held = snapshots_.get();
  const auto& last = held->epochs().back();
  log::info("validator_set_read", log::field("height", height.value), log::field("epoch", last.epoch.value),
            log::field("activation_height", last.activation_height.value), log::field("validators", last.peers.size()));
}

void ValidatorService::react_to_epochs(Height height) {
  const auto snapshots = snapshots_.get();
  links_->set_offer(chain::offer_at(*snapshots, setup_.params.chain_id, height));
  const auto expired = [&](const ConnectionBinding& b) {
    return chain::overlap_expired(*snapshots, EpochPair{b.subset_epoch, b.validator_set_hash}, height);
  };
  const std::size_t n = links_->goodbye_where(expired, GoodbyeReason::kOverlapExpired,
                                              "the overlap window ended at block " + std::to_string(height.value));
  if (n == 0) return;
  overlap_expired_ += n;
  log::info("overlap_expired", log::field("height", height.value), log::field("connections", n),
            log::field("epoch", snapshots->active(height).epoch.value));
}

std::optional<Bytes> ValidatorService::presence_field(Height height, std::uint32_t registry_size) {
  auto present = on_io([this] { return links_->presence().present_runners(); }, std::chrono::milliseconds(200));
  // Without an answer from the io thread its own view is empty, which fails open (§7.3); the peers' still count.
  const PresentSet own = present ? directory_.present_set(*present, registry_size) : PresentSet(registry_size);
  directory_.know(registry_size);  // the keys of every runner a view may name, read before the views' lock
  const auto snapshots = snapshots_.get();
  const auto sees = [&](const crypto::Ed25519Public& sender, const EpochPair& pair, std::uint32_t index) {
    const auto* snapshot = snapshots->select(pair, height);
    const auto key = directory_.key_at(index);
    return snapshot && key && in_subset(*key, snapshot->peers, sender, setup_.params.subset);
  };
  std::lock_guard lock(views_mu_);
  // Across an overlap the views of both epochs count; past its cutoff the old epoch's do not (§5.3).
  const PresentSet set = views_.aggregate(own, height, chain::current_pairs(*snapshots, height), sees);
  presence_input_runners_ = set.count();
  presence_input_height_ = height;
  return encode_presence(set);
}

void ValidatorService::set_view_peers(std::vector<ViewSink> peers) { view_peers_ = std::move(peers); }

void ValidatorService::gossip_view(Height height, const std::vector<Address>& present) {
  // §5.3 point 3: under the snapshot this validator is in at `height`, the newest if both.
  const auto pair = chain::view_pair(*snapshots_.get(), me_, height);
  if (!pair) {  // it left the set and the overlap is over: it holds no runner, and no peer would take the view
    ++views_unstated_;
    return;
  }
  PresenceView view;
  view.subset_epoch = pair->subset_epoch;
  view.validator_set_hash = pair->validator_set_hash;
  view.height = height;
  view.registry_size = directory_.size();
  if (view.registry_size > kMaxViewRegistry) return;  // beyond what a peer decodes: its proposers see only their own
  view.presence = encode_presence(directory_.present_set(present, view.registry_size));
  Bytes bytes = encode_view(sign_view(signer_, setup_.params.chain_id, std::move(view)));
  view_epoch_ = pair->subset_epoch;
  std::lock_guard lock(views_mu_);
  view_to_send_ = std::move(bytes);
  if (view_sending_) return;  // the sender takes the latest when it is done with the one in hand
  view_sending_ = true;
  asio::post(gossip_, [this] { send_views(); });
}

void ValidatorService::send_views() {
  for (;;) {
    Bytes bytes;
    {
      std::lock_guard lock(views_mu_);
      if (!view_to_send_) {
        view_sending_ = false;
        return;
      }
      bytes = std::move(*view_to_send_);
      view_to_send_.reset();
    }
    for (const auto& peer : view_peers_) peer(bytes);  // a peer that is down misses this one; the next block's goes
    ++views_sent_;
  }
}

Res<bool> ValidatorService::receive_view(ByteView bytes) {
  auto view = decode_view(bytes);
  // Until its first block this validator's head is the chain's when it opened (a restart on a long chain).
  const Height head = last_height_.load();
  // Checked against the snapshots current at the height the sender took it (§5.3 point 3, as a receipt).
  auto sender = view ? check_view(ViewContext{setup_.params.chain_id, chain::view_snapshots(*snapshots_.get(), view->height), me_},
                                  *view, head)
                     : Res<crypto::Ed25519Public>(Err{view.error()});
  if (!sender && sender.error() == Errc::kViewFromTheFuture) {
    // This validator lags the sender (a slow start, a catch-up): nothing wrong with the view, so not a refusal.
    ++views_ahead_;
    return Err{sender.error()};
  }
  if (!sender) {
    ++views_refused_;
    log::warn("presence_view_refused", log::field("why", std::string(to_string(sender.error()))));
    return Err{sender.error()};
  }
  std::lock_guard lock(views_mu_);
  const bool kept = views_.offer(*sender, *view);
  ++(kept ? views_kept_ : views_not_newer_);
  return kept;
}

std::string ValidatorService::metrics() {
  auto text = on_io(
      [this] {
        const DispatcherStats& d = dispatcher_->stats();
        net::MetricsText out;
        auto gauge = [&](const char* name, const char* help, auto value) { out.series(name, "gauge", help, value); };
        auto counter = [&](const char* name, const char* help, auto value) { out.series(name, "counter", help, value); };
        gauge("cip11d_block_height", "The last committed block this validator has dispatched.", last_height_.load().value);
        gauge("cip11d_quic_connections", "QUIC connections held, admitted or not yet.", links_->connections());
        gauge("cip11d_subset_epoch", "The subset_epoch active at the last committed block (section 5.3).",
              snapshots_.get()->active(last_height_.load()).epoch.value);
        counter("cip11d_overlap_expired_total",
                "Connections told Goodbye OverlapExpired at the end of a reconfiguration overlap (section 5.3).",
                overlap_expired_.load());
        gauge("cip11d_connected_runners", "Runners with an admitted connection.", links_->admitted_runners());
        gauge("cip11d_registered_runners", "Runners in the registry as this validator last read it.", directory_.size());
        gauge("cip11d_present_runners", "Runners in local presence (section 7.4).", links_->presence().present_runners().size());
        gauge("cip11d_presence_input_runners",
              "Runners marked present in the last PresenceInput this validator stated as a block's producer (section 8.1).",
              presence_input_runners_.load());
        gauge("cip11d_presence_input_height", "The block of that PresenceInput (0: this validator has produced none).",
              presence_input_height_.load().value);
        const auto queue = links_->signature_queue();
        out.head("cip11d_signature_queue_depth", "gauge", "Signature work waiting for a worker thread: own seals, peers' checks.");
        out.sample("cip11d_signature_queue_depth", queue.own, R"({queue="own"})");
        out.sample("cip11d_signature_queue_depth", queue.peers, R"({queue="peers"})");
        const ValidatorLinksStats& l = links_->stats();
        counter("cip11d_admissions_total", "Runner connections admitted (section 6.2).", l.admitted);
        out.head("cip11d_admission_refusals_total", "counter", "Connections said Goodbye to before admission, by reason.");
        for (std::size_t r = 0; r < l.refused.size(); ++r)
          out.sample("cip11d_admission_refusals_total", l.refused[r],
                     "{reason=\"" + std::string(goodbye_reason_name(static_cast<GoodbyeReason>(r))) + "\"}");
        counter("cip11d_runner_losses_total", "Admitted runner connections lost (closed, timed out or superseded).", l.lost);
        counter("cip11d_capability_deltas_total", "CapabilityDeltas taken from admitted runners (§6.5, advisory).",
                l.capability_deltas);
        gauge("cip11d_in_flight_pushes", "Pushed assignments not yet ended.", dispatcher_->in_flight());
        gauge("cip11d_job_streams_open", "Job streams not yet ended by both ends.", links_->job_streams());
        counter("cip11d_pushes_total", "JobAssignments pushed.", d.pushes);
        counter("cip11d_assignments_not_pushed_total", "Assignments to runners outside local presence.", d.not_present);
        counter("cip11d_assignments_withheld_total",
                "Assignments not pushed: their job kind removed by the runner's CapabilityDelta.", d.withheld);
        out.head("cip11d_acks_total", "counter", "JobAcks by status.");
        out.sample("cip11d_acks_total", d.acks_accepted, R"({status="accepted"})");
        out.sample("cip11d_acks_total", d.acks_duplicate, R"({status="duplicate"})");
        out.sample("cip11d_acks_total", d.acks_rejected, R"({status="reject"})");
        counter("cip11d_presence_exits_total", "Runners that left local presence (timeout, loss, backpressure, hard failure).",
                links_->stats().presence_exits);
        counter("cip11d_hard_failures_total", "Pushes without a framed response within ACK_TIMEOUT_BLOCKS.", d.hard_failures);
        counter("cip11d_stale_nonces_total", "Heartbeat Pings whose nonce was not above their connection's last one, dropped.",
                links_->stats().stale_nonces);
        counter("cip11d_bad_seals_total",
                "Frames whose signature did not verify (a forged Ping, a rejected CapabilityDelta), dropped.",
                links_->stats().bad_seals);
        counter("cip11d_goodbyes_sent_total", "Goodbyes this validator said (refusals, supersessions, shutdown).",
                links_->stats().goodbyes_sent);
        counter("cip11d_presence_receipts_total", "Mode A PresenceReceipts sent with a Pong to runners that asked.",
                links_->stats().receipts);
        counter("cip11d_cancels_total", "JobCancels sent.", d.cancels);
        out.head("cip11d_results_forwarded_total", "counter", "Result frames checked and handed to the chain.");
        out.sample("cip11d_results_forwarded_total", d.commits_forwarded, R"({frame="commit"})");
        out.sample("cip11d_results_forwarded_total", d.results_forwarded, R"({frame="result"})");
        counter("cip11d_results_refused_total", "Result frames whose transaction failed the section 10.3 checks.", d.results_refused);
        counter("cip11d_results_held_total", "Reveals held until their window opened.", forwarder_.held());
        counter("cip11d_results_submitted_total", "Result transactions the chain admitted.", forwarder_.submitted());
        counter("cip11d_job_progress_total", "JobProgress frames received.", d.progress);
        counter("cip11d_presence_views_sent_total", "Views of local presence this validator gossiped to its peers (section 8.2).",
                views_sent_.load());
        counter("cip11d_presence_views_kept_total", "Peers' presence views checked and kept (section 8.2).", views_kept_.load());
        counter("cip11d_presence_views_not_newer_total", "Peers' presence views that verified but were not newer than the one held.",
                views_not_newer_.load());
        counter("cip11d_presence_views_refused_total", "Presence views that did not decode or verify, dropped.",
                views_refused_.load());
        counter("cip11d_presence_views_ahead_total",
                "Peers' presence views taken more than 3 blocks above this validator's head (it lags), dropped unjudged.",
                views_ahead_.load());
        gauge("cip11d_presence_view_epoch", "The subset_epoch of the snapshot the last view this validator signed names (section 5.3).",
              view_epoch_.load().value);
        counter("cip11d_presence_views_unstated_total",
                "Blocks after which this validator stated no view: it was in no current validator-set snapshot (section 5.3).",
                views_unstated_.load());
        {
          std::lock_guard lock(views_mu_);
          const Height next = last_height_.load() + 1;
          const std::size_t fresh = views_.fresh_count(next, chain::current_pairs(*snapshots_.get(), next));
          gauge("cip11d_presence_views_fresh", "Peers whose presence view counts for the next block.", fresh);
        }
        counter("cip11d_shadow_draws_total",
                "Selections whose CIP-11 draw was computed beside the live one (CIP11_PRESENCE_SHADOW_ENABLED).",
                shadow_draws_.load());
        counter("cip11d_shadow_agreements_total", "Shadow draws that chose the live committee.", shadow_agreements_.load());
        counter("cip11d_shadow_present_members_total", "Members of shadow committees marked present in PresenceInput.",
                shadow_present_members_.load());
        counter("cip11d_bad_frames_total", "Job-stream frames that named another assignment or came out of turn.", d.bad_frames);
        // Pre-auth limits (docs/cip11.md, "Pre-auth limits"; docs/operations.md, "Abuse limits").
        const quic::EndpointStats q = links_->endpoint_stats();
        const SignatureWorkerStats w = links_->signature_stats();
        gauge("cip11d_quic_half_open", "QUIC connections whose handshake has not finished.", q.half_open);
        counter("cip11d_quic_refused_initials_total", "Initials dropped unanswered by the per-address connection rate.",
                q.refused_initials);
        counter("cip11d_quic_evicted_handshakes_total", "Half-open handshakes evicted by a newer Initial at the cap.",
                q.evicted_handshakes);
        gauge("cip11d_handshake_queue_waiting", "Handshake frames of unadmitted peers waiting for verification.",
              w.handshakes_waiting);
        out.head("cip11d_handshake_queue_refusals_total", "counter", "Handshakes answered RateLimited by the verification queue.");
        out.sample("cip11d_handshake_queue_refusals_total", w.handshakes_refused, R"({why="full"})");
        out.sample("cip11d_handshake_queue_refusals_total", w.handshakes_expired, R"({why="expired"})");
        out.histogram("cip11d_push_latency_seconds", "Block durable to the runner's JobAck back at the validator.",
                      dispatcher_->ack_latency());
        return out.text();
      },
      std::chrono::seconds(2));
  return text.value_or("");
}

std::optional<JobProgress> ValidatorService::progress(const JobId& job_id) {
  auto p = on_io([this, &job_id] { return dispatcher_->progress(job_id); }, std::chrono::seconds(1));
  return p ? *p : std::nullopt;
}

BlockFollower::BlockFollower(chain::ChainPort& chain, ValidatorService& service, std::chrono::milliseconds interval)
    : chain_(chain), service_(service), interval_(interval), thread_([this] { run(); }) {}

BlockFollower::~BlockFollower() {
  stop_ = true;
  thread_.join();
}

void BlockFollower::run() {
  std::optional<Height> seen;
  while (!stop_) {
    if (auto h = chain_.height(); h) {
      if (!seen) seen = *h;  // from now on: a validator pushes what is final after it started
      for (Height next = *seen + 1; next <= *h && !stop_; ++next) {
        auto effects = chain_.block_effects(next);
        if (!effects) break;
        service_.on_block(AppliedBlock{next, std::move(*effects)});
        seen = next;
      }
    }
    std::this_thread::sleep_for(interval_);
  }
}

}  // namespace cowboy::cip11
