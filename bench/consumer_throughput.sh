#!/usr/bin/env bash
# `cbqs consume` and `cbqs bench --consumers` against cbqs_group_bench, in one
# run on one machine (docs/performance.md, "Consumers through the CLI").
#
#   bench/consumer_throughput.sh [BIN_DIR] [RUNS] [RECORDS]
#
# Per run, against one cbqsd --dev: RECORDS lines are produced to a new lane; a
# group (4,096 leases per consumer, as cbqs_group_bench uses) is drained by one
# `cbqs --json consume --count RECORDS > /dev/null`, then a second lane by two
# such processes at once (RECORDS / 2 each); then `cbqs bench --producers 4
# --consumers 2` for 5 s. Timings include each process's start, TLS and
# session. cbqs_group_bench (its own in-process broker) runs last in the same
# run. Medians of RUNS are printed at the end.
set -euo pipefail
bin=${1:-build/bin} runs=${2:-3} records=${3:-100000}
source "$(dirname "$0")/dev_broker.sh"
start_dev_broker "$bin"
cbqs() { "$bin/cbqs" --json "$@" --dev "$work/dev"; }
seq 1 "$records" | sed 's/^/job /' > "$work/lines"
now() { date +%s.%N; }

# A lane filled with RECORDS lines and a group on it; prints the group id.
filled_group() {
  local lane first
  lane=$(cbqs lanes create | field lane)
  first=$(cbqs produce --lane "$lane" --file "$work/lines" | field first_sequence)
  cbqs groups create --lane "$lane" --start-at "$first" --max-in-flight 262144 --max-in-flight-per-holder 4096 | field group
}

one=() two=() bench_acked=() bench_appends=() group_bench=()
for r in $(seq 1 "$runs"); do
  g=$(filled_group)
  t0=$(now); cbqs consume --group "$g" --count "$records" > /dev/null; t1=$(now)
  one+=("$(echo "$records / ($t1 - $t0)" | bc -l)")
  g=$(filled_group)
  t0=$(now)
  cbqs consume --group "$g" --count $((records / 2)) > /dev/null & a=$!
  cbqs consume --group "$g" --count $((records / 2)) > /dev/null & b=$!
  wait $a $b; t1=$(now)
  two+=("$(echo "$records / ($t1 - $t0)" | bc -l)")
  out=$(cbqs bench --producers 4 --consumers 2 --seconds 5)
  bench_acked+=("$(echo "$out" | field acked_per_sec)")
  bench_appends+=("$(echo "$out" | field appends_per_sec)")
  gb=$("$bin/cbqs_group_bench" --consumers 2 --records "$records" --runs 1 2>/dev/null | sed -n 's/^run 1: \([0-9]*\) acked.*/\1/p')
  group_bench+=("$gb")
  printf 'run %d: consume x1 %.0f/s, consume x2 %.0f/s, bench --consumers 2 acked %.0f/s (appends %.0f/s), cbqs_group_bench %s/s\n' \
    "$r" "${one[-1]}" "${two[-1]}" "${bench_acked[-1]}" "${bench_appends[-1]}" "$gb"
done
printf 'median of %d (%d records): consume x1 %.0f/s, consume x2 %.0f/s, bench --consumers 2 acked %.0f/s (appends %.0f/s), cbqs_group_bench %.0f/s\n' \
  "$runs" "$records" "$(median "${one[@]}")" "$(median "${two[@]}")" "$(median "${bench_acked[@]}")" \
  "$(median "${bench_appends[@]}")" "$(median "${group_bench[@]}")"
