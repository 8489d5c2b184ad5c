// The chat page: a room lane (§11.1) of the dev stream. History is replayed on
// join, new messages arrive live, and the badge shows the checkpoint chain
// verified (§10) through the newest message. Bundled by demo/build.mjs.
import { ChainVerifier, Client, fetchProviderRecord, newKeypair, roomIdFromName, toHex } from "../dist/index.js";
import { decode } from "../dist/codec.js";
import { fromHex } from "../dist/ids.js";
import { StreamGrantV2 } from "../dist/wire.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const room = params.get("room") ?? "lobby";
const me = params.get("name") ?? `guest-${Math.floor(Math.random() * 1000)}`;
$("title").textContent = `#${room} as ${me}`;

function show(record) {
  let m;
  try {
    m = JSON.parse(new TextDecoder().decode(record.payload));
  } catch {
    m = { from: "?", text: "(not a chat message)" };
  }
  const li = document.createElement("li");
  li.className = m.from === me ? "mine" : "";
  li.dataset.sequence = String(record.sequence);
  li.innerHTML = `<span class="seq">#${record.sequence}</span><span class="from"></span><span class="text"></span>`;
  li.querySelector(".from").textContent = m.from;
  li.querySelector(".text").textContent = m.text;
  $("messages").append(li);
  li.scrollIntoView();
}

function badge(report) {
  const b = $("badge");
  b.className = report.verdict;
  b.textContent = report.verdict === "valid" ? `verified through #${report.lastSequence}` : report.verdict;
  b.title = report.problem ?? `${report.receipts} signed receipts checked`;
}

async function main() {
  const config = await (await fetch("/config.json")).json();
  // The holder key is made here and never leaves the page; the server signs a grant for its public half.
  const holder = newKeypair();
  const minted = await fetch("/grant", { method: "POST", body: JSON.stringify({ holder_public_key: toHex(holder.publicKey) }) });
  const grant = decode(StreamGrantV2, fromHex((await minted.json()).grant));
  const client = await Client.connect({
    endpoint: config.endpoint,
    grant,
    holderSeed: holder.seed,
    allowPrivateDestinations: config.development,
    onEvent: (e) => ($("status").textContent = e.type === "connected" ? `connected (session ${e.sessions})` : e.type),
  });
  const lane = await client.openRoomLane({ kind: "Messages", room_id: roomIdFromName(room) });
  $("status").textContent = `connected, lane ${lane}`;

  // Verification starts with the stream's first receipt (an empty stream has none yet).
  let verifier = null;
  const verifyNow = async () => {
    if (!verifier) {
      const receipt = await client.checkpoint().catch(() => null);
      if (!receipt) return;
      verifier = new ChainVerifier(client, await fetchProviderRecord(location.origin + config.chainUrl, receipt.provider));
    }
    badge(await verifier.verify());
  };
  // One verification at a time; records that arrive meanwhile ask for one more pass, not one each.
  let verifying = false;
  let again = false;
  const reverify = async () => {
    if (verifying) return void (again = true);
    verifying = true;
    do {
      again = false;
      await verifyNow().catch((e) => {
        $("badge").textContent = "unverified";
        $("badge").title = e.message;
      });
    } while (again);
    verifying = false;
  };

  const input = $("input");
  $("form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    await client.append(lane, JSON.stringify({ from: me, text, at: Date.now() }));
  });
  input.disabled = $("send").disabled = false;

  const reader = client.read({ lanes: lane, start: 1n });
  reader.caughtUp.then(() => {
    document.body.dataset.joined = "true";
    reverify();
  });
  for await (const record of reader) {
    show(record);
    reverify();
  }
}

main().catch((e) => {
  $("status").textContent = `error: ${e.message}`;
  console.error(e);
});
