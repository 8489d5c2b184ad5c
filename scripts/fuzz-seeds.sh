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
seed "$corpus_root/fuzz_devchain_block" 'block_*' devchain
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
for kind in request:0:request query:1:query turn:0:request read_entries:1:query \
    observe_effect:0:request list_effects:1:query; do
  IFS=: read -r name type field <<< "$kind"
  { printf "\\x0$type"; printf '{"%s":' "$field"; sed "s/transit.v1:fixture/$definition/" "tests/fixtures/transit/$name.json" | tr -d '\n'
    printf ',"signature":[%s]}' "$zeros"; } > "$corpus_root/fuzz_transit_envelope/$name"
done

# Transit history: a stored journal entry (the request fixture signed with zeros, a newline, a receipt
# for it whose digest does not match, so both decoders run and the pairing check refuses it), and a head.
mkdir -p "$corpus_root/fuzz_transit_history"
digest=$(printf '0,%.0s' $(seq 31))0
{ printf '\x00{"request":'; sed "s/transit.v1:fixture/$definition/" tests/fixtures/transit/request.json | tr -d '\n'
  printf ',"signature":[%s]}\n' "$zeros"
  printf '{"version":1,"definition":"%s","realm":"dev","position":1,"principal":1,"sequence":1,"request_digest":[%s],' "$definition" "$digest"
  printf '"accepted_at_ms":0,"outcome":{"principal_created":{"principal":2,"role":2,"grant":2,"policy_revision":2}}}'; } \
  > "$corpus_root/fuzz_transit_history/entry"
{ printf '\x01{"version":1,"definition":"%s","position":9,"policy_revision":1,"policy_position":0,' "$definition"
  printf '"resources_position":0,"processes_position":0,"next_role":1,"next_grant":1,"next_resource":1,'
  printf '"next_association":1,"next_view":1,"next_output":1,"next_effect":1,"last_time_ms":0,"storage_epoch":0,'
  printf '"compaction_cursor":0,"floor":5,"checkpoint":5,"checkpoint_roots":[%s]}' "$digest"; } \
  > "$corpus_root/fuzz_transit_history/head"
# ... and the history ops, wrapped as the transit fixtures above are.
for kind in advance_floor:0:request checkpoint_status:1:query; do
  IFS=: read -r name type field <<< "$kind"
  { printf "\\x0$type"; printf '{"%s":' "$field"; sed "s/transit.v1:fixture/$definition/" "tests/fixtures/transit/$name.json" | tr -d '\n'
    printf ',"signature":[%s]}' "$zeros"; } > "$corpus_root/fuzz_transit_envelope/$name"
done
