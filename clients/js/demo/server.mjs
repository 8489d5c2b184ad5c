// The chat demo's server: serves the page, mints grants for the holder keys
// browsers generate, and relays chain reads (the page verifies checkpoints
// against the provider record itself). It is the piece a real deployment
// replaces with its own grant service (docs/js-client.md, "Grants for browsers").
//
//   node demo/server.mjs --dev ../../cbqsd-dev [--port 8090]
import { X509Certificate, createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { encode } from "../dist/codec.js";
import { fromHex, randomBytes, signGrant, toHex } from "../dist/ids.js";
import { readDevFiles, readGrantFile, readSeedFile } from "../dist/node.js";
import * as verbs from "../dist/verbs.js";
import { StreamGrantV2 } from "../dist/wire.js";

const here = dirname(fileURLToPath(import.meta.url));
const GRANT_TTL_MS = 60 * 60 * 1000;

/** The base64 SHA-256 of a certificate's public key, as Chromium's --ignore-certificate-errors-spki-list takes it. */
export const spkiHash = (pem) =>
  createHash("sha256").update(new X509Certificate(pem).publicKey.export({ type: "spki", format: "der" })).digest("base64");

export async function startChatServer({ devDir, port = 0, host = "127.0.0.1" }) {
  const files = await readDevFiles(devDir);
  // The stream this dev broker serves, and the key that may grant access to it.
  const stream = await readGrantFile(join(devDir, "dev-grant.hex"));
  const adminSeed = await readSeedFile(join(devDir, "stream-admin-key"));
  const page = await readFile(join(here, "chat.html"));
  const bundle = await readFile(join(here, "dist", "chat.js"));

  // A chat member may read every lane (so it can verify checkpoints over the
  // whole stream), append, and open room lanes; nothing else.
  const mint = (holderKey) =>
    signGrant(
      {
        chain_instance_id: stream.chain_instance_id,
        stream_id: stream.stream_id,
        authorization_generation: stream.authorization_generation,
        grant_nonce: randomBytes(32),
        holder_signing_key: holderKey,
        verbs: verbs.APPEND | verbs.REPLAY | verbs.MANAGE_LANES,
        lane_scope: { kind: "Any" },
        group_scope: { kind: "Any" },
        not_before_ms: BigInt(Date.now() - 60_000),
        expires_at_ms: BigInt(Date.now() + GRANT_TTL_MS),
        max_message_bytes: 64 * 1024,
        max_append_bytes_per_sec: 1n << 20n,
      },
      adminSeed,
    );

  const server = createServer(async (req, res) => {
    const send = (status, type, body) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    try {
      const url = new URL(req.url, "http://x");
      if (req.method === "GET" && (url.pathname === "/" || url.pathname === "/chat.html")) return send(200, "text/html; charset=utf-8", page);
      if (req.method === "GET" && url.pathname === "/chat.js") return send(200, "text/javascript", bundle);
      if (req.method === "GET" && url.pathname === "/config.json")
        return send(200, "application/json", JSON.stringify({ endpoint: files.endpoint, chainUrl: "/chain", development: true }));
      if (req.method === "POST" && url.pathname === "/grant") {
        let body = "";
        for await (const chunk of req) {
          body += chunk;
          if (body.length > 1024) return send(413, "text/plain", "too large");
        }
        const key = fromHex(JSON.parse(body).holder_public_key ?? "");
        if (key.length !== 32) return send(400, "text/plain", "holder_public_key: 32 bytes of hex");
        return send(200, "application/json", JSON.stringify({ grant: toHex(encode(StreamGrantV2, mint(key))) }));
      }
      if (req.method === "GET" && url.pathname.startsWith("/chain/v1/providers/")) {
        const upstream = await fetch(files.chainUrl + url.pathname.slice("/chain".length));
        return send(upstream.status, "application/json", await upstream.text());
      }
      send(404, "text/plain", "not found");
    } catch (e) {
      send(400, "text/plain", String(e.message ?? e));
    }
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  return {
    url: `http://${host}:${address.port}/`,
    spki: spkiHash(files.certificatePem),
    endpoint: files.endpoint,
    close: () => new Promise((r) => server.close(r)),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const chat = await startChatServer({ devDir: arg("--dev", join(here, "..", "..", "..", "cbqsd-dev")), port: Number(arg("--port", 8090)) });
  console.log(`chat: ${chat.url}?room=lobby  (broker ${chat.endpoint})`);
  console.log(`the broker's dev certificate is self-signed: open ${chat.endpoint.replace("wss:", "https:")} once and accept it,`);
  console.log(`or start Chromium with --ignore-certificate-errors-spki-list=${chat.spki}`);
}
