// A real `cbqsd --dev` for the end-to-end and browser tests: its own data
// directory, ports picked by the kernel on 127.0.0.1, stopped by the test.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { repo } from "./fixtures.js";

export const cbqsdPath = process.env.CBQSD ?? join(repo, "build", "bin", "cbqsd");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** dev-endpoints.json, written by cbqsd --dev once it listens. */
export interface DevEndpoints {
  endpoint: string;
  admin: string;
  chain: string;
}

/** The three listeners' ports; passed back to start() to restart on the same addresses. */
export interface DevPorts {
  wss: number;
  admin: number;
  chain: number;
}

export class DevBroker {
  readonly dataDir: string;
  readonly child: ChildProcess;
  log: string;
  endpoints!: DevEndpoints;

  constructor(dataDir: string, child: ChildProcess) {
    this.dataDir = dataDir;
    this.child = child;
    this.log = "";
  }

  /** Starts cbqsd --dev; `ports` keeps a restarted broker on the same addresses. */
  static async start({ dataDir = mkdtempSync(join(tmpdir(), "cbqs-js-")), ports }: { dataDir?: string; ports?: DevPorts } = {}): Promise<DevBroker> {
    const endpoints = join(dataDir, "dev-endpoints.json");
    rmSync(endpoints, { force: true });
    const listen = (p: number | undefined) => `127.0.0.1:${p ?? 0}`;
    const child = spawn(
      cbqsdPath,
      ["--dev", "--data-dir", dataDir, "--listen", listen(ports?.wss), "--admin-listen", listen(ports?.admin), "--chain-listen", listen(ports?.chain)],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CBQS_HOME: dataDir } },
    );
    const broker = new DevBroker(dataDir, child);
    child.stdout.on("data", (d: Buffer) => (broker.log += d));
    child.stderr.on("data", (d: Buffer) => (broker.log += d));
    for (let i = 0; i < 300; ++i) {
      if (existsSync(endpoints)) {
        broker.endpoints = JSON.parse(readFileSync(endpoints, "utf8")) as DevEndpoints;
        return broker;
      }
      if (child.exitCode !== null) break;
      await sleep(100);
    }
    child.kill("SIGKILL");
    throw new Error(`cbqsd --dev did not start (${cbqsdPath}):\n${broker.log}`);
  }

  get ports(): DevPorts {
    const port = (url: string) => Number(new URL(url).port);
    return { wss: port(this.endpoints.endpoint), admin: port(this.endpoints.admin), chain: port(this.endpoints.chain) };
  }

  async metrics(): Promise<string> {
    return (await fetch(`${this.endpoints.admin}/metrics`)).text();
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.kill(signal);
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
