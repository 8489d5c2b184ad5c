#!/usr/bin/env bash
# Appends/s and append latency from Node (clients/js/bench/append.mjs) and from
# the C++ SDK (`cbqs bench`), alternated A B A B on one cbqsd --dev, with the
# same load: PRODUCERS connections x WINDOW appends outstanding of PAYLOAD
# bytes for SECONDS. Medians of RUNS per client are printed at the end
# (docs/performance.md, "The JavaScript client").
#
#   bench/js_client.sh [BIN_DIR] [RUNS] [PRODUCERS] [PAYLOAD] [SECONDS] [WINDOW]
set -euo pipefail
bin=$(realpath "${1:-build/bin}") runs=${2:-5} producers=${3:-4} payload=${4:-256} seconds=${5:-5} window=${6:-256}
js=$(cd "$(dirname "$0")/../clients/js" && pwd)
work=$(mktemp -d)
cbqsd_pid=
cleanup() { [[ -n $cbqsd_pid ]] && kill "$cbqsd_pid" 2>/dev/null && wait "$cbqsd_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
[[ -f $js/dist/index.js ]] || { echo "build the client first: (cd clients/js && npm run build)"; exit 1; }

"$bin/cbqsd" --dev --data-dir "$work/dev" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --chain-listen 127.0.0.1:0 \
  > "$work/cbqsd.log" 2>&1 &
cbqsd_pid=$!
for _ in $(seq 1 300); do [[ -s $work/dev/dev-endpoints.json ]] && break; sleep 0.1; done
[[ -s $work/dev/dev-endpoints.json ]] || { cat "$work/cbqsd.log"; exit 1; }
field() { sed -n "s/.*\"$1\":\([0-9.e+]*\).*/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
load="--producers $producers --payload $payload --seconds $seconds --window $window"
echo "load: $load; cbqsd $(git -C "$js" rev-parse --short HEAD 2>/dev/null || echo '?'), $(node --version)"

for r in $(seq 1 "$runs"); do
  cpp=$("$bin/cbqs" --json bench $load --dev "$work/dev")
  node=$(node "$js/bench/append.mjs" $load --dev "$work/dev")
  echo "run $r  c++ $(echo "$cpp" | field appends_per_sec) appends/s p50 $(echo "$cpp" | field p50) ms p99 $(echo "$cpp" | field p99) ms" \
       " | node $(echo "$node" | field appends_per_sec) appends/s p50 $(echo "$node" | field p50) ms p99 $(echo "$node" | field p99) ms"
  echo "$cpp" | field appends_per_sec >> "$work/cpp_rate"; echo "$node" | field appends_per_sec >> "$work/node_rate"
  echo "$cpp" | field p50 >> "$work/cpp_p50"; echo "$node" | field p50 >> "$work/node_p50"
  echo "$cpp" | field p99 >> "$work/cpp_p99"; echo "$node" | field p99 >> "$work/node_p99"
done
c=$(median < "$work/cpp_rate") n=$(median < "$work/node_rate")
echo "median of $runs: c++ $c appends/s (p50 $(median < "$work/cpp_p50") ms, p99 $(median < "$work/cpp_p99") ms);" \
     "node $n appends/s (p50 $(median < "$work/node_p50") ms, p99 $(median < "$work/node_p99") ms); node/c++ = $(awk "BEGIN { printf \"%.2f\", $n / $c }")"
