// Node additions: a dialer on the `ws` package that applies §11.4 in full and
// pins or trusts certificates, and the files `cbqsd --dev` writes.
//
//   import { Client } from "@cowboy/cbqs";
//   import { devOptions } from "@cowboy/cbqs/node";
//   const client = await Client.connect(await devOptions("cbqsd-dev"));
import { X509Certificate } from "node:crypto";
import { promises as dns } from "node:dns";
import { readFile } from "node:fs/promises";
import type { PeerCertificate } from "node:tls";
import { checkServerIdentity } from "node:tls";
import { join } from "node:path";

import { type ClientOptions } from "./client.js";
import { checkAddress, isAddressLiteral } from "./dialing.js";
import { CbqsError } from "./errors.js";
import { fromHex } from "./ids.js";
import type { Dialer } from "./transport.js";
import { StreamGrantV2 } from "./wire.js";
import { decode } from "./codec.js";

export * from "./index.js";

export interface NodeTrust {
  /** PEM of the CA (or CAs) to trust instead of Node's roots. */
  ca?: string;
  /** PEM of the one certificate the server must present (pinned, as cbqs --ca with cbqsd --dev). */
  pinnedCertificate?: string;
}

/**
 * §11.4 in full: every address of the name is resolved and checked, the
 * endpoint is refused if any is refused, and the socket goes to a checked
 * address (never resolving again) with the name for SNI and Host. No redirect
 * is followed; TLS verification stays on.
 */
export function nodeDialer(trust: NodeTrust = {}): Dialer {
  const pin = trust.pinnedCertificate ? new X509Certificate(trust.pinnedCertificate).fingerprint256 : undefined;
  return async (endpoint, options, events) => {
    const { default: WebSocket } = await import("ws");
    let address = endpoint.host;
    let family = address.includes(":") ? 6 : 4;
    // Literals were checked by the client; a name is checked here, every address it resolves to.
    if (!isAddressLiteral(endpoint.host)) {
      const all = await dns.lookup(endpoint.host, { all: true }).catch((e: Error) => {
        throw new CbqsError("disconnected", `cannot resolve ${endpoint.host}: ${e.message}`);
      });
      for (const a of all) checkAddress(endpoint.url, a.address, options.allowPrivateDestinations);
      address = all[0]!.address;
      family = all[0]!.family;
    }
    const lookup = (_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) =>
      opts.all ? cb(null, [{ address, family }]) : cb(null, address, family);
    return new Promise((resolve, reject) => {
      // ws hands these to https.request; its typings misstate checkServerIdentity (tls's returns an Error).
      const ws = new WebSocket(endpoint.url, <import("ws").ClientOptions>(<unknown>{
        ...(trust.ca || trust.pinnedCertificate ? { ca: trust.ca ?? trust.pinnedCertificate } : {}),
        servername: isAddressLiteral(endpoint.host) ? undefined : endpoint.host,
        lookup: lookup as never,
        checkServerIdentity: (host: string, cert: PeerCertificate) => {
          if (pin && cert.fingerprint256 !== pin)
            return new Error("the server's certificate is not the pinned one");
          return checkServerIdentity(host, cert);
        },
        perMessageDeflate: false,
        followRedirects: false,
        maxPayload: options.maxMessageBytes,
        handshakeTimeout: options.timeoutMs,
      }));
      ws.binaryType = "nodebuffer";
      let open = false;
      ws.on("open", () => {
        open = true;
        const socket = (ws as unknown as { _socket: import("node:net").Socket })._socket;
        let corked = false;
        resolve({
          send: (frame) => {
            if (!corked) {
              corked = true;
              socket.cork();
            }
            // Copied into pooled memory; a Buffer is read-only to ws, which masks it into its header's buffer.
            ws.send(Buffer.from(frame));
          },
          flush: () => {
            if (corked) {
              corked = false;
              socket.uncork();
            }
          },
          close: () => ws.close(),
          abort: () => ws.terminate(),
        });
      });
      ws.on("message", (data: Buffer, isBinary: boolean) => {
        if (!isBinary) return ws.terminate();
        events.message(data); // a Buffer is a Uint8Array
      });
      ws.on("unexpected-response", (_req, res) => {
        ws.terminate();
        reject(new CbqsError("disconnected", `${endpoint.url} answered ${res.statusCode}, not 101 (no redirect is followed)`));
      });
      ws.on("error", (e: Error) => {
        if (!open) reject(new CbqsError("disconnected", `${endpoint.url}: ${e.message}`));
      });
      ws.on("close", (code: number) => {
        if (open) events.closed(`closed with ${code}`);
        else reject(new CbqsError("disconnected", `${endpoint.url} closed before the upgrade (${code})`));
      });
    });
  };
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    throw new CbqsError("configuration", `cannot read ${path}: ${(e as Error).message}`);
  }
}

/** A grant file (hex of a canonical StreamGrantV2), as cbqs --grant takes it. */
export async function readGrantFile(path: string): Promise<StreamGrantV2> {
  const text = (await readText(path)).split("\n")[0]!;
  if (!text.trim()) throw new CbqsError("configuration", `${path} is empty`);
  return decode(StreamGrantV2, fromHex(text));
}

/** An Ed25519 seed file: 64 hex characters (0x and upper case accepted), the first line only. */
export async function readSeedFile(path: string): Promise<Uint8Array> {
  const seed = fromHex((await readText(path)).split("\n")[0]!);
  if (seed.length !== 32) throw new CbqsError("configuration", `${path} does not hold a 32-byte seed`);
  return seed;
}

/** What `cbqsd --dev --data-dir DIR` wrote (docs/protocol.md §R). */
export interface DevFiles {
  endpoint: string;
  chainUrl: string;
  adminUrl: string;
  certificatePem: string;
}
export async function readDevFiles(dir: string): Promise<DevFiles> {
  const endpoints = JSON.parse(await readText(join(dir, "dev-endpoints.json"))) as Record<string, string>;
  return {
    endpoint: endpoints["endpoint"]!,
    chainUrl: endpoints["chain"]!,
    adminUrl: endpoints["admin"]!,
    certificatePem: await readText(join(dir, "tls", "dev-cert.pem")),
  };
}

/** Options for the dev broker in DIR: its grant, holder key and pinned certificate, private destinations allowed. */
export async function devOptions(dir: string, overrides: Partial<ClientOptions> = {}): Promise<ClientOptions> {
  const files = await readDevFiles(dir);
  return {
    endpoint: files.endpoint,
    grant: await readGrantFile(join(dir, "dev-grant.hex")),
    holderSeed: await readSeedFile(join(dir, "dev-holder-key")),
    allowPrivateDestinations: true,
    dialer: nodeDialer({ pinnedCertificate: files.certificatePem }),
    ...overrides,
  };
}
