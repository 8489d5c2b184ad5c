#!/usr/bin/env bash
# Two providers sharing one standalone devchain, each running its own cbqsd
# and serving its own stream: how CBQS grows past one machine. A client finds a
# stream's provider and endpoint on the chain, then talks to that broker.
# docs/quickstart.md section 6 walks through the same steps by hand.
#
#   scripts/two-providers.sh [WORKDIR]      (run from the repository root)
#
# Ports: CHAIN_PORT (7545), P1_PORT (7451) and P2_PORT (7461), each broker's
# admin listener on the next port. Everything it starts stops when it exits.
set -euo pipefail
BIN=${BIN:-build/bin}
WORK=${1:-$(mktemp -d)}
CHAIN_PORT=${CHAIN_PORT:-7545}
P1_PORT=${P1_PORT:-7451}
P2_PORT=${P2_PORT:-7461}
mkdir -p "$WORK"
export CBQS_HOME="$WORK/home"  # where devchain --dev keeps its funded key

for tool in devchain cbqsd cbqs; do
  [ -x "$BIN/$tool" ] || { echo "two-providers.sh: $BIN/$tool not found: build first (make build), or set BIN" >&2; exit 1; }
done

# Every port must be free: a devchain or cbqsd already on one (`make run` holds
# 7545, 7447 and 7448) would answer in place of the ones started here.
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$CHAIN_PORT" "$P1_PORT" "$((P1_PORT + 1))" "$P2_PORT" "$((P2_PORT + 1))"; do
  if in_use "$port"; then
    echo "two-providers.sh: 127.0.0.1:$port is in use (is \`make run\` or another devchain or cbqsd up?)." >&2
    echo "Stop it, or choose other ports: CHAIN_PORT, P1_PORT and P2_PORT (each broker also takes the next port)." >&2
    exit 1
  fi
done

# Each step's output goes to $WORK/steps.log; a failing step prints where it
# failed and the end of that log and of the daemons' logs.
STEPS="$WORK/steps.log"
: >"$STEPS"
on_failure() {
  echo "two-providers.sh: line $1 failed: $2" >&2
  for log in "$WORK"/*.log; do  # steps.log and the daemons' logs
    [ -s "$log" ] && { echo "--- last lines of $log" >&2; tail -n 20 "$log" >&2; }
  done
}
trap 'on_failure $LINENO "$BASH_COMMAND"' ERR

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
cbqs() { "$BIN/cbqs" --chain-url "http://127.0.0.1:$CHAIN_PORT" "$@"; }
field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }  # a string field of --json output
wait_until() { for _ in $(seq 100); do "$@" >>"$STEPS" 2>&1 && return 0; sleep 0.1; done; echo "timed out: $*" >&2; return 1; }

# 1. One chain for everyone. Its dev key is funded and is the governance admin.
"$BIN/devchain" --dev --data-dir "$WORK/chain" --listen "127.0.0.1:$CHAIN_PORT" --block-ms 200 >"$WORK/devchain.log" 2>&1 &
pids+=($!)
wait_until cbqs chain status

# 2. An owner with funds (from the dev key), and one holder key for the grants.
OWNER=$(cbqs --json keygen --out "$WORK/owner.key" | field chain_address)
cbqs --json keygen --out "$WORK/holder.key" >>"$STEPS"
cbqs --json chain transfer --to "$OWNER" --amount 100000000000 >>"$STEPS"  # 100 CBY

for P in p1 p2; do
  PORT=$([ "$P" = p1 ] && echo "$P1_PORT" || echo "$P2_PORT")
  # 3. A provider: a chain account (funded), a checkpoint signing key, its endpoint on the chain.
  ADDRESS=$(cbqs --json keygen --out "$WORK/$P.key" | field chain_address)
  cbqs --json keygen --out "$WORK/$P-signing.key" >>"$STEPS"
  cbqs --json chain transfer --to "$ADDRESS" --amount 100000000000 >>"$STEPS"
  cbqs --json chain --key "$WORK/$P.key" register-provider --signing-key "$WORK/$P-signing.key" \
    --endpoint "wss://127.0.0.1:$PORT/" >>"$STEPS"
  # 4. The owner's stream on that provider, its account topped up, and a grant for the holder.
  cbqs --json keygen --out "$WORK/$P-admin.key" >>"$STEPS"
  cbqs --json chain --key "$WORK/owner.key" top-up --owner "$OWNER" --provider "$ADDRESS" --amount 10000000000 >>"$STEPS"
  STREAM=$(cbqs --json chain --key "$WORK/owner.key" create-stream --provider "$ADDRESS" \
    --admin-key "$WORK/$P-admin.key" --nonce "$([ "$P" = p1 ] && echo 0 || echo 1)" | field stream_id)
  cbqs --json grant mint --admin-key "$WORK/$P-admin.key" --stream "$STREAM" --holder-key "$WORK/holder.key" \
    --verbs all --out "$WORK/$P.grant" >>"$STEPS"
  echo "$STREAM" >"$WORK/$P.stream"
  # 5. The provider's broker: its own store, TLS certificate and signing key.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$WORK/$P-tls.key" -out "$WORK/$P-tls.pem" 2>>"$STEPS"
  "$BIN/cbqsd" --store "$WORK/$P-store" --tls-cert "$WORK/$P-tls.pem" --tls-key "$WORK/$P-tls.key" \
    --provider-key "$WORK/$P-signing.key" --provider-address "$ADDRESS" \
    --chain-url "http://127.0.0.1:$CHAIN_PORT" --chain-block-ms 200 \
    --listen "127.0.0.1:$PORT" --admin-listen "127.0.0.1:$((PORT + 1))" >"$WORK/$P-cbqsd.log" 2>&1 &
  pids+=($!)
  wait_until "$BIN/cbqs" status --admin "http://127.0.0.1:$((PORT + 1))"
done

# 6. A client knows a stream id and a grant; the chain says who serves it and where.
for P in p1 p2; do
  STREAM=$(cat "$WORK/$P.stream")
  PROVIDER=$(cbqs --json chain stream "$STREAM" | field provider)
  ENDPOINT=$(cbqs --json chain provider "$PROVIDER" | grep -o '"endpoints":\["[^"]*"' | cut -d'"' -f4)
  echo "stream ${STREAM:0:18}... is served by $PROVIDER at $ENDPOINT"
  session=(--endpoint "$ENDPOINT" --ca "$WORK/$P-tls.pem" --grant "$WORK/$P.grant" --holder-key "$WORK/holder.key" --allow-private)
  cbqs append "${session[@]}" "hello from $P"
  cbqs tail "${session[@]}" --from 1
done
