#!/usr/bin/env bash
# Builds every libFuzzer target with clang (ASan + UBSan) and runs each for
# N seconds (default 60), seeded with the checked-in wire fixtures.
# Exit status is non-zero if any target finds a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
scripts/install-deps.sh clang libclang-rt-14-dev
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOWBOY_FUZZ=ON -DCOWBOY_TESTS=OFF -DCOWBOY_BENCH=OFF >/dev/null
targets=(fuzz_client_frame fuzz_server_frame fuzz_sys_cbqs_payload fuzz_stored_records fuzz_devchain_tx fuzz_devchain_block fuzz_devchain_registry fuzz_ws_frames
         fuzz_cip11_cbor fuzz_cip11_frame fuzz_cip11_reassembler fuzz_cip11_presence fuzz_cip11_handshake
         fuzz_cip11_chain fuzz_cip11_chain_state fuzz_cip11_task fuzz_transit_envelope fuzz_transit_history
         fuzz_transit_block_record fuzz_transit_compaction_record)
# Run only some: TARGETS="fuzz_cip11_cbor fuzz_cip11_frame" scripts/run-fuzz.sh 60
if [ -n "${TARGETS:-}" ]; then read -r -a targets <<< "$TARGETS"; fi
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}"

corpus_root=build-fuzz/corpus
scripts/fuzz-seeds.sh "$corpus_root"

status=0
for target in "${targets[@]}"; do
  echo "== $target: ${seconds}s"
  if ! build-fuzz/bin/$target -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
       -artifact_prefix="build-fuzz/$target-" "$corpus_root/$target" 2>"build-fuzz/$target.log"; then
    echo "!! $target found a failure; see build-fuzz/$target.log and build-fuzz/$target-*"
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "build-fuzz/$target.log" || true
done
exit $status
