#include "admin.h"

#include <sstream>

#include "net/metrics_text.h"
#include "net/process_metrics.h"

namespace cowboy::cip11_runner {

namespace {
bool ready(const AdminState& state, const cip11::RunnerStatus& s) { return state.poll_only || s.admitted > 0; }
void ready_series(net::MetricsText& out, bool ready) {
  out.series("cip11_runner_ready", "gauge", "1 when /readyz answers 200.", ready ? 1 : 0);
}
}  // namespace

std::string runner_metrics(const cip11::RunnerStatus& s, std::uint32_t max_concurrent, bool ready) {
  net::MetricsText out;
  ready_series(out, ready);
  out.series("cip11_runner_block_height", "gauge", "The chain height this runner has seen.", s.height.value);
  out.series("cip11_runner_validators", "gauge", "Validators in this runner's Sub(R) (section 5).", s.validators);
  out.series("cip11_runner_connected_validators", "gauge", "Validators of Sub(R) that have admitted this runner now.",
         s.admitted);
  out.series("cip11_runner_jobs_running", "gauge", "Jobs executing now.", s.running);
  out.series("cip11_runner_max_concurrent", "gauge", "Jobs at once before it signals backpressure (--max-concurrent).",
         max_concurrent);
  out.series("cip11_runner_jobs_accepted_total", "counter", "Jobs verified and started (pushed or polled).", s.accepted);
  out.series("cip11_runner_jobs_completed_total", "counter", "Jobs whose final result transaction is in a block.",
         s.completed);
  out.series("cip11_runner_jobs_failed_total", "counter", "Jobs whose task ended without a result (not cancelled).",
         s.failed);
  out.series("cip11_runner_jobs_cancelled_total", "counter", "Jobs stopped by a JobCancel.", s.cancelled);
  out.series("cip11_runner_jobs_resumed_total", "counter", "Jobs owed from before a restart, taken up from the journal.",
         s.resumed);
  out.head("cip11_runner_acks_sent_total", "counter", "JobAcks sent, by status.");
  out.sample("cip11_runner_acks_sent_total", s.acks_accepted, "{status=\"accepted\"}");
  out.sample("cip11_runner_acks_sent_total", s.acks_duplicate, "{status=\"duplicate\"}");
  out.sample("cip11_runner_acks_sent_total", s.acks_rejected, "{status=\"reject\"}");
  out.series("cip11_runner_reconnects_total", "counter", "Connection attempts to a validator after each one's first.",
         s.reconnects);
  out.series("cip11_runner_polls_total", "counter", "Chain polls for jobs while no validator had admitted it (section 14).",
         s.polls);
  out.series("cip11_runner_rebroadcasts_total", "counter", "Retained result transactions submitted again (section 10.3).",
         s.rebroadcasts);
  out.series("cip11_runner_heartbeats_total", "counter", "On-chain heartbeats sent (section 6.6).", s.heartbeats);
  out.series("cip11_runner_last_heartbeat_height", "gauge", "The block of the last on-chain heartbeat the chain included.",
         s.last_heartbeat.value);
  out.series("cip11_runner_heartbeat_cadence_blocks", "gauge",
         "Blocks between this runner's on-chain heartbeats (section 6.6); it is ineligible when the last is older.",
         s.heartbeat_cadence);
  return out.text();
}

net::HttpHandler admin_handler(const AdminState& state) {
  return [&state](const net::HttpRequest& req) -> net::HttpReply {
    if (req.method != "GET") return {405, "text/plain", "GET only\n"};
    if (req.target == "/healthz") return {200, "text/plain", "ok\n"};
    const cip11::Runner* runner = state.runner.load();
    if (req.target == "/readyz") {
      if (!runner) return {503, "text/plain", "starting: reading the chain and its heartbeat\n"};
      const auto s = runner->status();
      if (state.poll_only) return {200, "text/plain", "ready: polling only, at height " + std::to_string(s.height.value) + "\n"};
      if (!ready(state, s))
        return {503, "text/plain",
                "no validator of " + std::to_string(s.validators) + " in Sub(R) has admitted this runner\n"};
      return {200, "text/plain",
              "ready: " + std::to_string(s.admitted) + " of " + std::to_string(s.validators) +
                  " validators connected, at height " + std::to_string(s.height.value) + "\n"};
    }
    if (req.target == "/metrics") {
      // Starting: not ready, and nothing else to say yet.
      net::MetricsText starting;
      ready_series(starting, false);
      std::string text = starting.text();
      if (runner) {
        const auto s = runner->status();
        text = runner_metrics(s, state.max_concurrent, ready(state, s));
      }
      return {200, "text/plain; version=0.0.4", text + net::process_metrics_text()};
    }
    return {404, "text/plain", "no such route: /healthz, /readyz, /metrics\n"};
  };
}

}  // namespace cowboy::cip11_runner
