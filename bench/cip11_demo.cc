// `make cip11-demo`: CIP-11 push delivery next to the §14 poll fallback, in
// one run, with real processes on 127.0.0.1. It starts two `cip11d --dev`
// chains (200 ms blocks) with three runners each - pushed to on one chain,
// polling every second (`--poll-only`) on the other - submits the same echo
// jobs to both, and prints per job:
//
//   commit -> assigned   the assignment block durable at cip11d (its log) to
//                        the assignment at a runner (its event line)
//   submit -> included   SubmitJob handed to the chain to the job Completed,
//                        as a client polling the job every 5 ms sees it
//
//   cip11_demo [--jobs N]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <thread>

#include "../tests/support/cip11_processes.h"
#include "common/clock.h"
#include "../tests/support/poll.h"
#include "../tests/support/temp_dir.h"

using namespace cowboy;
using testing::ChildProcess;

namespace {


std::optional<std::uint64_t> number_after(const std::string& line, const std::string& key) {
  std::smatch m;
  if (std::regex_search(line, m, std::regex(key + "=(\\d+)"))) return std::stoull(m[1]);
  return std::nullopt;
}

struct Chain {
  std::string name;
  std::unique_ptr<testing::Cip11dProcess> validator;
  std::vector<std::unique_ptr<testing::RunnerProcess>> runners;
  std::filesystem::path log;
};

Chain start_chain(const std::filesystem::path& root, const std::string& name, bool poll) {
  Chain c{name, nullptr, {}, root / (name + "-cip11d.log")};
  // cip11d's logfmt log goes to a file the demo reads back.
  c.validator = std::make_unique<testing::Cip11dProcess>(
      root / name, std::vector<std::string>{"--dev-runners", "3", "--block-ms", "200"}, 0, 0, c.log.string());
  for (unsigned i = 0; i < 3; ++i) {
    std::vector<std::string> extra{"--block-ms", "200"};
    if (poll) extra.insert(extra.end(), {"--poll-only", "--poll-ms", "1000"});
    c.runners.push_back(std::make_unique<testing::RunnerProcess>(root / name, i, extra));
  }
  return c;
}

// The wall-clock time cip11d's block holding `job`'s assignment became durable.
std::optional<std::uint64_t> durable_at(const Chain& c, const std::string& job) {
  std::ifstream in(c.log);
  for (std::string line; std::getline(in, line);)
    if (line.find("event=assignment") != std::string::npos && line.find(job) != std::string::npos)
      return number_after(line, "durable_at_us");
  return std::nullopt;
}

struct Row {
  std::string path, job;
  double commit_to_assigned_ms = -1, submit_to_included_ms = -1;
};

Row run_job(Chain& c, int n) {
  auto chain = c.validator->chain();
  const std::uint64_t submitted = unix_micros();
  auto id = testing::submit_job(chain, c.validator->data() / "keys" / "submitter.key",
                                R"({"echo":"demo job )" + std::to_string(n) + R"("})");
  Row row{c.name, id ? devchain::json::hex0x(id->value) : "(refused)"};
  if (!id) return row;
  // The client's view: the job's state, read every 5 ms.
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(std::chrono::milliseconds(5))) {
    auto job = chain.job(*id);
    if (job && job->state == cip11::chain::JobState::kCompleted) {
      row.submit_to_included_ms = static_cast<double>(unix_micros() - submitted) / 1000.0;
      break;
    }
  }
  auto durable = durable_at(c, row.job);
  for (auto& r : c.runners)
    if (auto line = r->wait_for({"event=assigned", row.job}, std::chrono::milliseconds(50)); line && durable)
      if (auto at = number_after(*line, "at_us"))
        row.commit_to_assigned_ms = static_cast<double>(static_cast<std::int64_t>(*at - *durable)) / 1000.0;
  return row;
}

double median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return x < 0; });
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cip11_demo: CIP-11 push delivery and the 1 s poll fallback, side by side"};
  int jobs = 5;
  app.add_option("--jobs", jobs, "jobs per path")->capture_default_str()->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);
  crypto::init();
  testing::TempDir root;
  std::printf("starting two cip11d --dev chains (200 ms blocks) with three runners each in %s\n", root.path().c_str());
  Chain push = start_chain(root.path(), "push", false);
  Chain poll = start_chain(root.path(), "poll", true);
  if (!push.validator->up() || !poll.validator->up()) {
    std::fprintf(stderr, "cip11_demo: cip11d did not start (logs in %s)\n", root.path().c_str());
    return 1;
  }
  for (auto& r : push.runners) r->wait_for({"event=connected"});
  testing::eventually([&] { return push.validator->metric("cip11d_present_runners") == 3; }, std::chrono::seconds(20));

  std::vector<Row> rows;
  for (int i = 0; i < jobs; ++i) rows.push_back(run_job(push, i));
  for (int i = 0; i < jobs; ++i) rows.push_back(run_job(poll, i));
  std::printf("\n%-5s %-68s %20s %20s\n", "path", "job_id", "commit -> assigned", "submit -> included");
  for (const auto& r : rows)
    std::printf("%-5s %-68s %17.1f ms %17.1f ms\n", r.path.c_str(), r.job.c_str(), r.commit_to_assigned_ms,
                r.submit_to_included_ms);
  for (const char* path : {"push", "poll"}) {
    std::vector<double> a, b;
    for (const auto& r : rows)
      if (r.path == path) a.push_back(r.commit_to_assigned_ms), b.push_back(r.submit_to_included_ms);
    std::printf("median %-4s %62s %17.1f ms %17.1f ms\n", path, "", median(a), median(b));
  }
  return 0;
}
