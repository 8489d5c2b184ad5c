// Readers and consumers: what a Client's read() and consume() return. Each is
// a Stream, a queue of delivered items handed to whoever awaits next(), with
// §K credit given back to the broker as items are taken, and resubscribed by
// the client after a reconnect (docs/protocol.md §J): a reader from the
// sequence after the last it delivered, a consumer to its group.
import type { Client } from "./client.js";
import { CbqsError } from "./errors.js";
import { type Kind, type LaneScope, type RequestBody, type ResponseBody, type ServerFrame, limits } from "./wire.js";

export interface Record {
  sequence: bigint;
  laneId: bigint;
  payload: Uint8Array;
}

export interface ReaderOptions {
  /** Lanes to read: a lane id, a list of ids, or every lane the grant shows (default). */
  lanes?: bigint | bigint[] | LaneScope;
  /** First sequence to deliver, or "head" for records appended from now on (default). */
  start?: bigint | "head";
  /** Bytes of Delivery frames the broker may send ahead of what the caller has taken (§K). */
  windowBytes?: number;
}

export interface ConsumerOptions {
  lane: bigint;
  group: bigint;
  windowBytes?: number;
  /** Extend every unresolved lease at half its visibility timeout (up to the group's max_visibility_ms). */
  autoExtend?: boolean;
}


/** What the client calls on a reader or consumer. */
export interface Subscription {
  readonly role: "reader" | "consumer";
  subscribed(answer: ResponseBody): void;
  delivered(d: Kind<ServerFrame, "Delivery">, frameBytes: number): void;
  progressed(scannedThrough: bigint): void;
  creditShort(neededBytes: number): void;
  /** The connection dropped; resubscribe() follows once a new session is open. */
  sessionLost(): void;
  resubscribe(): void;
  failed(e: CbqsError): void;
}

/** A queue of items handed to whoever awaits next(), with §K credit given back as items are taken. */
abstract class Stream<T> implements Subscription, AsyncIterable<T> {
  abstract readonly role: "reader" | "consumer";
  protected number = 0;
  /** Buffered items, each with the subscription it came on: only the current one gets credit back. */
  protected items: Array<{ item: T; bytes: number; on: number }> = [];
  private waiters: Array<{ resolve(v: T | null): void; reject(e: CbqsError): void; timer?: ReturnType<typeof setTimeout> }> = [];
  private error: CbqsError | undefined;
  private consumedBytes = 0;
  protected readonly window: number;

  constructor(
    protected readonly client: Client,
    windowBytes: number | undefined,
  ) {
    this.window = Math.min(windowBytes ?? 1 << 20, limits.maxCreditBytes);
  }

  protected abstract subscribeBody(): Kind<RequestBody, "Subscribe">;
  /** @internal */
  abstract delivered(d: Kind<ServerFrame, "Delivery">, frameBytes: number): void;

  /** @internal */
  start(): void {
    this.number = this.client.subscribe(this, this.subscribeBody());
  }
  /** @internal */
  resubscribe(): void {
    if (this.error) return;
    this.consumedBytes = 0;
    this.start();
  }
  /** @internal */
  subscribed(_answer: ResponseBody): void {}
  /** @internal */
  progressed(_scannedThrough: bigint): void {}
  /** @internal */
  sessionLost(): void {}

  protected push(item: T, bytes: number): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve(item);
      this.giveBack(bytes);
    } else this.items.push({ item, bytes, on: this.number });
  }

  // Credit goes back in half-window steps, so AddCredit costs one request per half window.
  private giveBack(bytes: number): void {
    this.consumedBytes += bytes;
    if (this.consumedBytes * 2 < this.window) return;
    const credit = this.consumedBytes;
    this.consumedBytes = 0;
    this.addCredit(credit);
  }

  // An AddCredit that fails (the session is gone) costs nothing: a resubscription starts with a full window.
  private addCredit(bytes: number): void {
    this.client.call({ kind: "AddCredit", subscription_id: this.client.subscriptionId(this.number), credit_bytes: BigInt(bytes) }, "Ok").catch(() => undefined);
  }

  /** @internal */
  creditShort(neededBytes: number): void {
    // A record bigger than the window: lend what it needs once the caller has taken everything before it.
    if (this.items.length === 0 && neededBytes > this.window / 2) this.addCredit(neededBytes);
  }

  /** @internal */
  failed(e: CbqsError): void {
    this.error ??= e;
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(e);
    }
    this.waiters = [];
  }

  /** The next item, or null if none arrived within `timeoutMs` (forever when omitted). */
  next(timeoutMs?: number): Promise<T | null> {
    const first = this.items.shift();
    if (first) {
      if (first.on === this.number) this.giveBack(first.bytes);
      return Promise.resolve(first.item);
    }
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      const waiter: (typeof this.waiters)[number] = { resolve, reject };
      this.waiters.push(waiter);
      if (timeoutMs !== undefined)
        waiter.timer = setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) {
            this.waiters.splice(i, 1);
            resolve(null);
          }
        }, timeoutMs);
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      try {
        const item = await this.next();
        if (item === null) return;
        yield item;
      } catch (e) {
        if ((e as CbqsError).kind === "closed") return;
        throw e;
      }
    }
  }

  /** Unsubscribes; a pending next() and the iterator end. */
  close(): void {
    if (this.error) return;
    this.client.forget(this.number);
    this.client.call({ kind: "Unsubscribe", subscription_id: this.client.subscriptionId(this.number) }, "Ok").catch(() => undefined);
    this.failed(new CbqsError("closed", `the ${this.role} was closed`));
  }
}

function laneScope(lanes: ReaderOptions["lanes"]): LaneScope {
  if (lanes === undefined) return { kind: "Any" };
  if (typeof lanes === "bigint") return { kind: "Exact", lane_id: lanes };
  if (Array.isArray(lanes)) {
    const ids = [...new Set(lanes)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return ids.length === 1 ? { kind: "Exact", lane_id: ids[0]! } : { kind: "Set", lane_ids: ids };
  }
  return lanes;
}

/** A cursor subscription: records in sequence order, resumed after a reconnect at the one after the last delivered. */
export class Reader extends Stream<Record> {
  readonly role = "reader";
  private readonly scope: LaneScope;
  /** Every record through this sequence was delivered or is outside the reader's lanes. */
  private position: bigint;
  private replayHead: bigint | undefined;
  private caughtUpResolve!: (head: bigint) => void;
  private caughtUpReject!: (e: CbqsError) => void;
  /** Resolves with the head sequence once the replay has caught up with it (§L); rejects if the reader fails first. */
  readonly caughtUp: Promise<bigint>;

  constructor(client: Client, private readonly options: ReaderOptions) {
    super(client, options.windowBytes);
    this.scope = laneScope(options.lanes);
    this.position = typeof options.start === "bigint" && options.start > 0n ? options.start - 1n : 0n;
    this.caughtUp = new Promise((resolve, reject) => {
      this.caughtUpResolve = resolve;
      this.caughtUpReject = reject;
    });
    this.caughtUp.catch(() => undefined);
  }

  /** The sequence the reader has reached: a reconnect resumes after it. */
  get lastSequence(): bigint {
    return this.position;
  }

  protected subscribeBody(): Kind<RequestBody, "Subscribe"> {
    const resuming = this.position > 0n || typeof this.options.start === "bigint";
    return {
      kind: "Subscribe",
      source: {
        kind: "Cursor",
        lane_scope: this.scope,
        start: resuming ? { kind: "At", sequence: this.position + 1n } : { kind: "Head" },
      },
      initial_credit_bytes: BigInt(this.window),
    };
  }

  // The first CursorProgress says where the subscription starts: a reader
  // from the head resumes after it, not at a later head, so nothing appended
  // while it reconnects is skipped.
  /** @internal */
  override subscribed(answer: ResponseBody): void {
    if (answer.kind === "CursorProgress" && answer.scanned_through > this.position) this.position = answer.scanned_through;
  }

  /** @internal */
  override progressed(scannedThrough: bigint): void {
    if (this.replayHead === undefined) {
      this.replayHead = scannedThrough;
      this.caughtUpResolve(scannedThrough);
    }
  }

  /** @internal */
  override failed(e: CbqsError): void {
    super.failed(e);
    this.caughtUpReject(e);
  }

  /** @internal */
  delivered(d: Kind<ServerFrame, "Delivery">, frameBytes: number): void {
    if (d.sequence <= this.position) return; // a resubscription never repeats, but be sure
    this.position = d.sequence;
    this.push({ sequence: d.sequence, laneId: d.header.lane_id, payload: d.payload }, frameBytes);
  }
}

/** A record leased to this consumer; resolve it with ack, nack, reject or extend. */
export class Lease {
  private extendTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly record: Record,
    readonly handle: Uint8Array,
    private readonly consumer: Consumer,
    private readonly subscription: number,
    readonly epoch: number,
  ) {}

  ack(): Promise<void> {
    return this.resolve("Ack");
  }
  nack(): Promise<void> {
    return this.resolve("Nack");
  }
  reject(): Promise<void> {
    return this.resolve("Reject");
  }
  /** New expiry = min(now + ms, issued + max_visibility_ms); 0 ends the lease now. */
  extend(ms: number): Promise<void> {
    return this.consumer.act(this, { kind: "Extend", ...this.names(), extend_ms: BigInt(ms) });
  }

  /** @internal */
  autoExtend(everyMs: number): void {
    this.extendTimer = setTimeout(() => {
      this.extend(everyMs * 2).then(
        () => this.autoExtend(everyMs),
        () => undefined,
      );
    }, everyMs);
  }

  private resolve(kind: "Ack" | "Nack" | "Reject"): Promise<void> {
    clearTimeout(this.extendTimer);
    return this.consumer.act(this, { kind, ...this.names() });
  }
  private names() {
    return { subscription_id: this.consumer.client.subscriptionId(this.subscription), lease: this.handle };
  }
}

/** A competing consumer of a group (§O). */
export class Consumer extends Stream<Lease> {
  readonly role = "consumer";
  private visibilityMs: number | undefined;

  constructor(
    override readonly client: Client,
    private readonly options: ConsumerOptions,
  ) {
    super(client, options.windowBytes);
  }

  /** @internal */
  override start(): void {
    if (this.options.autoExtend && this.visibilityMs === undefined) {
      this.client.getGroup(this.options.group).then(
        (g) => {
          this.visibilityMs = Number(g.visibility_timeout_ms);
          super.start();
        },
        (e: CbqsError) => this.failed(e),
      );
    } else super.start();
  }

  protected subscribeBody(): Kind<RequestBody, "Subscribe"> {
    return {
      kind: "Subscribe",
      source: { kind: "Group", lane_id: this.options.lane, group_id: this.options.group },
      initial_credit_bytes: BigInt(this.window),
    };
  }

  /** @internal */
  delivered(d: Kind<ServerFrame, "Delivery">, frameBytes: number): void {
    if (!d.lease) return;
    const handle = d.lease.slice(); // kept with the lease: not a view into the message
    const lease = new Lease({ sequence: d.sequence, laneId: d.header.lane_id, payload: d.payload }, handle, this, this.number, this.client.sessionEpoch);
    if (this.visibilityMs) lease.autoExtend(this.visibilityMs / 2);
    this.push(lease, frameBytes);
  }

  // Leases of the lost session are void (their records come back to the group): none is handed out.
  /** @internal */
  override sessionLost(): void {
    this.items = [];
  }

  /** @internal */
  act(lease: Lease, body: RequestBody): Promise<void> {
    if (lease.epoch !== this.client.sessionEpoch)
      return Promise.reject(new CbqsError("disconnected", "the lease's session ended; its record comes back to the group"));
    return this.client.call(body, "Ok").then(() => undefined);
  }
}
