#include "nats_pull.h"

#include <cstdio>

namespace cowboy::bench::peers {

NatsPull::~NatsPull() {
  if (sub_) natsSubscription_Destroy(sub_);
}

bool NatsPull::open(natsConnection* nc, const std::string& stream, const std::string& consumer) {
  natsInbox* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return false;
  inbox_ = inbox;
  natsInbox_Destroy(inbox);
  nc_ = nc;
  next_ = "$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer;
  return natsConnection_SubscribeSync(&sub_, nc_, inbox_.c_str()) == NATS_OK;
}

int NatsPull::pending() const {
  int n = 0;
  if (sub_) natsSubscription_GetPending(sub_, &n, nullptr);
  return n;
}

int NatsPull::pull_and_ack(int batch, std::chrono::milliseconds timeout) {
  if (int pending = this->pending(); pending < batch) {
    char request[96];
    std::snprintf(request, sizeof request, "{\"batch\":%d,\"expires\":%lld}", batch - pending,
                  static_cast<long long>(std::chrono::nanoseconds(timeout).count()));
    if (natsConnection_PublishRequestString(nc_, next_.c_str(), inbox_.c_str(), request) != NATS_OK) return 0;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int acked = 0;
  while (acked < batch) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, sub_, std::max<std::int64_t>(1, left.count())) != NATS_OK) break;
    const char* reply = natsMsg_GetReply(m);
    bool record = reply != nullptr && reply[0] != '\0';  // a status (404, 408: the request ended) has none
    if (record && natsConnection_PublishString(nc_, reply, "+ACK") == NATS_OK) ++acked;
    natsMsg_Destroy(m);
    if (!record) break;
  }
  return acked;
}

}  // namespace cowboy::bench::peers
