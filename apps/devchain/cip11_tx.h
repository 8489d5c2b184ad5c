// `devchain cip11-tx <instruction>`: see cip11_tx.cc.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace cowboy::devchain {

class Cip11TxCommand {
 public:
  explicit Cip11TxCommand(CLI::App& app);
  bool chosen() const { return cmd_->parsed(); }
  int run() const;

 private:
  CLI::App* cmd_ = nullptr;
  std::string key_file_, node_ = "http://127.0.0.1:7545";
  std::string stake_ = "1000", price_ = "0", max_price_ = "0";
  std::vector<std::string> kinds_{"Llm", "Http", "Mcp", "Custom", "PublishChainRoot", "Agent"};
  std::uint32_t max_concurrent_ = 4, runners_ = 1;
  std::string kind_ = "Llm", spec_ = "{}", job_id_, result_;
  std::string salt_ = std::string(64, '0');
  std::uint64_t timeout_ = 30;
};

}  // namespace cowboy::devchain
