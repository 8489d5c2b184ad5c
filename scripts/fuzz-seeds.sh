#!/usr/bin/env bash
# Writes the fuzz targets' seed corpus into <dir>/<target>/: the checked-in
# wire fixtures as binary, and a few hand-made inputs. Used by run-fuzz.sh
# (libFuzzer) and by the fuzz.* ctest cases (the replay driver).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus_root="${1:?usage: fuzz-seeds.sh <dir>}"
mkdir -p "$corpus_root"
seed() {  # seed <dir> <fixture-glob> [fixture-dir] [skip-bytes]: hex fixtures -> binary corpus files
  mkdir -p "$1"
  for f in tests/fixtures/${3:-cbqs}/$2.hex; do
    [ -e "$f" ] || continue
    grep -v '^#' "$f" | tr -d ' \n' | perl -ne 'print pack("H*", $_)' | tail -c "+$(( ${4:-0} + 1 ))" \
      > "$1/$(basename "$f" .hex)"
  done
}
seed "$corpus_root/fuzz_client_frame" 'req_*'
seed "$corpus_root/fuzz_client_frame" 'frame_open_session'
seed "$corpus_root/fuzz_client_frame" 'frame_complete_session'
seed "$corpus_root/fuzz_server_frame" 'resp_*'
seed "$corpus_root/fuzz_server_frame" 'frame_*'
seed "$corpus_root/fuzz_sys_cbqs_payload" 'ins_*'
seed "$corpus_root/fuzz_cip11_frame" '*' cip11
seed "$corpus_root/fuzz_cip11_reassembler" '*' cip11
seed "$corpus_root/fuzz_cip11_handshake" '*' cip11
seed "$corpus_root/fuzz_cip11_cbor" '*' cip11 5   # frame bodies without length and type
mkdir -p "$corpus_root/fuzz_cip11_task"
printf '{"echo":"hi"}' > "$corpus_root/fuzz_cip11_task/echo"
printf '{"sleep_ms":250}' > "$corpus_root/fuzz_cip11_task/sleep"
mkdir -p "$corpus_root/fuzz_cip11_chain"  # a sender byte, then a payload: a heartbeat, a job
printf '\x00\x01\x02' > "$corpus_root/fuzz_cip11_chain/heartbeat"
printf '\x01\x01\x05\x00\x00\x00\x00\x01\x73\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
  > "$corpus_root/fuzz_cip11_chain/submit_job"
mkdir -p "$corpus_root/fuzz_cip11_presence"
printf '\x00\x0a\x01\x00\x09\x02' > "$corpus_root/fuzz_cip11_presence/bitmap"
printf '\x00\x0a\x01\x01\x00\x00\x00\x01\x00\x00\x00\x03' > "$corpus_root/fuzz_cip11_presence/sparse"
mkdir -p "$corpus_root/fuzz_stored_records" "$corpus_root/fuzz_devchain_tx" "$corpus_root/fuzz_ws_frames"
seed "$corpus_root/fuzz_devchain_registry" 'registry_*' devchain
mkdir -p "$corpus_root/fuzz_cip11_chain_state"  # an empty state: an empty index (CBOR []), then zero counts
printf '\x00\x00\x00\x01\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
  > "$corpus_root/fuzz_cip11_chain_state/empty"
mkdir -p "$corpus_root/fuzz_cip11_runner_journal"  # a retained transaction: version, hash, nonce, 1 byte
{ printf '\x01'; head -c 32 /dev/zero; printf '\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x01\xab'; } \
  > "$corpus_root/fuzz_cip11_runner_journal/retained"
# A type byte, then the text: the transit fixtures with this build's definition (the checked-in schema's).
mkdir -p "$corpus_root/fuzz_transit_envelope"
definition=$(grep -m1 -o '"definition": "transit.v1:[0-9a-f]*"' schema/transit-v1.schema.json | cut -d'"' -f4)
zeros=$(printf '0,%.0s' $(seq 63))0
# name:type byte:envelope field, each wrapped as a signed envelope (an all-zero signature)
for kind in request:0:request query:1:query turn:0:request read_entries:1:query; do
  IFS=: read -r name type field <<< "$kind"
  { printf "\\x0$type"; printf '{"%s":' "$field"; sed "s/transit.v1:fixture/$definition/" "tests/fixtures/transit/$name.json" | tr -d '\n'
    printf ',"signature":[%s]}' "$zeros"; } > "$corpus_root/fuzz_transit_envelope/$name"
done

