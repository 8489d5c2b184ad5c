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
seed "$corpus_root/fuzz_cip11_receipt" 'presence_receipt' cip11
seed "$corpus_root/fuzz_cip11_presence_view" 'presence_view' cip11
mkdir -p "$corpus_root/fuzz_cip11_task"
printf '{"echo":"hi"}' > "$corpus_root/fuzz_cip11_task/echo"
printf '{"sleep_ms":250}' > "$corpus_root/fuzz_cip11_task/sleep"
mkdir -p "$corpus_root/fuzz_cip11_chain"  # a sender byte, then a payload: a heartbeat, a job
printf '\x00\x01\x02' > "$corpus_root/fuzz_cip11_chain/heartbeat"
printf '\x01\x01\x05\x00\x00\x00\x00\x01\x73\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
  > "$corpus_root/fuzz_cip11_chain/submit_job"
{ printf '\x00\x01\x08'; head -c 20 /dev/zero; printf '\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x01\x00\x00'
  printf '\x00\x00\x00\x01\x00\x00\x00\x02\xa8\x00'; } > "$corpus_root/fuzz_cip11_chain/certificate"  # a presence certificate
mkdir -p "$corpus_root/fuzz_stream_restart_keys"  # a version-2 tail at head 5, marks at floor 2, counters, run 3..5
{ printf '\x41\x02\x00\x00\x00\x00\x00\x00\x00\x06'; head -c 32 /dev/zero
  printf '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x2c'
  printf '\x11\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x32'
  printf '\x11\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01'
  printf '\x08\x00\x00\x00\x00\x00\x00\x00\x03'; } > "$corpus_root/fuzz_stream_restart_keys/tail_and_marks"
mkdir -p "$corpus_root/fuzz_group_journal"  # frontier 10 with mark 2, a leased cycle at 3, a dead letter at 4, the acks 5 and 6
{ printf '\x10\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x02'
  printf '\x13\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\xe8'
  printf '\x13\x00\x01\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x03\xe8'
  printf '\x14\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x06'; } > "$corpus_root/fuzz_group_journal/window"
mkdir -p "$corpus_root/fuzz_devchain_validator_set"  # version, epoch 1, activation 200, one validator
{ printf '\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\xc8\x00\x00\x00\x01'
  head -c 64 /dev/zero; printf '\x00\x00\x00\x0e127.0.0.1:7443'; } > "$corpus_root/fuzz_devchain_validator_set/one"
seed "$corpus_root/fuzz_devchain_validator_set" 'validator_set_v*' devchain  # version 1, and 2 with a chain API
mkdir -p "$corpus_root/fuzz_cip11_presence"
printf '\x00\x0a\x01\x00\x09\x02' > "$corpus_root/fuzz_cip11_presence/bitmap"
printf '\x00\x0a\x01\x01\x00\x00\x00\x01\x00\x00\x00\x03' > "$corpus_root/fuzz_cip11_presence/sparse"
# Threshold RSA: a selector byte, then the key fuzz_threshold_rsa.cc embeds (0), its share 1 (1),
# share 1's signature share of "fuzz" (2) and the signature of "fuzz" (3).
mkdir -p "$corpus_root/fuzz_threshold_rsa"
for seed in "public_key 000100800304b005a4851dfd927c98c4d660276a8b875f6ccc15b953aa7bea774f717cdcd1bff457a590ff8128f408f751bd3eb562b4b59fcb20bc5e50c4ab4296db9284a16bb27badaf1ea43ecf5bcd97f0d0e6c4e75fd15f3571caef76d0156eb4851942 \
  17032a8fbba4978eb678c8efabcdbde4b8c94b86c504c1f41a021a7f941556c46d8c0520a9d2caa0362e3ea10bc28837128b7b33fd9085f0c8c4282b1b3933a0fb25ba130940788a295bc6c44ab7d2d8f1b8aeb02110e385b8c728ac59a1790f824f5768 \
  c34b0d97b65d02e28d4c991632d206cd893ac8991839a781e6cd5e4ca22ef7016846301863fbf7328c996d45d7ca5622d454b3892e347f8bc2cd2edd4014658501befc628cff89aba967d71de458b0ef2a5c5d1cc40bb3e894442ab5cd44e29e0f697130 \
  ee86fffadd5d6271b43ab0c06c6d159a506adab39ed9b14ec33dd090ca944c18bc8159e8edcf3d6b5152fcf4fcc1d89cace496a768081927fe545c55154890ca0fcf8a75858c8c36180f5384b5ffff2c8e29a9aceb72909c107a3d4cc4efc3698d02986d \
  64f0908fe81edddfeef8503ca45187c1438d8334acd9b81183e0b4a94aef9cea7f9fefbbf8a66680089f4bb4427cc53a8685dafbf3720df127970dd7788f869abe524d887e8402b6dcd83162847ad8bcccf970ea1564b036366cea243101e56137da634d \
  842956d6634eccf96b2bb709be1227bb00281760cb21d449dea1b6caaf0f9cf72ae78f85af75b2dfe10627e2c9b41bdfcb3927f80de8e80d5a18ebaba8d325084c54f7752345f3a4a9f7a3e92072a848750d57f7e37b9f2a9ab893574f32a8580cff988b \
  3860410c96da8d76b5de7b234cbfeefbf85d71ad4dc7a6deac9ba29f471ca7f4ee4f625e3f8fe3a715f6dec86a49c43a25c54098193595cf4135593001a34f017db6d4184a82c153118a5dd8efc30e7411300f6693817dcaf4df3ef2c6d9068250ab01e5 \
  821787df8ed5533632543a8eb2d599284d9ae2677c8551975438d8b45e0c5ac3bf441fb568fe8f0fe461a85225351fb4c034d7b3d2cdbcb7029087821fd83dadb10f1576e9ae6fed82" "secret_share 0101008001013e824e7bd72fe78c3963f4a40ca114ab2307e4b99cc4690ab5331c1e83d9deec435fe13b8dae4cbbee9168068bc2b5ca02fa46550b5870442c16ebbe985ff8003da6ca9e145905415493bf6d6c4cc99b1e34e43c5d8da9033a95896dde11c3 \
  ca9d264b98b71dce459364254e6b52d7e60ffbb99dd8b560402d1fe7c67bcd9d" "signature_share 020144deed1a948e6ce76b3dc63d772ec95aea847c0b1804bbb0985637ad17eb233f21994576b8f7a7ae9042c66d4a98c73b5481b33fcef69b3acb1ced16a21f4465a0152ce2cde7f9cdfb3b7dff6c1835e3c92dbfdb36ba35bdce356cf4bae79d913f7d38 \
  736164468a1060f2f72a4e7163f3257a07c37db561e76a5eb402aade48226d3f75bd68a8f100c2b0af144bbd31006910da863fd362076f41659ca933380445ab07da010d478fa2407852a6ee973006ebc0a9a0a931734ca683e8448d4a34cf6a6cec141e \
  9a3985581f99410808a00424b49b8271ffa76a04ae43d87550e1f72df281bc590b3135c84ab7bd63c77ec1ea83da1a410b277a07d94e6514fe52f3237c5a664d41ad47dcb732b56a435e3c733b925012b846d57014d46caf798dc49067ebde10c9c41dbf \
  f892dbe50520" "signature 03775c4c9008929330472997d3dd5929fadfa1df85ee367508f54556e6c58f89eaad6dc487abb3b6ae8a6f64fb39176d3b7cdfa9c3996f6cb8836fd16c09fdf451afc9a18c9df3da395be4b6af290c2469b6793271e1f5372924e7dcbc676a97e87ab7c8e0 \
  cb8916f56b68837cce514a5752861ae7908bdcbb8c0fda28ac56a603"; do
  perl -e '(my $hex = $ARGV[0]) =~ s/\s//g; print pack("H*", $hex)' "${seed#* }" > "$corpus_root/fuzz_threshold_rsa/${seed%% *}"
done
mkdir -p "$corpus_root/fuzz_ecvrf"  # RFC 9381 B.3 examples 16 and 17: public key, proof, alpha
perl -e 'print pack("H*", $ARGV[0])' \
  d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a8657106690b5526245a92b003bb079ccd1a92130477671f6fc01ad16f26f723f26f8a57ccaed74ee1b190bed1f479d9727d2d0f9b005a6e456a35d4fb0daab1268a1b0db10836d9826a528ca76567805 \
  > "$corpus_root/fuzz_ecvrf/example16"
perl -e 'print pack("H*", $ARGV[0])' \
  3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660cf3141cd382dc42909d19ec5110469e4feae18300e94f304590abdced48aed5933bf0864a62558b3ed7f2fea45c92a465301b3bbf5e3e54ddf2d935be3b67926da3ef39226bbc355bdc9850112c8f4b0272 \
  > "$corpus_root/fuzz_ecvrf/example17"
mkdir -p "$corpus_root/fuzz_stored_records" "$corpus_root/fuzz_devchain_tx" "$corpus_root/fuzz_ws_frames"
seed "$corpus_root/fuzz_devchain_registry" 'registry_*' devchain
seed "$corpus_root/fuzz_devchain_block" 'block_*' devchain
mkdir -p "$corpus_root/fuzz_devchain_undo"  # version 1, two entries: a key that held "v", a key that was absent
{ printf '\x01\x00\x00\x00\x02\x00\x00\x00\x01k\x01\x00\x00\x00\x01v\x00\x00\x00\x01n\x00'; } \
  > "$corpus_root/fuzz_devchain_undo/two"
mkdir -p "$corpus_root/fuzz_cip11_chain_state"  # an empty state: an empty index (CBOR []), then zero counts
printf '\x00\x00\x00\x01\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
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
  printf '"resources_position":0,"processes_position":0,"effects_position":0,"next_role":1,"next_grant":1,"next_resource":1,'
  printf '"next_association":1,"next_view":1,"next_output":1,"next_effect":1,"next_payload":1,"last_time_ms":0,"storage_epoch":0,'
  printf '"compaction_cursor":0,"floor":5,"checkpoint":5,"checkpoint_roots":[%s],' "$digest"
  printf '"location_definition":[%s],"fenced_at":0,"fenced_at_ms":0,"grace_below":0}' "$digest"; } \
  > "$corpus_root/fuzz_transit_history/head"
# ... and the history and snapshot ops, wrapped as the transit fixtures above are.
for kind in advance_floor:0:request checkpoint_status:1:query open_snapshot:1:query snapshot_read:1:query \
            declare_payload:0:request payload:1:query runtime_observe:0:request activate:0:request collect:0:request \
            retire_block:0:request read_block:1:query read_segment:1:query list_collectable:1:query; do
  IFS=: read -r name type field <<< "$kind"
  { printf "\\x0$type"; printf '{"%s":' "$field"; sed "s/transit.v1:fixture/$definition/" "tests/fixtures/transit/$name.json" | tr -d '\n'
    printf ',"signature":[%s]}' "$zeros"; } > "$corpus_root/fuzz_transit_envelope/$name"
done

# A block's record as stored (fuzz_transit_block_record): published, and deleted.
mkdir -p "$corpus_root/fuzz_transit_block_record"
{ printf '{"resource":1,"name":"626c6f62","revision":2,"length":10,"sha256":[%s],"pid":7,"publisher":1,' "$digest"
  printf '"state":"published","published_at":9,"retired_revision":null,"retired_at":null,"deleted_at":null}'; } \
  > "$corpus_root/fuzz_transit_block_record/published"
{ printf '{"resource":1,"name":"626c6f62","revision":2,"length":10,"sha256":[%s],"pid":7,"publisher":1,' "$digest"
  printf '"state":"deleted","published_at":9,"retired_revision":3,"retired_at":10,"deleted_at":11}'; } \
  > "$corpus_root/fuzz_transit_block_record/deleted"

# The compaction ledger's record and the relocated marker (fuzz_transit_compaction_record).
mkdir -p "$corpus_root/fuzz_transit_compaction_record"
printf '{"cursor":1,"leaf":{"entry":{"resource":1,"key":"6b"}},"position":9,"epoch":0}' \
  > "$corpus_root/fuzz_transit_compaction_record/entry"
printf '{"cursor":2,"leaf":{"block":{"resource":1,"name":"626c6f62"}},"position":10,"epoch":1}' \
  > "$corpus_root/fuzz_transit_compaction_record/block"
printf '{"cursor":3,"leaf":{"grant":{"grant":1}},"position":11,"epoch":1}' \
  > "$corpus_root/fuzz_transit_compaction_record/grant"
printf '{"cursor":4,"leaf":{"principal":{"principal":1}},"position":12,"epoch":1}' \
  > "$corpus_root/fuzz_transit_compaction_record/principal"
printf '{"cursor":5,"leaf":{"process":{"pid":7}},"position":13,"epoch":2}' \
  > "$corpus_root/fuzz_transit_compaction_record/process"
printf '\x00\x00\x00\x00\x00\x00\x00\x03' > "$corpus_root/fuzz_transit_compaction_record/relocated"
# A purge row's key (decision 180): P/, epoch 1, resource 2, the name "blob" padded to 32 bytes, its length.
{ printf 'P/\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02blob'; head -c 28 /dev/zero; printf '\x04'; } \
  > "$corpus_root/fuzz_transit_compaction_record/purge"

# The payload route's path (fuzz_transit_payload_route): request targets.
mkdir -p "$corpus_root/fuzz_transit_payload_route"
printf '/v1/payloads/1' > "$corpus_root/fuzz_transit_payload_route/one"
printf '/v1/payloads/9007199254740991' > "$corpus_root/fuzz_transit_payload_route/largest"
printf '/v1/payloads/01?x' > "$corpus_root/fuzz_transit_payload_route/leading_zero"
