#include "devchain/peer_apis.h"

#include "common/log.h"

namespace cowboy::devchain {

Result<std::shared_ptr<PeerApis>, std::string> PeerApis::open(const std::vector<std::string>& urls,
                                                              const crypto::Ed25519Public& self,
                                                              std::chrono::milliseconds timeout) {
  std::shared_ptr<PeerApis> out(new PeerApis(self, timeout));
  std::lock_guard lock(out->mu_);
  for (const auto& url : urls)
    if (!out->add(url)) return Err{url + " is not http://host:port"};
  return out;
}

bool PeerApis::add(const std::string& url) {
  if (urls_.count(url)) return true;
  auto client = HttpClient::from_url(url, timeout_);
  if (!client) return false;
  urls_.insert(url);
  clients_.push_back(std::make_shared<HttpClient>(std::move(*client)));
  return true;
}

std::size_t PeerApis::learn(const std::vector<cip11::chain::ValidatorEntry>& named) {
  std::lock_guard lock(mu_);
  const std::size_t before = clients_.size();
  for (const auto& v : named) {
    if (v.chain_api.empty() || v.peer_key == self_) continue;
    const std::string url = "http://" + v.chain_api;
    if (urls_.count(url)) continue;
    if (add(url)) log::info("peer_learned", log::field("chain_api", url));
  }
  return clients_.size() - before;
}

std::vector<std::shared_ptr<HttpClient>> PeerApis::clients() const {
  std::lock_guard lock(mu_);
  return clients_;
}

}  // namespace cowboy::devchain
