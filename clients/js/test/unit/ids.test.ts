// Ids, digests, signatures and the §10 verdicts against the C++ values: the
// fixtures' own signatures and the known answers in tests/fixtures/cbqs/ids.txt.
import assert from "node:assert/strict";
import { test } from "node:test";

import { decode, encode } from "../../dist/codec.js";
import * as ids from "../../dist/ids.js";
import * as wire from "../../dist/wire.js";
import { filled, idVectors, readFixture } from "../fixtures.js";

const hex = ids.toHex;
const text = (s: string) => new TextEncoder().encode(s);
const vectors = idVectors();

test("grant_id, checkpoint_id and stream_id equal the C++ values", () => {
  const grant = decode(wire.StreamGrantV2, readFixture("stream_grant"));
  assert.equal(hex(ids.grantId(grant)), vectors.grant_id);
  const receipt = decode(wire.CheckpointReceiptV2, readFixture("checkpoint_receipt"));
  assert.equal(hex(ids.checkpointId(receipt)), vectors.checkpoint_id);
  assert.equal(hex(ids.streamId(filled(0x10), filled(0x11, 20), 42n)), vectors.stream_id);
  // The C++ session proof fixture names the grant by the id it computed.
  const proof = decode(wire.SessionProofV2, readFixture("session_proof"));
  assert.deepEqual(proof.grant_id, ids.grantId(grant));
});

test("an id does not depend on the signature bytes", () => {
  const grant = decode(wire.StreamGrantV2, readFixture("stream_grant"));
  const other = { ...grant, signature: new Uint8Array(64).fill(7) };
  assert.deepEqual(ids.grantId(other), ids.grantId(grant));
  assert.notDeepEqual(ids.grantId({ ...grant, verbs: 1 }), ids.grantId(grant));
});

test("record_digest, records_digest and room lane ids equal the C++ values", () => {
  const stream = filled(0x30);
  const hello = ids.recordDigest({ stream_id: stream, lane_id: 3n }, text("hello"));
  const world = ids.recordDigest({ stream_id: stream, lane_id: 9n }, text("world"));
  assert.equal(hex(hello), vectors.record_digest_hello_lane3);
  assert.equal(hex(ids.recordsDigest([hello, world])), vectors.records_digest_hello_world);
  assert.equal(hex(ids.recordsDigest([])), vectors.records_digest_empty);
  assert.equal(ids.roomLaneId({ kind: "Messages", room_id: filled(0x33) }).toString(), vectors.room_lane_messages_0x33);
  assert.equal(
    ids.roomLaneId({ kind: "Inbox", room_id: filled(0x33), seat_id: filled(0x55) }).toString(),
    vectors.room_lane_inbox_0x33_0x55,
  );
  // The room lane request fixture carries the room the derivation starts from.
  type CreateLaneRequest = wire.Kind<wire.ClientFrame, "Request"> & { body: wire.Kind<wire.RequestBody, "CreateLane"> };
  const req = decode(wire.ClientFrame, readFixture("req_create_room_messages_lane")) as CreateLaneRequest;
  assert.deepEqual(req.body.room, { kind: "Messages", room_id: filled(0x33) });
});

test("Ed25519 keys and signatures equal libsodium's", () => {
  const kp = ids.keypairFromSeed(filled(0x70));
  assert.equal(hex(kp.publicKey), vectors.public_key_seed_0x70);
  const sig = ids.sign(kp.seed, text("cbqs"));
  assert.equal(hex(sig), vectors.signature_seed_0x70_cbqs);
  assert.ok(ids.verify(kp.publicKey, text("cbqs"), sig));
  assert.ok(!ids.verify(kp.publicKey, text("cbqt"), sig));
});

test("the fixtures' signatures verify under the keys that made them, and only those", () => {
  const grant = decode(wire.StreamGrantV2, readFixture("stream_grant"));
  const stream = decode(wire.StreamRecordV2, readFixture("stream_record"));
  assert.ok(ids.verify(stream.admin_key, ids.grantSigningBytes(grant), grant.signature));
  assert.ok(!ids.verify(grant.holder_signing_key, ids.grantSigningBytes(grant), grant.signature));
  const proof = decode(wire.SessionProofV2, readFixture("session_proof"));
  assert.ok(ids.verify(grant.holder_signing_key, ids.sessionProofSigningBytes(proof), proof.signature));
  // Re-signing in JS gives the same bytes (Ed25519 is deterministic).
  assert.deepEqual(ids.signGrant(grant, filled(0x90)).signature, grant.signature);
  assert.deepEqual(ids.signProof(proof, filled(0x70)).signature, proof.signature);
  // The preimage is the domain then canonical(grant) without its 65-byte signature.
  const preimage = ids.grantSigningBytes(grant);
  assert.equal(new TextDecoder().decode(preimage.subarray(0, 20)), "cbqs/stream-grant/v2");
  assert.deepEqual(preimage.subarray(20), readFixture("stream_grant").subarray(0, -65));
});

test("§10 verdicts: valid in either key window, invalid, unverifiable", () => {
  const provider = decode(wire.ProviderRecordV2, readFixture("provider_record"));
  const receipt = decode(wire.CheckpointReceiptV2, readFixture("checkpoint_receipt"));
  assert.equal(ids.verifyCheckpoint(receipt, provider), "valid"); // signed by the current key, height 4,242
  const at = (height: bigint, seedBase: number) => ids.signCheckpoint({ ...receipt, snapshot_height: height }, filled(seedBase));
  assert.equal(ids.verifyCheckpoint(at(4_000n, 0xc0), provider), "valid");
  assert.equal(ids.verifyCheckpoint(at(3_999n, 0xd0), provider), "valid"); // the previous key's window
  assert.equal(ids.verifyCheckpoint(at(1_000n, 0xd0), provider), "valid");
  assert.equal(ids.verifyCheckpoint(at(3_999n, 0xc0), provider), "invalid"); // wrong key for the window
  assert.equal(ids.verifyCheckpoint(at(999n, 0xd0), provider), "unverifiable"); // before the rotation before last
  assert.equal(ids.verifyCheckpoint({ ...receipt, last_sequence: 65n }, provider), "invalid"); // tampered
  assert.equal(ids.verifyCheckpoint({ ...receipt, provider: filled(0xa1, 20) }, provider), "invalid");
  assert.equal(ids.verifyCheckpoint({ ...receipt, chain_instance_id: filled(0x11) }, provider), "invalid");
});

test("hex helpers read key files as leniently as the C++ ones", () => {
  assert.deepEqual(ids.fromHex("0xAbCd\n"), Uint8Array.of(0xab, 0xcd));
  assert.throws(() => ids.fromHex("abc"));
  assert.throws(() => ids.fromHex("zz"));
  assert.equal(hex(encode(wire.RecordHeaderV2, { stream_id: filled(0x30), lane_id: 3n })), hex(readFixture("record_header")));
});
