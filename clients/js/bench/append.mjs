// Appends per second and append latency from Node: the same closed loop as
// `cbqs bench` (apps/cbqs/data_plane.cc): N producer connections, each keeping
// WINDOW appends of PAYLOAD bytes outstanding for SECONDS. Prints one JSON
// line with the same field names.
//
//   node bench/append.mjs --dev cbqsd-dev [--producers 4] [--payload 256] [--seconds 5] [--window 256]
import { Client } from "../dist/index.js";
import { devOptions } from "../dist/node.js";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const dev = arg("dev", "cbqsd-dev");
const producers = Number(arg("producers", 4));
const payloadBytes = Number(arg("payload", 256));
const seconds = Number(arg("seconds", 5));
const window = Number(arg("window", 256));

const admin = await Client.connect(await devOptions(dev));
const lane = await admin.createLane();
const clients = await Promise.all(Array.from({ length: producers }, async () => Client.connect(await devOptions(dev))));
const payload = new Uint8Array(payloadBytes).fill(0x5a);
const latencies = [];
let appended = 0;
const end = performance.now() + seconds * 1000;

await Promise.all(
  clients.map(
    (c) =>
      new Promise((done) => {
        let outstanding = 0;
        const fill = () => {
          while (outstanding < window && performance.now() < end) {
            ++outstanding;
            const sent = performance.now();
            c.append(lane, payload).then(() => {
              --outstanding;
              ++appended;
              latencies.push(performance.now() - sent);
              fill();
            });
          }
          if (outstanding === 0) done();
        };
        fill();
      }),
  ),
);
latencies.sort((a, b) => a - b);
const pct = (q) => (latencies.length ? latencies[Math.floor(q * (latencies.length - 1))] : 0);
console.log(
  JSON.stringify({
    client: "node",
    producers,
    payload_bytes: payloadBytes,
    seconds,
    appends: appended,
    appends_per_sec: appended / seconds,
    append_latency_ms: { p50: pct(0.5), p99: pct(0.99), max: pct(1) },
  }),
);
for (const c of [admin, ...clients]) await c.close();
