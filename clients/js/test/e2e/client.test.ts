// The client against a real cbqsd --dev over wss:// on 127.0.0.1 (the dev
// certificate pinned): every part of the contract the issue names.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { CbqsError, ChainVerifier, Client, type ClientOptions, fetchProviderRecord, roomLaneId, verifyChain } from "../../dist/index.js";
import { type NodeTrust, devOptions, nodeDialer, readDevFiles } from "../../dist/node.js";
import type { RoomLaneV2 } from "../../dist/wire.js";
import { execFileSync } from "node:child_process";
import { DevBroker } from "../broker.js";

const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);
// sessionEpoch is @internal in client.ts (not in dist/*.d.ts); the reconnect test compares leases with it.
type TestClient = Client & { readonly sessionEpoch: number };
let broker: DevBroker;
const clients: Client[] = [];
const connect = async (overrides: Partial<ClientOptions> = {}): Promise<TestClient> => {
  const c = (await Client.connect(await devOptions(broker.dataDir, overrides))) as TestClient;
  clients.push(c);
  return c;
};

before(async () => {
  broker = await DevBroker.start();
});
after(async () => {
  for (const c of clients) await c.close();
  await broker.remove();
});

test("appends are pipelined and answered in order with gapless sequences; a reader replays them", async () => {
  const c = await connect();
  const lane = await c.createLane();
  const seqs = await Promise.all(Array.from({ length: 500 }, (_, i) => c.append(lane, `m${i}`)));
  for (let i = 1; i < seqs.length; ++i) assert.equal(seqs[i], seqs[i - 1]! + 1n);
  const reader = c.read({ lanes: lane, start: seqs[0] });
  const got = [];
  for await (const r of reader) {
    got.push(r);
    if (got.length === 500) break;
  }
  reader.close();
  assert.deepEqual(got.map((r) => str(r.payload)), Array.from({ length: 500 }, (_, i) => `m${i}`));
  assert.deepEqual(got.map((r) => r.sequence), seqs);
  assert.ok(got.every((r) => r.laneId === lane));
});

test("a reader from the head reports when its replay has caught up, then goes on live", async () => {
  const c = await connect();
  const lane = await c.createLane();
  const first = await c.append(lane, "before");
  const reader = c.read({ lanes: [lane], start: first });
  const head = await reader.caughtUp;
  assert.ok(head >= first, `head ${head} is below ${first}`);
  assert.equal(str((await reader.next(5_000))!.payload), "before");
  const live = await c.append(lane, "live");
  const r = (await reader.next(5_000))!;
  assert.equal(r.sequence, live);
  assert.equal(str(r.payload), "live");
  assert.equal(await reader.next(200), null, "nothing else arrives");
  reader.close();
});

test("group consumers: ack, nack (redelivered, attempt counted), reject and extend", async () => {
  const c = await connect();
  const lane = await c.createLane();
  const group = await c.createGroup({ lane_id: lane, start: { kind: "At", sequence: 1n }, visibility_timeout_ms: 2_000n });
  const config = await c.getGroup(group);
  assert.equal(config.visibility_timeout_ms, 2_000n);
  assert.equal(config.max_attempts, 5);
  for (const p of ["a", "b", "c"]) await c.append(lane, p);
  const consumer = c.consume({ lane, group });
  const a = (await consumer.next(5_000))!;
  const b = (await consumer.next(5_000))!;
  const cc = (await consumer.next(5_000))!;
  assert.deepEqual([a, b, cc].map((l) => str(l.record.payload)), ["a", "b", "c"]);
  await a.ack();
  await b.nack();
  await cc.extend(1_000);
  await cc.reject();
  const again = (await consumer.next(5_000))!;
  assert.equal(str(again.record.payload), "b", "a nacked record comes back");
  await again.ack();
  await assert.rejects(a.ack(), (e) => e instanceof CbqsError && (e.is("DeliveryTerminal") || e.is("LeaseStale")));
  assert.equal(await consumer.next(300), null, "acked and rejected records do not come back");
  consumer.close();
});

test("a consumer that reconnects drops the old session's leases and gets their records again", async () => {
  const c = await connect({ reconnect: { initialMs: 20, maxMs: 100 } });
  const lane = await c.createLane();
  const group = await c.createGroup({ lane_id: lane, start: { kind: "At", sequence: 1n } });
  for (const p of ["x", "y"]) await c.append(lane, p);
  const consumer = c.consume({ lane, group });
  const first = (await consumer.next(5_000))!;
  await new Promise((r) => setTimeout(r, 200)); // "y" is delivered into the buffer too
  c.dropConnection();
  await assert.rejects(first.ack(), (e: CbqsError) => e.kind === "disconnected");
  // Both records come back on the new session (their leases ended with the old one), each once.
  const again = [(await consumer.next(5_000))!, (await consumer.next(5_000))!];
  assert.deepEqual(again.map((l) => str(l.record.payload)).sort(), ["x", "y"]);
  assert.ok(again.every((l) => l.epoch === c.sessionEpoch), `epochs ${again.map((l) => l.epoch)} session ${c.sessionEpoch} connects ${c.stats.connects}`);
  for (const l of again) await l.ack();
  assert.equal(await consumer.next(300), null);
  consumer.close();
});

test("auto-extend keeps a lease past its visibility timeout", async () => {
  const c = await connect();
  const lane = await c.createLane();
  const group = await c.createGroup({ lane_id: lane, start: { kind: "At", sequence: 1n }, visibility_timeout_ms: 600n, max_visibility_ms: 10_000n });
  await c.append(lane, "slow work");
  const consumer = c.consume({ lane, group, autoExtend: true });
  const lease = (await consumer.next(5_000))!;
  await new Promise((r) => setTimeout(r, 1_500)); // 2.5 visibility timeouts
  await lease.ack(); // would be LeaseStale had it lapsed
  assert.equal(await consumer.next(700), null);
  consumer.close();
});

test("room lanes: every member opens the same derived lane, idempotently", async () => {
  const [alice, bob] = [await connect(), await connect()];
  const room: RoomLaneV2 = { kind: "Messages", room_id: new Uint8Array(32).fill(0x42) };
  const lane = await alice.openRoomLane(room);
  assert.equal(lane, roomLaneId(room));
  assert.equal(await bob.openRoomLane(room), lane);
  const inbox: RoomLaneV2 = { kind: "Inbox", room_id: room.room_id, seat_id: new Uint8Array(32).fill(7) };
  assert.equal(await bob.openRoomLane(inbox), roomLaneId(inbox));
  const seq = await alice.append(lane, "hi bob");
  const reader = bob.read({ lanes: lane, start: seq });
  assert.equal(str((await reader.next(5_000))!.payload), "hi bob");
  reader.close();
  assert.ok((await alice.listLanes()).some((l) => l.lane_id === lane && l.status === "Active"));
});

test("checkpoint chain verification: valid through the head, and incremental", async () => {
  const c = await connect();
  const lane = await c.createLane();
  await c.append(lane, "one");
  const files = await readDevFiles(broker.dataDir);
  const receipt = await c.checkpoint();
  const provider = await fetchProviderRecord(files.chainUrl, receipt.provider);
  const report = await verifyChain(c, provider);
  assert.equal(report.verdict, "valid", report.problem);
  assert.ok(report.lastSequence >= receipt.last_sequence);
  const verifier = new ChainVerifier(c, provider);
  const first = await verifier.verify();
  const later = await c.append(lane, "two");
  const second = await verifier.verify();
  assert.equal(second.verdict, "valid");
  assert.ok(second.lastSequence >= later && second.receipts > first.receipts);
  verifier.close();
  // Another provider record (its key rotated away) makes the same receipts invalid.
  const forged = { ...provider, signing_key: new Uint8Array(32).fill(9), signing_key_since: 0n, previous_signing_key: null };
  const bad = await verifyChain(c, forged);
  assert.equal(bad.verdict, "invalid");
  assert.match(bad.problem!, /signature/);
});

test("typed errors carry the §14 code and name", async () => {
  const c = await connect();
  await assert.rejects(c.getGroup(987_654n), (e: CbqsError) => e.kind === "broker" && e.code === 505 && e.codeName === "UnknownGroup");
  await assert.rejects(c.append(987_654n, "x"), (e: CbqsError) => e.is("UnknownLane"));
  const lane = await c.createLane();
  await c.closeLane(lane);
  await assert.rejects(c.append(lane, "x"), (e: CbqsError) => e.is("LaneClosed"));
  await assert.rejects(c.createGroup({ lane_id: lane, max_attempts: 65_535 }), (e: CbqsError) => e.is("InvalidGroupConfig") || e.is("LaneClosed"));
  // A refused Subscribe fails its reader: next() and caughtUp reject with the code (a one-lane Set is not a Set, §L).
  const refused = c.read({ lanes: { kind: "Set", lane_ids: [lane] } });
  await assert.rejects(refused.caughtUp, (e: CbqsError) => e.is("InvalidLaneScope"));
  await assert.rejects(refused.next(1_000), (e: CbqsError) => e.code === 308);
  // The session is still usable after refusals.
  assert.ok((await c.append(await c.createLane(), "still here")) > 0n);
});

test("the §11.4 policy refuses the dev broker's loopback address without the development opt-in", async () => {
  await assert.rejects(devOptions(broker.dataDir, { allowPrivateDestinations: false }).then(Client.connect), (e: CbqsError) => e.kind === "refused_destination");
});

test("TLS verification is on: no trust, or another pinned certificate, refuses the dev broker's", async () => {
  const other = execFileSync("openssl", ["req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout", "/dev/null", "-subj", "/CN=127.0.0.1", "-days", "1"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  for (const [trust, why] of [
    [{}, /self.signed/i],
    [{ pinnedCertificate: other }, /self.signed|pinned|signature/i],
  ] as [NodeTrust, RegExp][]) {
    const options = await devOptions(broker.dataDir, { dialer: nodeDialer(trust) });
    await assert.rejects(Client.connect(options), (e: CbqsError) => e.kind === "disconnected" && why.test(e.message), JSON.stringify(Object.keys(trust)));
  }
});

test("after a dropped connection unanswered appends are sent again and a reader resumes with no gap and no repeat", async () => {
  const events: string[] = [];
  const c = await connect({ onEvent: (e) => events.push(e.type), reconnect: { initialMs: 20, maxMs: 200 } });
  const lane = await c.createLane();
  const start = await c.append(lane, "r0");
  const reader = c.read({ lanes: lane, start });
  assert.equal(str((await reader.next(5_000))!.payload), "r0");
  const inFlight = Array.from({ length: 200 }, (_, i) => c.append(lane, `r${i + 1}`));
  c.dropConnection();
  const more = Array.from({ length: 50 }, (_, i) => c.append(lane, `r${i + 201}`)); // made while reconnecting
  const seqs = await Promise.all([...inFlight, ...more]);
  assert.equal(new Set(seqs.map(String)).size, 250);
  assert.ok(c.stats.connects >= 2, "a second session was opened");
  assert.ok(events.includes("disconnected") && events.includes("connected"));
  // At-least-once: a resent append may be stored twice; the reader sees each stored record once, in order.
  const seen = [];
  for (let r; (r = await reader.next(2_000)); ) seen.push(r);
  const sequences = seen.map((r) => r.sequence);
  for (let i = 1; i < sequences.length; ++i) assert.equal(sequences[i], sequences[i - 1]! + 1n, "no gap, no repeat");
  const payloads = new Set(seen.map((r) => str(r.payload)));
  for (let i = 1; i <= 250; ++i) assert.ok(payloads.has(`r${i}`), `r${i} was delivered`);
  reader.close();
  // A Subscribe still unanswered when the connection drops subscribes again; the reader does not fail.
  const late = c.read({ lanes: lane, start });
  c.dropConnection();
  assert.equal(str((await late.next(5_000))!.payload), "r0");
  late.close();
});

test("a reader from the head that reconnects misses nothing appended while it was away", async () => {
  const writer = await connect();
  const lane = await writer.createLane();
  // A long first backoff, so the append below lands before the reader's session is back.
  const c = await connect({ reconnect: { initialMs: 500, maxMs: 500, jitter: 0 } });
  const reader = c.read({ lanes: lane });
  await reader.caughtUp;
  c.dropConnection();
  const seq = await writer.append(lane, "while away");
  const r = await reader.next(5_000);
  assert.ok(r, "the record appended during the outage arrived");
  assert.equal(r.sequence, seq);
  reader.close();
});

test("a broker restart (SIGKILL) is ridden out: the client reconnects and its appends land", async () => {
  const c = await connect({ reconnect: { initialMs: 50, maxMs: 300 }, requestTimeoutMs: 20_000 });
  const lane = await c.createLane();
  const before = await c.append(lane, "before the crash");
  const ports = broker.ports;
  await broker.stop("SIGKILL");
  const pending = c.append(lane, "during the outage");
  broker = await DevBroker.start({ dataDir: broker.dataDir, ports });
  const seq = await pending;
  assert.ok(seq > before);
  const reader = c.read({ lanes: lane, start: before });
  assert.equal(str((await reader.next(5_000))!.payload), "before the crash", "an acknowledged append survived");
  assert.equal(str((await reader.next(5_000))!.payload), "during the outage");
  reader.close();
});
