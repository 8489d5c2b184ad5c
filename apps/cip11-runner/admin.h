// cip11-runner's admin routes (docs/operations.md, "cip11-runner"), on
// --admin-listen (off unless given; loopback in the packaged config), with no
// authentication. /healthz: the process answers. /readyz: the runner has
// started and at least one validator of its Sub(R) has admitted it (or it
// runs --poll-only). /metrics: the Prometheus text format, cip11_runner_*
// then process_*.
#pragma once

#include <atomic>

#include "cip11/runner.h"
#include "net/http_server.h"

namespace cowboy::cip11_runner {

struct AdminState {
  std::atomic<const cip11::Runner*> runner{nullptr};  // set once Runner::start returned
  std::uint32_t max_concurrent = 0;
  bool poll_only = false;
};

/// The Prometheus text of a runner's status; `ready`: what /readyz answers.
std::string runner_metrics(const cip11::RunnerStatus& status, std::uint32_t max_concurrent, bool ready);
net::HttpHandler admin_handler(const AdminState& state);

}  // namespace cowboy::cip11_runner
