# Sourced by the bench scripts that measure clients against one real cbqsd:
#   start_dev_broker BIN_DIR   starts `cbqsd --dev` in $work/dev (ports picked by
#                              the kernel on 127.0.0.1), stopped and removed on exit
#   field NAME                 a number from a one-line JSON document on stdin
#   median V...                the median of its arguments
work=$(mktemp -d)
cbqsd_pid=
cleanup() { [[ -n $cbqsd_pid ]] && kill "$cbqsd_pid" 2>/dev/null && wait "$cbqsd_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

start_dev_broker() {
  "$1/cbqsd" --dev --data-dir "$work/dev" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --chain-listen 127.0.0.1:0 \
    > "$work/cbqsd.log" 2>&1 &
  cbqsd_pid=$!
  for _ in $(seq 1 300); do [[ -s $work/dev/dev-endpoints.json ]] && break; sleep 0.1; done
  [[ -s $work/dev/dev-endpoints.json ]] || { cat "$work/cbqsd.log"; exit 1; }
}
field() { sed -n "s/.*\"$1\":\([0-9.e+]*\).*/\1/p"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
