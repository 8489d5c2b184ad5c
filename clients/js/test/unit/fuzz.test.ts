// A fuzz target for the JS decoders, run as a bounded test: mutations of every
// C++ fixture (bit flips, byte changes, truncations, insertions, and lengths
// set to extremes) and random bytes. The properties are the C++ fuzzers'
// (fuzz/fuzz_server_frame.cc, fuzz_client_frame.cc): decoding either returns
// a value or throws DecodeError, never anything else; and whatever decodes
// re-encodes to exactly the input (one encoding per value). Seeded, so a
// failure names the run that reproduces it. FUZZ_RUNS=N runs longer.
import assert from "node:assert/strict";
import { test } from "node:test";

import { type Codec, DecodeError, decode, encode } from "../../dist/codec.js";
import * as wire from "../../dist/wire.js";
import { fixtureNames, readFixture } from "../fixtures.js";

const runs = Number(process.env.FUZZ_RUNS ?? 100_000);

// xorshift32: deterministic, injected randomness.
function rng(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

function mutate(input: Uint8Array, next: (n: number) => number): Uint8Array {
  const b = Array.from(input);
  for (let k = 1 + next(4); k > 0; --k) {
    const at = next(b.length + 1);
    switch (next(6)) {
      case 0: if (b.length) b[at % b.length]! ^= 1 << next(8); break;
      case 1: if (b.length) b[at % b.length] = next(256); break;
      case 2: b.length = at; break;
      case 3: b.splice(at, 0, next(256)); break;
      case 4: if (b.length >= 4) b.splice(at % (b.length - 3), 4, ...[0xff, 0xff, 0xff, 0xff]); break; // a huge length
      case 5: b.splice(at, 0, ...Array.from({ length: next(40) }, () => next(256))); break;
    }
  }
  return Uint8Array.from(b);
}

const targets: [string, Codec<unknown>][] = [
  ["server frame", wire.ServerFrame],
  ["client frame", wire.ClientFrame],
  ["instruction", wire.Instruction],
  ["provider record", wire.ProviderRecordV2],
  ["grant", wire.StreamGrantV2],
];

test(`decoders under ${runs} mutated and random inputs: a value that re-encodes to its input, or a DecodeError`, () => {
  const seeds = fixtureNames().map(readFixture);
  const next = rng(0x5eed);
  const outcomes = { decoded: 0, refused: 0 };
  for (let run = 0; run < runs; ++run) {
    const input = next(10) === 0 ? Uint8Array.from({ length: next(200) }, () => next(256)) : mutate(seeds[next(seeds.length)]!, next);
    const [name, codec] = targets[run % targets.length]!;
    let value;
    try {
      value = decode(codec, input);
    } catch (e) {
      if (!(e instanceof DecodeError)) assert.fail(`run ${run} (${name}): ${e} on ${Buffer.from(input).toString("hex")}`);
      ++outcomes.refused;
      continue;
    }
    ++outcomes.decoded;
    assert.deepEqual(encode(codec, value), input, `run ${run} (${name}) decoded but does not re-encode to its input`);
  }
  // Both paths were exercised: some mutations still decode (a changed byte inside a value), most do not.
  assert.ok(outcomes.decoded > runs / 100 && outcomes.refused > runs / 2, JSON.stringify(outcomes));
});
