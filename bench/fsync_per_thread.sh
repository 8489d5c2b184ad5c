#!/bin/bash
# Which threads of the broker call fsync/fdatasync (strace -f), while 16
# producers append at 20,000/s and lanes are created at 50/s. The in-process
# devchain's writes are counted under the bench's own thread names.
#   bench/fsync_per_thread.sh build/bin /tmp/fsync    # prints "<thread> <syncs>"
set -u
bin=${1:?usage: fsync_per_thread.sh <bin dir> <out prefix>}; out=${2:?usage: fsync_per_thread.sh <bin dir> <out prefix>}
strace -f -qq -e trace=fsync,fdatasync -o $out.strace \
  $bin/cbqs_broker_bench --producers 16 --payload 256 --rate 20000 --lanes-per-sec 50 --seconds 5 --runs 1 > $out.bench 2>&1 &
sp=$!
: > $out.threads
while kill -0 $sp 2>/dev/null; do
  for p in $(pgrep -f "cbqs_broker_bench --producers 16"); do
    for t in /proc/$p/task/*; do echo "$(basename $t) $(cat $t/comm 2>/dev/null)"; done >> $out.threads
  done
  sleep 0.1
done
sort -u $out.threads -o $out.threads
# tid -> name, then count syncs per name
awk 'NR==FNR { name[$1]=$2; next } /fsync|fdatasync/ { split($0, a, " "); n=name[a[1]]; if (n=="") n="?"; c[n]++ } END { for (k in c) print k, c[k] }' $out.threads $out.strace | sort
