// Codec micro-benchmarks: the per-frame cost on the broker's hot path.
//   make bench-codec   (or build/bin/cbqs_codec_bench)
#include <benchmark/benchmark.h>

#include "cbqs/wire/codec.h"
#include "cbqs/wire/ids.h"

using namespace cowboy;
using namespace cowboy::cbqs;

static void BM_EncodeDelivery(benchmark::State& state) {
  Delivery d{{}, {}, Bytes32{}, RecordHeaderV2{{}, LaneId{3}}, Sequence{1}, Bytes(static_cast<std::size_t>(state.range(0)), 0xab)};
  CbqsServerFrameV2 frame{d};
  for (auto _ : state) benchmark::DoNotOptimize(encode(frame));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EncodeDelivery)->Arg(256)->Arg(1024);

static void BM_DecodeAppendRequest(benchmark::State& state) {
  CbqsClientFrameV2 f{Request{{}, {}, req::Append{{LaneId{3}, Bytes(static_cast<std::size_t>(state.range(0)), 0xcd)}}}};
  Bytes wire = encode(f);
  for (auto _ : state) benchmark::DoNotOptimize(decode<CbqsClientFrameV2>(wire));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DecodeAppendRequest)->Arg(256)->Arg(1024);

static void BM_RecordDigest(benchmark::State& state) {
  Bytes payload(static_cast<std::size_t>(state.range(0)), 0xef);
  RecordHeaderV2 h{{}, LaneId{3}};
  for (auto _ : state) benchmark::DoNotOptimize(record_digest(h, payload));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RecordDigest)->Arg(256)->Arg(1024);

// A commit batch's digests at once (8 lanes per Keccak pass where the CPU has AVX-512).
static void BM_RecordDigestsOfABatch(benchmark::State& state) {
  Bytes payload(static_cast<std::size_t>(state.range(0)), 0xef);
  std::vector<RecordView> batch(64, RecordView{RecordHeaderV2{{}, LaneId{3}}, payload});
  for (auto _ : state) benchmark::DoNotOptimize(record_digests(batch));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()) * state.range(0));
}
BENCHMARK(BM_RecordDigestsOfABatch)->Arg(256)->Arg(1024);

// One checkpoint receipt signature per committed batch, always with the provider's key.
static void BM_SignCheckpoint(benchmark::State& state) {
  CheckpointReceiptV2 receipt{};
  crypto::Ed25519Seed seed;
  seed.fill(0x42);
  for (auto _ : state) {
    sign_checkpoint(receipt, seed);
    benchmark::DoNotOptimize(receipt.signature);
  }
}
BENCHMARK(BM_SignCheckpoint);
