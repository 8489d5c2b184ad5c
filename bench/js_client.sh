#!/usr/bin/env bash
# Appends/s and append latency from Node (clients/js/bench/append.mjs) and from
# the C++ SDK (`cbqs bench`), alternated A B A B on one cbqsd --dev, with the
# same load: PRODUCERS connections x WINDOW appends outstanding of PAYLOAD
# bytes for SECONDS. Medians of RUNS per client are printed at the end
# (docs/performance.md, "The JavaScript client"). It builds the client first
# (clients/js: npm run build; `make js-deps` installs its packages).
#
#   bench/js_client.sh [BIN_DIR] [RUNS] [PRODUCERS] [PAYLOAD] [SECONDS] [WINDOW]
set -euo pipefail
bin=$(realpath "${1:-build/bin}") runs=${2:-5} producers=${3:-4} payload=${4:-256} seconds=${5:-5} window=${6:-256}
js=$(cd "$(dirname "$0")/../clients/js" && pwd)
source "$(dirname "$0")/dev_broker.sh"
(cd "$js" && npm run --silent build)
start_dev_broker "$bin"
load="--producers $producers --payload $payload --seconds $seconds --window $window"
echo "load: $load; cbqsd $(git -C "$js" rev-parse --short HEAD 2>/dev/null || echo '?'), $(node --version)"

cpp_rate=() node_rate=() cpp_p50=() node_p50=() cpp_p99=() node_p99=()
for r in $(seq 1 "$runs"); do
  cpp=$("$bin/cbqs" --json bench $load --dev "$work/dev")
  node=$(node "$js/bench/append.mjs" $load --dev "$work/dev")
  cpp_rate+=("$(field appends_per_sec <<< "$cpp")") node_rate+=("$(field appends_per_sec <<< "$node")")
  cpp_p50+=("$(field p50 <<< "$cpp")") node_p50+=("$(field p50 <<< "$node")")
  cpp_p99+=("$(field p99 <<< "$cpp")") node_p99+=("$(field p99 <<< "$node")")
  echo "run $r  c++ ${cpp_rate[-1]} appends/s p50 ${cpp_p50[-1]} ms p99 ${cpp_p99[-1]} ms" \
       " | node ${node_rate[-1]} appends/s p50 ${node_p50[-1]} ms p99 ${node_p99[-1]} ms"
done
c=$(median "${cpp_rate[@]}") n=$(median "${node_rate[@]}")
echo "median of $runs: c++ $c appends/s (p50 $(median "${cpp_p50[@]}") ms, p99 $(median "${cpp_p99[@]}") ms);" \
     "node $n appends/s (p50 $(median "${node_p50[@]}") ms, p99 $(median "${node_p99[@]}") ms); node/c++ = $(awk "BEGIN { printf \"%.2f\", $n / $c }")"
