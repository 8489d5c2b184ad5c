// §11.4 client dialing policy (docs/protocol.md §M): only wss:// endpoints, and
// never to a refused address range unless development mode allows private
// destinations. The C++ twin is src/cbqs/client/dialing.cc.
//
// Where this applies: in Node the client resolves every address of a name,
// refuses the endpoint if any is refused, and connects to a checked address
// (transport-node.ts). A browser resolves and connects by itself and exposes
// neither step, so there only the literal check applies (a URI whose host is
// a refused literal); docs/js-client.md says what a page relies on instead.
import { CbqsError } from "./errors.js";

export interface Endpoint {
  url: string; // normalized wss://host[:port]/path
  host: string; // a name or an address literal, without brackets
  port: number;
  path: string;
}

export function parseEndpoint(uri: string): Endpoint {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new CbqsError("configuration", `${uri} is not a URI`);
  }
  if (u.protocol !== "wss:") throw new CbqsError("configuration", `${uri}: only wss:// endpoints are dialed (§11.4)`);
  if (u.username || u.password || u.hash) throw new CbqsError("configuration", `${uri}: no credentials or fragment allowed`);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const port = u.port ? Number(u.port) : 443;
  return { url: u.toString(), host, port, path: (u.pathname || "/") + u.search };
}

const REFUSED4: ReadonlyArray<readonly [number, number, string]> = [
  [0x00000000, 8, "0.0.0.0/8"],
  [0x0a000000, 8, "10.0.0.0/8"],
  [0x64400000, 10, "100.64.0.0/10"],
  [0x7f000000, 8, "127.0.0.0/8"],
  [0xa9fe0000, 16, "169.254.0.0/16"],
  [0xac100000, 12, "172.16.0.0/12"],
  [0xc0000000, 24, "192.0.0.0/24"],
  [0xc0000200, 24, "192.0.2.0/24"],
  [0xc0586300, 24, "192.88.99.0/24"],
  [0xc0a80000, 16, "192.168.0.0/16"],
  [0xc6120000, 15, "198.18.0.0/15"],
  [0xc6336400, 24, "198.51.100.0/24"],
  [0xcb007100, 24, "203.0.113.0/24"],
  [0xe0000000, 4, "224.0.0.0/4"],
  [0xf0000000, 4, "240.0.0.0/4"],
];

function parse4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let v = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    v = v * 256 + Number(p);
  }
  return v;
}

function refused4(a: number): string | null {
  for (const [base, bits, text] of REFUSED4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((a & mask) >>> 0) === base) return text;
  }
  return null;
}

function parse6(text: string): Uint8Array | null {
  let s = text;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  // A trailing dotted IPv4 becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const v4 = parse4(dotted[1]!);
    if (v4 === null) return null;
    s = s.slice(0, -dotted[1]!.length) + `${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return null;
  const groups = [...head, ...Array<string>(fill).fill("0"), ...tail];
  if (groups.length !== 8) return null;
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; ++i) {
    const g = groups[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  }
  return out;
}

function hasPrefix(a: Uint8Array, prefix: number[], bits: number): boolean {
  for (let i = 0; 8 * i < bits; ++i) {
    const take = Math.min(8, bits - 8 * i);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((a[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

const v4At = (a: Uint8Array, at: number): number => ((a[at]! << 24) | (a[at + 1]! << 16) | (a[at + 2]! << 8) | a[at + 3]!) >>> 0;

function refused6(a: Uint8Array): string | null {
  if (a.every((b) => b === 0)) return "::/128";
  if (a.subarray(0, 15).every((b) => b === 0) && a[15] === 1) return "::1/128";
  // Forms that embed an IPv4 address are judged by that address.
  if (hasPrefix(a, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96)) return refused4(v4At(a, 12));
  if (hasPrefix(a, [0x00, 0x64, 0xff, 0x9b], 96)) return refused4(v4At(a, 12));
  if (hasPrefix(a, [0x20, 0x02], 16)) return refused4(v4At(a, 2));
  if (hasPrefix(a, [0x01, 0x00], 64)) return "100::/64";
  if (hasPrefix(a, [0x20, 0x01, 0x0d, 0xb8], 32)) return "2001:db8::/32";
  if (hasPrefix(a, [0xfc], 7)) return "fc00::/7";
  if (hasPrefix(a, [0xfe, 0x80], 10)) return "fe80::/10";
  if (hasPrefix(a, [0xff], 8)) return "ff00::/8";
  return null;
}

/** True when `host` is an IPv4 or IPv6 literal. */
export const isAddressLiteral = (host: string): boolean => parse4(host) !== null || parse6(host) !== null;

/** The refused range an address literal falls in ("127.0.0.0/8"), or null. */
export function refusedRange(address: string): string | null {
  const v4 = parse4(address);
  if (v4 !== null) return refused4(v4);
  const v6 = parse6(address);
  if (v6 !== null) return refused6(v6);
  throw new CbqsError("configuration", `${address} is not an address`);
}

/** Throws refused_destination when `address` is in a refused range and private ones are not allowed. */
export function checkAddress(endpoint: string, address: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const range = refusedRange(address);
  if (range)
    throw new CbqsError(
      "refused_destination",
      `${endpoint} resolves to ${address}, in the refused range ${range} (§11.4); allowPrivateDestinations is for development`,
    );
}
