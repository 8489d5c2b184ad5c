// The codec against the C++ codec's byte-exact fixtures: every file decodes
// as its type and re-encodes to the same bytes, and strict decoding refuses
// what the C++ decoder refuses (docs/protocol.md §A).
import assert from "node:assert/strict";
import { test } from "node:test";

import { type Codec, DecodeError, type DecodeFailure, Reader, Writer, decode, encode } from "../../dist/codec.js";
import * as wire from "../../dist/wire.js";
import { fixtureNames, readFixture, filled } from "../fixtures.js";

// The codec of each fixture, by its file name.
const typeOf = (name: string): Codec<unknown> | undefined => {
  const exact = ({
    provider_record: wire.ProviderRecordV2,
    stream_record: wire.StreamRecordV2,
    account: wire.CbqsAccountV2,
    stream_grant: wire.StreamGrantV2,
    session_proof: wire.SessionProofV2,
    lane_record: wire.LaneRecordV2,
    append_request: wire.AppendRequestV2,
    record_header: wire.RecordHeaderV2,
    group_config: wire.GroupConfigV2,
    group_ceilings: wire.GroupCeilingsV2,
    stream_settings: wire.StreamSettingsV2,
    checkpoint_receipt: wire.CheckpointReceiptV2,
    delivery_state_body: wire.DeliveryStateBodyV2,
    frame_open_session: wire.ClientFrame,
    frame_complete_session: wire.ClientFrame,
  } as Record<string, Codec<unknown>>)[name];
  if (exact) return exact;
  if (name.startsWith("ins_")) return wire.Instruction;
  if (name.startsWith("subscription_source_")) return wire.SubscriptionSourceV2;
  if (name.startsWith("req_")) return wire.ClientFrame;
  if (name.startsWith("resp_") || name.startsWith("frame_")) return wire.ServerFrame;
  return undefined;
};

test("every C++ fixture decodes as its type and re-encodes byte for byte", () => {
  const names = fixtureNames();
  assert.ok(names.length >= 60, `only ${names.length} fixtures found`);
  for (const name of names) {
    const type = typeOf(name);
    assert.ok(type, `no type for fixture ${name}: map it in codec.test.ts`);
    const bytes = readFixture(name);
    const value = decode(type, bytes);
    assert.deepEqual(encode(type, value), bytes, name);
  }
});

test("decoded fixtures hold the samples' values", () => {
  const append = decode(wire.ClientFrame, readFixture("req_append"));
  assert.equal(append.kind, "Request");
  assert.deepEqual(append.request_id, filled(0x01));
  assert.deepEqual(append.session_id, filled(0x21));
  assert.equal(append.body.kind, "Append");
  assert.equal(append.body.append.lane_id, 3n);
  assert.equal(new TextDecoder().decode(append.body.append.payload), "hello");

  const grant = decode(wire.StreamGrantV2, readFixture("stream_grant"));
  assert.deepEqual(grant.lane_scope, { kind: "Set", lane_ids: [3n, 9n, 27n] });
  assert.deepEqual(grant.group_scope, { kind: "Exact", group_id: 4n });
  assert.equal(grant.verbs, 7);
  assert.equal(grant.not_before_ms, 1_700_000_000_000n);
  assert.equal(grant.max_message_bytes, 65_536);

  const leased = decode(wire.ServerFrame, readFixture("frame_delivery_leased"));
  assert.equal(leased.kind, "Delivery");
  assert.deepEqual(leased.lease, filled(0x61));
  assert.equal(leased.sequence, 65n);
  assert.equal(readFixture("frame_delivery_leased").length, 152 + 5, "a leased Delivery is 152 + n bytes (§K)");
  assert.equal(readFixture("frame_delivery_cursor").length, 120 + 5, "a cursor Delivery is 120 + n bytes (§K)");
  assert.equal((decode(wire.ServerFrame, readFixture("frame_delivery_cursor")) as wire.Kind<wire.ServerFrame, "Delivery">).lease, null);

  const error = decode(wire.ServerFrame, readFixture("frame_error")) as wire.Kind<wire.ServerFrame, "Error">;
  assert.equal(error.code, 204);
  assert.equal(new TextDecoder().decode(error.message), "ChainStateStale");

  const account = decode(wire.CbqsAccountV2, readFixture("account"));
  assert.equal(account.balance, 25_000_000_000n);
  const withdraw = decode(wire.Instruction, readFixture("ins_withdraw_some"));
  assert.deepEqual(withdraw, { kind: "WithdrawAccountV2", provider: filled(0xa0, 20), amount: 2_000_000_000n });
});

test("hand-assembled frames: Response Ok and Request Append", () => {
  const ok = Uint8Array.from([2, 3, ...filled(0x01), 8]);
  assert.deepEqual(encode(wire.ServerFrame, { kind: "Response", request_id: filled(0x01), body: { kind: "Ok" } }), ok);
  const append = Uint8Array.from([2, 3, ...filled(0x01), ...filled(0x21), 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0x68, 0x69]);
  const frame: wire.ClientFrame = {
    kind: "Request",
    request_id: filled(0x01),
    session_id: filled(0x21),
    body: { kind: "Append", append: { lane_id: 3n, payload: new TextEncoder().encode("hi") } },
  };
  assert.deepEqual(encode(wire.ClientFrame, frame), append);
});

const failure = (fn: () => unknown): DecodeFailure => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DecodeError, `threw ${e}`);
    return e.failure;
  }
  assert.fail("decoded");
};

test("strict decoding refuses each malformation with its own failure", () => {
  const ok = readFixture("resp_ok");
  assert.equal(failure(() => decode(wire.ServerFrame, ok.subarray(0, ok.length - 1))), "truncated");
  assert.equal(failure(() => decode(wire.ServerFrame, Uint8Array.from([...ok, 0]))), "trailing_bytes");
  assert.equal(failure(() => decode(wire.ServerFrame, Uint8Array.from([3, ...ok.subarray(1)]))), "bad_version");
  assert.equal(failure(() => decode(wire.ServerFrame, Uint8Array.from([2, 7, ...ok.subarray(2)]))), "unknown_variant");
  const body = ok.slice();
  body[body.length - 1] = 10; // response tag 10 does not exist
  assert.equal(failure(() => decode(wire.ServerFrame, body)), "unknown_variant");

  const lane = readFixture("lane_record");
  const badStatus = lane.slice();
  badStatus[badStatus.length - 1] = 3;
  assert.equal(failure(() => decode(wire.LaneRecordV2, badStatus)), "unknown_variant");

  const provider = readFixture("provider_record");
  const badBool = provider.slice();
  const acceptsNewAt = provider.length - 32 - 8 - 8 - 1;
  assert.equal(badBool[acceptsNewAt], 1);
  badBool[acceptsNewAt] = 2;
  assert.equal(failure(() => decode(wire.ProviderRecordV2, badBool)), "bad_bool");

  const progress = readFixture("req_get_checkpoint"); // Option<u64> Some(17)
  const badTag = progress.slice();
  badTag[progress.length - 9] = 2;
  assert.equal(failure(() => decode(wire.ClientFrame, badTag)), "bad_option_tag");

  const grant = readFixture("stream_grant");
  const badKey = grant.slice();
  badKey[1 + 32 + 32 + 8 + 32] = 2; // holder_signing_key's algorithm byte
  assert.equal(failure(() => decode(wire.StreamGrantV2, badKey)), "unknown_variant");
});

test("lengths are refused above their cap, or beyond the input, before anything is allocated", () => {
  // An error message of 1,025 bytes (cap 1,024), declared but not present.
  const w = new Writer();
  w.u8(2), w.u8(5), w.u8(0), w.u16(100), w.u32(1_025);
  assert.equal(failure(() => decode(wire.ServerFrame, w.finish())), "length_over_cap");
  // A payload that declares 4 GiB - 1 in a 30-byte frame.
  const big = new Writer();
  big.u8(2), big.u8(4), big.raw(filled(1)), big.raw(filled(2)), big.u8(0), big.u8(2), big.raw(filled(3)), big.u64(1n), big.u64(1n), big.u32(0xffffffff);
  assert.equal(failure(() => decode(wire.ServerFrame, big.finish())), "length_over_cap");
  // A lane list whose count the remaining bytes cannot hold.
  const lanes = new Writer();
  lanes.u8(2), lanes.u8(3), lanes.raw(filled(1)), lanes.u8(3), lanes.u32(5_000);
  assert.equal(failure(() => decode(wire.ServerFrame, lanes.finish())), "truncated");
  // A Set scope above 256 ids.
  const scope = new Writer();
  scope.u8(3), scope.u32(257);
  assert.equal(failure(() => decode(wire.LaneScope, scope.finish())), "length_over_cap");
  // A whole frame above cbqs.max_frame_bytes is refused before decoding.
  assert.throws(() => wire.decodeServerFrame(new Uint8Array(wire.limits.maxFrameBytes + 1)), DecodeError);
});

test("encoding refuses values the wire cannot carry", () => {
  assert.throws(() => encode(wire.RecordHeaderV2, { stream_id: new Uint8Array(31), lane_id: 1n }), RangeError);
  assert.throws(
    () => encode(wire.LaneScope, { kind: "Set", lane_ids: Array.from({ length: 257 }, (_, i) => BigInt(i)) }),
    RangeError,
  );
  // @ts-expect-error: no LaneScope is "Some"; the encoder refuses it at run time too
  assert.throws(() => encode(wire.LaneScope, { kind: "Some" }), RangeError);
});

test("u64 and u128 keep every bit", () => {
  const w = new Writer(1);
  w.u64(0xfedcba9876543210n);
  w.u128((1n << 128n) - 2n);
  const r = new Reader(w.finish());
  assert.equal(r.u64(), 0xfedcba9876543210n);
  assert.equal(r.u128(), (1n << 128n) - 2n);
  r.finish();
});
