// cbqsd's admin endpoints (docs/protocol.md §Q): /healthz, /readyz, /metrics, and the
// dead-letter view of consumer groups (§O): /v1/groups/dead-letters, /v1/groups/redrive.
#pragma once

#include "cbqs/broker/broker.h"
#include "net/http_server.h"

namespace cowboy::cbqsd {

net::HttpHandler admin_handler(cbqs::broker::Broker& broker);
/// Prometheus text exposition of the broker's metrics.
std::string prometheus_text(const cbqs::broker::CoreMetrics& m, std::uint64_t snapshot_height, double snapshot_age_seconds,
                            bool ready);

}  // namespace cowboy::cbqsd
