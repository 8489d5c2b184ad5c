// Verifications/s through the preverification queue against bare libsodium
// verification of the same claims (one Ed25519 verification per claim).
//   build/bin/admission_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "admission/verification_queue.h"

using namespace cowboy;
using namespace cowboy::admission;

namespace {
Bytes sample_claim() {
  crypto::Ed25519Seed issuer{};
  issuer[0] = 1;
  ClaimFields f;
  f.slot = 7;
  f.expires_at = 1'000;
  return make_claim(f, issuer);
}
}  // namespace

static void BM_BareVerify(benchmark::State& state) {
  Bytes claim = sample_claim();
  for (auto _ : state) benchmark::DoNotOptimize(verify(JobKind::kClaim, claim));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BareVerify);

// 64 sources x 16 jobs enqueued, then verified in turns of 256 credits.
static void BM_QueueVerify(benchmark::State& state) {
  Bytes claim = sample_claim();
  auto q = std::move(*VerificationQueue::create(QueueConfig{64, 16, 1'024, 3'600}));
  std::uint64_t now = 0, jobs = 0;
  for (auto _ : state) {
    for (SourceId s = 0; s < 64; ++s)
      for (int i = 0; i < 16; ++i) (void)q.enqueue(s, claim, now);
    while (q.pending() > 0) {
      auto out = q.turn(now, 256);
      jobs += out->size();
      benchmark::DoNotOptimize(out);
    }
    ++now;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(jobs));
}
BENCHMARK(BM_QueueVerify);
