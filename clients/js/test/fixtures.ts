// Shared by the unit tests: the C++ tree's byte-exact fixtures and vectors.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { fromHex } from "../dist/ids.js";

export const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const fixtureDir = join(repo, "tests", "fixtures", "cbqs");

/** Hex digits, whitespace ignored, '#' starts a comment line (tests/support/hex_fixture.h). */
export function readFixture(name: string): Uint8Array {
  const text = readFileSync(join(fixtureDir, `${name}.hex`), "utf8");
  return fromHex(
    text
      .split("\n")
      .filter((l) => !l.startsWith("#"))
      .join("")
      .replace(/\s+/g, ""),
  );
}

export const fixtureNames = (): string[] =>
  readdirSync(fixtureDir)
    .filter((f) => f.endsWith(".hex"))
    .map((f) => f.slice(0, -4))
    .sort();

/** tests/fixtures/cbqs/ids.txt: "name value" per line, written by the C++ Fixtures test. */
export function idVectors(): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const line of readFileSync(join(fixtureDir, "ids.txt"), "utf8").split("\n")) {
    const [name, value] = line.split(" ");
    if (name) out[name] = value;
  }
  return out;
}

/** The samples' filled32(base): base, base + 1, ... (tests/cbqs/wire/samples.cc). */
export const filled = (base: number, n = 32): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (base + i) & 0xff);
