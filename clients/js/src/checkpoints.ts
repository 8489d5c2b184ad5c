// §10 checkpoint verification: one receipt against the provider record, or
// the whole chain from sequence 1 with the records themselves (the C++ twin is
// src/cbqs/sdk/checkpoints.cc). Three verdicts: valid; invalid (a bad
// signature, a broken link, a record that does not match its receipt's
// digest); unverifiable (no key the provider record resolves, or records this
// grant cannot see).
import type { Client } from "./client.js";
import type { Reader } from "./subscriptions.js";
import { decode } from "./codec.js";
import { CbqsError } from "./errors.js";
import { type Verdict, checkpointId, equalBytes, fromHex, recordDigest, recordsDigest, toHex, verifyCheckpoint } from "./ids.js";
import { type CheckpointReceiptV2, ProviderRecordV2 } from "./wire.js";

export interface ChainReport {
  verdict: Verdict;
  receipts: number; // receipts checked
  lastSequence: bigint; // records checked: 1..lastSequence
  problem?: string; // for invalid / unverifiable: what and where
}

const range = (r: CheckpointReceiptV2) => `receipt [${r.first_sequence}, ${r.last_sequence}]`;

// The link between a receipt and the one before it (§10); null when it holds.
function brokenLink(r: CheckpointReceiptV2, before: CheckpointReceiptV2 | undefined): string | null {
  const first = before ? before.last_sequence + 1n : 1n;
  const previous = before ? checkpointId(before) : new Uint8Array(32);
  if (r.first_sequence !== first) return `first_sequence is not ${first}`;
  if (r.last_sequence < r.first_sequence) return "last_sequence is below first_sequence";
  if (!equalBytes(r.previous_checkpoint, previous)) return "previous_checkpoint does not name the receipt before it";
  if (before && r.snapshot_height < before.snapshot_height) return "snapshot_height went down";
  if (before && r.committed_at_ms < before.committed_at_ms) return "committed_at_ms went down";
  return null;
}

/**
 * Verifies the stream's receipts in order, each signature, each link and each
 * records_digest against the records replayed through one reader, and keeps
 * its place: every call to verify() continues from the last receipt checked
 * up to the latest one, so a page can keep a "verified through #n" badge live.
 */
export class ChainVerifier {
  private reader: Reader | undefined;
  private before: CheckpointReceiptV2 | undefined;
  private report: ChainReport = { verdict: "valid", receipts: 0, lastSequence: 0n };

  constructor(
    private readonly client: Client,
    private readonly provider: ProviderRecordV2,
    private readonly recordTimeoutMs = 10_000,
  ) {}

  async verify(): Promise<ChainReport> {
    if (this.report.verdict !== "valid") return this.report;
    if (this.client.grant.lane_scope.kind !== "Any")
      return this.stop("unverifiable", "the grant sees only some lanes, so records_digest cannot be recomputed");
    let latest: CheckpointReceiptV2;
    try {
      latest = await this.client.checkpoint();
    } catch (e) {
      if (e instanceof CbqsError && e.is("CheckpointNotFound")) return this.report; // nothing committed yet
      throw e;
    }
    this.reader ??= this.client.read({ start: 1n, windowBytes: 4 << 20 });
    while (this.report.lastSequence < latest.last_sequence) {
      const r = await this.client.checkpoint(this.report.lastSequence + 1n);
      const verdict = verifyCheckpoint(r, this.provider);
      if (verdict !== "valid")
        return this.stop(
          verdict,
          `${range(r)}: ${verdict === "invalid" ? "the signature (or provider) does not verify" : "no signing key of the provider record covers its snapshot_height"}`,
        );
      const broken = brokenLink(r, this.before);
      if (broken) return this.stop("invalid", `${range(r)}: ${broken}`);
      const digests: Uint8Array[] = [];
      for (let seq = r.first_sequence; seq <= r.last_sequence; ++seq) {
        const record = await this.reader.next(this.recordTimeoutMs);
        if (!record) throw new CbqsError("timeout", `record ${seq} did not arrive`);
        if (record.sequence !== seq) return this.stop("invalid", `${range(r)}: record ${seq} is missing`);
        digests.push(recordDigest({ stream_id: r.stream_id, lane_id: record.laneId }, record.payload));
      }
      if (!equalBytes(recordsDigest(digests), r.records_digest))
        return this.stop("invalid", `${range(r)}: records_digest does not match its records`);
      this.before = r;
      this.report = { verdict: "valid", receipts: this.report.receipts + 1, lastSequence: r.last_sequence };
    }
    return this.report;
  }

  close(): void {
    this.reader?.close();
  }

  private stop(verdict: Verdict, problem: string): ChainReport {
    this.report = { ...this.report, verdict, problem };
    this.close();
    return this.report;
  }
}

/** Verifies every receipt from sequence 1 to the latest one (what `cbqs checkpoint verify` does). */
export async function verifyChain(client: Client, provider: ProviderRecordV2): Promise<ChainReport> {
  const verifier = new ChainVerifier(client, provider);
  try {
    return await verifier.verify();
  } finally {
    verifier.close();
  }
}

/**
 * A provider record from a chain node's HTTP API (the devchain's
 * GET /v1/providers/<address> answers its canonical hex). Decoded strictly.
 */
export async function fetchProviderRecord(chainUrl: string, provider: Uint8Array): Promise<ProviderRecordV2> {
  const url = `${chainUrl.replace(/\/$/, "")}/v1/providers/0x${toHex(provider)}`;
  const res = await fetch(url);
  if (!res.ok) throw new CbqsError("configuration", `${url} answered ${res.status}`);
  const body = (await res.json()) as { hex?: string };
  if (typeof body.hex !== "string") throw new CbqsError("protocol", `${url} holds no canonical record`);
  const record = decode(ProviderRecordV2, fromHex(body.hex));
  if (!equalBytes(record.provider, provider)) throw new CbqsError("protocol", `${url} answered another provider's record`);
  return record;
}
