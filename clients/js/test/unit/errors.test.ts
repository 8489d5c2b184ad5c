// The §14 table in errors.ts agrees row for row with include/cbqs/wire/errors.h.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { CbqsError, errorCode, errorName, errorTable } from "../../dist/errors.js";
import { repo } from "../fixtures.js";

test("every code, name and meaning matches the C++ table", () => {
  const header = readFileSync(join(repo, "include", "cbqs", "wire", "errors.h"), "utf8");
  const rows = [...header.matchAll(/X\((\d+), (\w+), "([^"]*)"\)/g)].map((m) => [Number(m[1]), m[2], m[3]]);
  assert.equal(rows.length, 51);
  assert.deepEqual(errorTable.map((r) => [...r]), rows);
});

test("a broker error carries its code and name; RateLimited its wait", () => {
  const details = new Uint8Array(8);
  new DataView(details.buffer).setBigUint64(0, 250n);
  const e = new CbqsError("broker", "slow down", 601, details);
  assert.equal(e.codeName, "RateLimited");
  assert.ok(e.is("RateLimited"));
  assert.equal(e.retryAfterMs, 250);
  assert.equal(e.message, "RateLimited (601): slow down");
  assert.equal(errorName(513), "LeaseStale");
  assert.equal(errorCode("LeaseStale"), 513);
  assert.equal(errorName(103), undefined);
  const d = new CbqsError("disconnected", "gone");
  assert.equal(d.codeName, undefined);
  assert.ok(!d.is("LeaseStale"));
  assert.equal(d.message, "disconnected: gone");
});
