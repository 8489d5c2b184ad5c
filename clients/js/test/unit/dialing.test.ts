// §11.4 (docs/protocol.md §M): the same cases as tests/cbqs/client/dialing_test.cc.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, type ClientOptions } from "../../dist/client.js";
import { decode } from "../../dist/codec.js";
import { CbqsError } from "../../dist/errors.js";
import { checkAddress, parseEndpoint, refusedRange } from "../../dist/dialing.js";
import { nodeDialer } from "../../dist/node.js";
import type { Dialer } from "../../dist/transport.js";
import { StreamGrantV2 } from "../../dist/wire.js";
import { readFixture } from "../fixtures.js";

test("every refused IPv4 range, including its edges", () => {
  const refused = {
    "0.0.0.0": "0.0.0.0/8", "10.255.255.255": "10.0.0.0/8", "100.64.0.1": "100.64.0.0/10",
    "100.127.255.255": "100.64.0.0/10", "127.0.0.1": "127.0.0.0/8", "169.254.169.254": "169.254.0.0/16",
    "172.16.0.1": "172.16.0.0/12", "172.31.255.255": "172.16.0.0/12", "192.0.0.8": "192.0.0.0/24",
    "192.0.2.1": "192.0.2.0/24", "192.88.99.1": "192.88.99.0/24", "192.168.1.1": "192.168.0.0/16",
    "198.18.0.1": "198.18.0.0/15", "198.19.255.255": "198.18.0.0/15", "198.51.100.7": "198.51.100.0/24",
    "203.0.113.9": "203.0.113.0/24", "224.0.0.1": "224.0.0.0/4", "239.255.255.255": "224.0.0.0/4",
    "240.0.0.1": "240.0.0.0/4", "255.255.255.255": "240.0.0.0/4",
  };
  for (const [addr, range] of Object.entries(refused)) assert.equal(refusedRange(addr), range, addr);
  for (const addr of ["8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255"])
    assert.equal(refusedRange(addr), null, addr);
});

test("IPv6 ranges and the forms that embed IPv4", () => {
  assert.equal(refusedRange("::"), "::/128");
  assert.equal(refusedRange("::1"), "::1/128");
  assert.equal(refusedRange("::ffff:127.0.0.1"), "127.0.0.0/8");
  assert.equal(refusedRange("::ffff:8.8.8.8"), null);
  assert.equal(refusedRange("64:ff9b::a9fe:a9fe"), "169.254.0.0/16");
  assert.equal(refusedRange("2002:c0a8:0101::1"), "192.168.0.0/16");
  assert.equal(refusedRange("100::1"), "100::/64");
  assert.equal(refusedRange("2001:db8::1"), "2001:db8::/32");
  assert.equal(refusedRange("fd00::1"), "fc00::/7");
  assert.equal(refusedRange("fe80::1"), "fe80::/10");
  assert.equal(refusedRange("ff02::1"), "ff00::/8");
  assert.equal(refusedRange("2606:4700:4700::1111"), null);
});

test("endpoints parse like the §4.1 examples; others are refused", () => {
  assert.deepEqual(parseEndpoint("wss://cbqs.example/ws"), { url: "wss://cbqs.example/ws", host: "cbqs.example", port: 443, path: "/ws" });
  assert.equal(parseEndpoint("wss://[2606:4700:4700::1111]/ws").host, "2606:4700:4700::1111");
  assert.equal(parseEndpoint("wss://198.51.100.7:8443/ws").port, 8443);
  for (const bad of ["https://cbqs.example/ws", "wss://host:99999/", "wss://[::1/", "ws://cbqs.example/", "wss://u:p@cbqs.example/"])
    assert.throws(() => parseEndpoint(bad), (e: CbqsError) => e.kind === "configuration", bad);
});

test("a refused destination fails before any connection, unless development allows it", async () => {
  assert.throws(() => checkAddress("wss://127.0.0.1:1/", "127.0.0.1", false), (e: CbqsError) => e.kind === "refused_destination" && /127\.0\.0\.0\/8/.test(e.message));
  checkAddress("wss://127.0.0.1:1/", "127.0.0.1", true);
  // A literal is refused by the client on every platform, before its dialer is called.
  const dialed: string[] = [];
  const recording: Dialer = async (endpoint) => {
    dialed.push(endpoint.host);
    throw new CbqsError("disconnected", "no network in a unit test");
  };
  const options = (endpoint: string, allowPrivateDestinations: boolean): ClientOptions => ({
    endpoint,
    grant: decode(StreamGrantV2, readFixture("stream_grant")),
    holderSeed: new Uint8Array(32),
    allowPrivateDestinations,
    dialer: recording,
  });
  for (const literal of ["wss://127.0.0.1:1/", "wss://[::1]:1/", "wss://[::ffff:10.0.0.1]:1/", "wss://169.254.169.254/"])
    await assert.rejects(Client.connect(options(literal, false)), (e: CbqsError) => e.kind === "refused_destination", literal);
  assert.deepEqual(dialed, [], "no dial was attempted");
  // With the development opt-in the dialer is called.
  await assert.rejects(Client.connect(options("wss://127.0.0.1:1/", true)), (e: CbqsError) => e.kind === "disconnected");
  assert.deepEqual(dialed, ["127.0.0.1"]);
  // In Node a name is refused when any address it resolves to is refused: localhost resolves to loopback only.
  const events = { message() {}, closed() {} };
  const opts = { allowPrivateDestinations: false, maxMessageBytes: 1 << 20, timeoutMs: 1_000 };
  await assert.rejects(nodeDialer()(parseEndpoint("wss://localhost:1/"), opts, events), (e: CbqsError) => e.kind === "refused_destination");
});
