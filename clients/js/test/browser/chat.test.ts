// The chat page in real headless Chromium (Debian's /usr/bin/chromium, driven
// by playwright-core) against a real cbqsd --dev: two tabs join a room, a
// message sent in one appears in the other, a tab that joins later gets the
// history, and every tab shows the checkpoint chain verified. The screenshot
// is kept in test-results/.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { type Browser, type Page, chromium } from "playwright-core";

import { type ChatServer, startChatServer } from "../../demo/server.mjs";
import { DevBroker } from "../broker.js";
import { repo } from "../fixtures.js";

const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const results = join(repo, "clients", "js", "test-results");
let broker: DevBroker | undefined, chat: ChatServer | undefined, browser: Browser | undefined;

before(async () => {
  broker = await DevBroker.start();
  chat = await startChatServer({ devDir: broker.dataDir });
  browser = await chromium.launch({
    executablePath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Trust exactly the dev broker's self-signed certificate, nothing else.
      `--ignore-certificate-errors-spki-list=${chat.spki}`,
    ],
  });
});
after(async () => {
  await browser?.close();
  await chat?.close();
  await broker?.remove();
});

async function open(name: string): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 640, height: 420 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${chat!.url}?room=lobby&name=${name}`);
  await page.waitForSelector("body[data-joined=true]", { timeout: 15_000 }).catch(async () => {
    throw new Error(`${name} did not join: ${await page.textContent("#status")} ${errors.join("; ")}`);
  });
  return page;
}

const texts = (page: Page) => page.$$eval("#messages li .text", (els) => els.map((e) => e.textContent));

async function say(page: Page, text: string): Promise<void> {
  await page.fill("#input", text);
  await page.click("#send");
}

test("two tabs chat live, a late joiner gets the history, and each shows the chain verified", async () => {
  const alice = await open("alice");
  const bob = await open("bob");
  await say(alice, "hello from alice");
  await bob.waitForSelector("#messages li:has-text('hello from alice')", { timeout: 10_000 });
  await say(bob, "hi alice, bob here");
  await alice.waitForSelector("#messages li:has-text('hi alice, bob here')", { timeout: 10_000 });
  assert.deepEqual(await texts(alice), ["hello from alice", "hi alice, bob here"]);
  assert.deepEqual(await texts(bob), ["hello from alice", "hi alice, bob here"]);

  const carol = await open("carol");
  assert.deepEqual(await texts(carol), ["hello from alice", "hi alice, bob here"], "history replayed on join");

  // The badge: every receipt through the newest message verified against the provider record.
  const last = await alice.$eval("#messages li:last-child", (li) => (li as HTMLElement).dataset.sequence);
  for (const page of [alice, bob, carol]) {
    await page.waitForFunction((seq: string) => {
      const b = document.getElementById("badge")!;
      return b.className === "valid" && BigInt(b.textContent.replace(/\D+/g, "")) >= BigInt(seq);
    }, last!, { timeout: 15_000 });
  }
  mkdirSync(results, { recursive: true });
  const shot = join(results, "chat-two-tabs.png");
  await bob.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);
  assert.match((await bob.textContent("#badge"))!, /^verified through #\d+$/);
});
