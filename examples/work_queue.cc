// A work queue on CBQS: one producer queues jobs on a lane, a consumer group
// shares them out, and competing workers (each its own connection) do them
// and ack. A job whose worker fails is nacked and comes back; none is lost.
//
//   build/bin/example_work_queue --dev cbqsd-dev --jobs 200 --workers 3
#include <CLI/CLI.hpp>

#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "cbqs/client.h"

using namespace cowboy;
using namespace cowboy::cbqs;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  CLI::App app{"a work queue: a producer and competing workers on one consumer group"};
  std::string dev = "cbqsd-dev";
  int jobs = 200, workers = 3;
  app.add_option("--dev", dev, "the data directory of a running cbqsd --dev")->capture_default_str();
  app.add_option("--jobs", jobs)->capture_default_str();
  app.add_option("--workers", workers)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto options = sdk::ClientOptions::from_dev_dir(dev);
  if (!options) return std::fprintf(stderr, "%s\n", options.error().describe().c_str()), 1;
  auto producer = sdk::Client::connect(*options);
  if (!producer) return std::fprintf(stderr, "%s\n", producer.error().describe().c_str()), 1;
  auto& p = **producer;

  // The queue: a lane, and a group on it from its first record.
  auto lane = p.create_lane();
  if (!lane) return std::fprintf(stderr, "%s\n", lane.error().describe().c_str()), 1;
  GroupConfigV2 config;
  config.lane_id = *lane;
  config.start = StartAt{Sequence{1}};
  config.visibility_timeout_ms = 1'000;  // a job whose worker vanishes comes back after a second
  config.max_visibility_ms = 30'000;
  config.max_in_flight = 1'000;
  config.max_in_flight_per_holder = 50;
  config.max_attempts = 5;
  config.record_deadline_ms = 3'600'000;
  auto group = p.create_group(config);
  if (!group) return std::fprintf(stderr, "%s\n", group.error().describe().c_str()), 1;

  for (int i = 0; i < jobs; ++i) {
    std::string job = "job " + std::to_string(i);
    p.append(*lane, Bytes(job.begin(), job.end()), nullptr);
  }
  if (auto flushed = p.flush(30s); !flushed) return std::fprintf(stderr, "%s\n", flushed.error().describe().c_str()), 1;
  std::printf("queued %d jobs on lane %llu, group %llu\n", jobs, static_cast<unsigned long long>(lane->value),
              static_cast<unsigned long long>(group->value));

  // At-least-once: a job may be done twice (a lease that expired mid-work), so
  // count distinct jobs.
  std::mutex m;
  std::set<std::uint64_t> finished, failed_once;
  std::vector<int> per_worker(static_cast<std::size_t>(workers), 0);
  auto remaining = [&] {
    std::lock_guard lock(m);
    return finished.size() < static_cast<std::size_t>(jobs);
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      auto client = sdk::Client::connect(*options);
      if (!client) return;
      auto consumer = (*client)->consume({.lane = *lane, .group = *group});
      if (!consumer) return;
      while (remaining()) {
        auto lease = (*consumer)->next(200ms);
        if (!lease || !*lease) continue;
        std::uint64_t seq = (*lease)->record.sequence.value;
        // The "work": every 50th job fails on its first attempt, and is retried.
        bool fails = false;
        {
          std::lock_guard lock(m);
          fails = seq % 50 == 0 && failed_once.insert(seq).second;
        }
        if (fails) {
          (void)(*consumer)->nack(**lease);
          continue;
        }
        if ((*consumer)->ack(**lease)) {
          std::lock_guard lock(m);
          ++per_worker[static_cast<std::size_t>(w)];
          finished.insert(seq);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int w = 0; w < workers; ++w) std::printf("worker %d did %d jobs\n", w + 1, per_worker[static_cast<std::size_t>(w)]);
  std::printf("all %zu jobs done (%zu failed once and were retried)\n", finished.size(), failed_once.size());
  return finished.size() == static_cast<std::size_t>(jobs) ? 0 : 1;
}
