// The CBQS client: one WebSocket to a provider endpoint carrying one session,
// reopened automatically, and what applications do on it:
//
//   const client = await Client.connect(options);
//   const seq = await client.append(lane, "hello");            // durable once it resolves
//   for await (const r of client.read({ start: 1n })) ...       // a cursor reader
//   for await (const lease of client.consume({ lane, group })) await lease.ack();
//
// Requests are pipelined: any number may be outstanding, each a promise that
// settles with the broker's answer or a CbqsError carrying the §14 code.
// Reconnection (docs/protocol.md §J, the C++ SDK's rules): when the socket
// drops the client dials again with capped, jittered exponential backoff,
// opens a new session with the same grant, resubscribes every reader from the
// sequence after the last one it delivered and every consumer to its group,
// and sends again every append not yet answered (at-least-once). Other
// requests in flight fail with kind "disconnected"; leases of the lost
// session are void and their records come back to the group.
import { encodeTransient } from "./codec.js";
import { type Endpoint, checkAddress, isAddressLiteral, parseEndpoint } from "./dialing.js";
import { CbqsError, type ErrorName } from "./errors.js";
import { equalBytes, grantId, randomBytes, roomLaneId, signProof } from "./ids.js";
import { Consumer, type ConsumerOptions, Reader, type ReaderOptions, type Subscription } from "./subscriptions.js";
import { type Dialer, type Socket, browserDialer } from "./transport.js";
import {
  ClientFrame,
  type CheckpointReceiptV2,
  type GroupConfigV2,
  type LaneRecordV2,
  type LaneScope,
  type RequestBody,
  type ResponseBody,
  type RoomLaneV2,
  type ServerFrame,
  type StreamGrantV2,
  type StreamSettingsV2,
  type GroupCeilingsV2,
  type Kind,
  decodeServerFrame,
  limits,
} from "./wire.js";

export interface Backoff {
  initialMs: number;
  maxMs: number;
  /** Each wait is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
}

export type ClientEvent =
  | { type: "connected"; sessions: number; snapshotHeight: bigint }
  | { type: "disconnected"; reason: string }
  | { type: "backpressure"; subscription: "reader" | "consumer" };

export interface ClientOptions {
  /** A wss:// endpoint from the stream's provider record. */
  endpoint: string;
  grant: StreamGrantV2;
  /** The 32-byte Ed25519 seed of grant.holder_signing_key. */
  holderSeed: Uint8Array;
  /** §11.4 development opt-in: loopback and private destinations allowed. Off by default. */
  allowPrivateDestinations?: boolean;
  /** The platform's WebSocket: the browser's by default; nodeDialer() from @cowboy/cbqs/node in Node. */
  dialer?: Dialer;
  reconnect?: Partial<Backoff>;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Entropy for jitter (tests inject their own). */
  random?: () => number;
  onEvent?: (event: ClientEvent) => void;
}

export type GroupFields = Partial<Omit<GroupConfigV2, "group_id" | "lane_id" | "start">> & {
  lane_id: bigint;
  start?: GroupConfigV2["start"];
};

/** The defaults create_group fills (the C++ SDK's with_group_defaults). */
export function withGroupDefaults(g: GroupFields): GroupConfigV2 {
  const visibility = g.visibility_timeout_ms || 30_000n;
  const maxInFlight = g.max_in_flight || 1_000;
  return {
    group_id: 0n,
    lane_id: g.lane_id,
    start: g.start ?? { kind: "Head" },
    visibility_timeout_ms: visibility,
    max_visibility_ms: g.max_visibility_ms || (visibility > 30_000n ? visibility : 30_000n),
    max_in_flight: maxInFlight,
    max_in_flight_per_holder: g.max_in_flight_per_holder || Math.min(100, maxInFlight),
    max_attempts: g.max_attempts || 5,
    record_deadline_ms: g.record_deadline_ms || 3_600_000n,
  };
}

type Pending = {
  expect: ResponseBody["kind"] | "handshake";
  /** The answer: a frame (handshake), a response body, or an append's sequence. */
  resolve(answer: ServerFrame | ResponseBody | bigint): void;
  reject(e: CbqsError): void;
  timer?: ReturnType<typeof setTimeout>;
  /** An append: sent again after a reconnect until answered. */
  append?: { lane: bigint; payload: Uint8Array; epoch: number };
  /** A Subscribe: after a drop its subscription subscribes again instead. */
  subscribe?: true;
};

// The broker's refusals of OpenSession that a later attempt may not get.
const RETRYABLE: ReadonlySet<string> = new Set(["ChainStateStale", "SessionLimit", "Unavailable", "Internal", "ChallengeExpired"]);

const te = new TextEncoder();
const toPayload = (p: Uint8Array | string): Uint8Array => (typeof p === "string" ? te.encode(p) : p);

// The counter is the last 8 bytes of a request_id, as in the C++ SDK (src/cbqs/client/request_ids.h).
function requestId(n: number, id = new Uint8Array(32)): Uint8Array {
  const hi = Math.floor(n / 0x100000000);
  id[24] = hi >>> 24;
  id[25] = hi >>> 16;
  id[26] = hi >>> 8;
  id[27] = hi;
  id[28] = n >>> 24;
  id[29] = n >>> 16;
  id[30] = n >>> 8;
  id[31] = n;
  return id;
}
// Outgoing frames are encoded (copied) at once, so their request_id can be one shared buffer.
const outgoingId = new Uint8Array(32);

function requestNumber(id: Uint8Array): number {
  for (let i = 0; i < 24; ++i) if (id[i] !== 0) return -1;
  const hi = ((id[24]! << 24) | (id[25]! << 16) | (id[26]! << 8) | id[27]!) >>> 0;
  const lo = ((id[28]! << 24) | (id[29]! << 16) | (id[30]! << 8) | id[31]!) >>> 0;
  return hi * 0x100000000 + lo;
}

export class Client {
  private readonly endpoint: Endpoint;
  private readonly backoff: Backoff;
  private readonly dialer: Dialer;
  private socket: Socket | undefined;
  private sessionId: Uint8Array | undefined;
  private epoch = 0;
  private nextNumber = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly subscriptions = new Map<number, Subscription>();
  private waitingForSession: Array<() => void> = [];
  private flushScheduled = false;
  private closedWith: CbqsError | undefined;
  private reconnecting = false;
  private dropReason: string | undefined;
  readonly stats = { connects: 0, resentAppends: 0, subscribes: 0 };

  private constructor(readonly options: ClientOptions) {
    this.endpoint = parseEndpoint(options.endpoint);
    this.backoff = { initialMs: 50, maxMs: 5_000, jitter: 0.2, ...options.reconnect };
    this.dialer = options.dialer ?? browserDialer;
    if (options.holderSeed.length !== 32) throw new CbqsError("configuration", "holderSeed must be 32 bytes");
  }

  /** Dials and opens the first session; rejects if that fails within connectTimeoutMs (later drops are retried). */
  static async connect(options: ClientOptions): Promise<Client> {
    const client = new Client(options);
    await client.openSession();
    return client;
  }

  get grant(): StreamGrantV2 {
    return this.options.grant;
  }
  get connected(): boolean {
    return this.sessionId !== undefined;
  }

  // ---- producer ---------------------------------------------------------------
  /** Appends one record; resolves with its sequence once its batch is durable. Pipelined. */
  append(lane: bigint | number, payload: Uint8Array | string): Promise<bigint> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const append = { lane: BigInt(lane), payload: toPayload(payload), epoch: -1 };
    return new Promise<bigint>((resolve, reject) => {
      const n = this.nextNumber++;
      this.pending.set(n, { expect: "Appended", resolve: resolve as Pending["resolve"], reject, append });
      if (this.sessionId) this.sendAppend(n, append);
    });
  }

  /** Resolves once every append made so far is answered (their outcomes went to their callers). */
  async flush(): Promise<void> {
    const outstanding: Promise<unknown>[] = [];
    for (const [n, p] of this.pending) if (p.append) outstanding.push(this.settled(n));
    await Promise.all(outstanding);
  }

  // ---- lanes, groups, settings, checkpoints ---------------------------------------
  async createLane(): Promise<bigint> {
    return (await this.call({ kind: "CreateLane", room: null }, "LaneCreated")).lane_id;
  }
  /** Creates (or finds: idempotent for every member) a room lane; its id is roomLaneId(room) on every broker. */
  async openRoomLane(room: RoomLaneV2): Promise<bigint> {
    const { lane_id } = await this.call({ kind: "CreateLane", room }, "LaneCreated");
    if (lane_id !== roomLaneId(room)) throw new CbqsError("protocol", `the broker created room lane ${lane_id}, not ${roomLaneId(room)}`);
    return lane_id;
  }
  async closeLane(lane: bigint): Promise<void> {
    await this.call({ kind: "CloseLane", lane_id: lane }, "Ok");
  }
  /** Every lane the grant's scope shows, paging through ListLanes. */
  async listLanes(): Promise<LaneRecordV2[]> {
    const out: LaneRecordV2[] = [];
    let after: bigint | null = null;
    do {
      const page: Kind<ResponseBody, "Lanes"> = await this.call({ kind: "ListLanes", after_lane_id: after, limit: 1_000 }, "Lanes");
      out.push(...page.lanes);
      after = page.next_after_lane_id;
    } while (after !== null);
    return out;
  }
  async settings(): Promise<{ settings: StreamSettingsV2; group_ceilings: GroupCeilingsV2 }> {
    return this.call({ kind: "GetSettings" }, "Settings");
  }
  async updateSettings(settings: StreamSettingsV2): Promise<{ settings: StreamSettingsV2; group_ceilings: GroupCeilingsV2 }> {
    return this.call({ kind: "UpdateSettings", settings }, "Settings");
  }
  /** Creates a group; fields left out take withGroupDefaults. */
  async createGroup(fields: GroupFields): Promise<bigint> {
    return (await this.call({ kind: "CreateGroup", config: withGroupDefaults(fields) }, "GroupCreated")).group_id;
  }
  async getGroup(group: bigint): Promise<GroupConfigV2> {
    return (await this.call({ kind: "GetGroup", group_id: group }, "Group")).config;
  }
  async updateGroup(config: GroupConfigV2): Promise<GroupConfigV2> {
    return (await this.call({ kind: "UpdateGroup", config }, "Group")).config;
  }
  async deleteGroup(group: bigint): Promise<void> {
    await this.call({ kind: "DeleteGroup", group_id: group }, "Ok");
  }
  /** The receipt covering `sequence`, or the latest one. */
  async checkpoint(coveringSequence?: bigint): Promise<CheckpointReceiptV2> {
    return (await this.call({ kind: "GetCheckpoint", covering_sequence: coveringSequence ?? null }, "Checkpoint")).receipt;
  }

  // ---- subscriptions -----------------------------------------------------------------
  read(options: ReaderOptions = {}): Reader {
    const reader = new Reader(this, options);
    reader.start();
    return reader;
  }
  consume(options: ConsumerOptions): Consumer {
    const consumer = new Consumer(this, options);
    consumer.start();
    return consumer;
  }

  /** Ends the session (CloseSession) and the connection; everything outstanding fails with kind "closed". */
  async close(): Promise<void> {
    if (this.closedWith) return;
    if (this.sessionId) await this.call({ kind: "CloseSession" }, "Ok").catch(() => undefined);
    this.shutdown(new CbqsError("closed", "the client was closed"));
  }

  /** Drops the connection as if the network failed (tests, demos). */
  dropConnection(): void {
    const socket = this.socket;
    if (socket?.abort) socket.abort();
    else socket?.close();
  }

  // ---- internals: requests -------------------------------------------------------------
  /** Any request; resolves with the answer's body, which must be `expect`. */
  call<K extends ResponseBody["kind"]>(body: RequestBody, expect: K): Promise<Kind<ResponseBody, K>> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      const n = this.nextNumber++;
      this.register(n, { expect, resolve: resolve as Pending["resolve"], reject }, this.requestTimeout, `no answer to ${body.kind}`);
      this.sendInSession(n, body);
    });
  }

  /** @internal Opens a subscription; returns its number (its subscription_id is the Subscribe's request_id). */
  subscribe(sub: Subscription, body: Kind<RequestBody, "Subscribe">): number {
    const n = this.nextNumber++;
    this.subscriptions.set(n, sub);
    ++this.stats.subscribes;
    this.register(n, {
      subscribe: true,
      expect: body.source.kind === "Cursor" ? "CursorProgress" : "Ok",
      resolve: (b) => sub.subscribed(b as ResponseBody),
      reject: (e) => {
        this.subscriptions.delete(n);
        sub.failed(e);
      },
    });
    this.sendInSession(n, body);
    return n;
  }
  /** @internal */
  forget(subscription: number): void {
    this.subscriptions.delete(subscription);
  }
  /** @internal */
  subscriptionId = requestId;
  /** @internal Counts sessions; a lease belongs to the one it was delivered in. */
  get sessionEpoch(): number {
    return this.epoch;
  }

  private get requestTimeout(): number {
    return this.options.requestTimeoutMs ?? 10_000;
  }

  private settled(n: number): Promise<void> {
    return new Promise((resolve) => {
      const p = this.pending.get(n);
      if (!p) return resolve();
      const { resolve: ok, reject: fail } = p;
      p.resolve = (b) => (ok(b), resolve());
      p.reject = (e) => (fail(e), resolve());
    });
  }

  /** Keeps `p` until its answer, or until `timeoutMs` passes (then it fails with kind "timeout"). */
  private register(n: number, p: Pending, timeoutMs?: number, what = ""): void {
    if (timeoutMs !== undefined)
      p.timer = setTimeout(() => this.take(n)?.reject(new CbqsError("timeout", `${what} within ${timeoutMs} ms`)), timeoutMs);
    this.pending.set(n, p);
  }

  /** The pending request `n`, no longer pending (its timer stopped), or undefined. */
  private take(n: number): Pending | undefined {
    const p = this.pending.get(n);
    if (!p) return undefined;
    this.pending.delete(n);
    clearTimeout(p.timer);
    return p;
  }

  /** Sends request `n` now, or once a session is open if it is still pending then. */
  private sendInSession(n: number, body: RequestBody): void {
    const p = this.pending.get(n);
    const send = () => {
      if (this.pending.get(n) === p) this.sendRequest(n, body);
    };
    if (this.sessionId) send();
    else this.waitingForSession.push(send);
  }

  private sendAppend(n: number, append: NonNullable<Pending["append"]>): void {
    append.epoch = this.epoch;
    const body: RequestBody = { kind: "Append", append: { lane_id: append.lane, payload: append.payload } };
    this.sendRequest(n, body);
  }

  private sendRequest(n: number, body: RequestBody): void {
    this.send({ kind: "Request", request_id: requestId(n, outgoingId), session_id: this.sessionId!, body });
  }

  private send(frame: ClientFrame): void {
    const socket = this.socket;
    if (!socket) return;
    socket.send(encodeTransient(ClientFrame, frame));
    if (socket.flush && !this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => {
        this.flushScheduled = false;
        socket.flush!();
      });
    }
  }

  // ---- internals: the connection and its session -----------------------------------------
  private async openSession(): Promise<void> {
    const timeoutMs = this.options.connectTimeoutMs ?? 5_000;
    const allowPrivate = this.options.allowPrivateDestinations ?? false;
    // §11.4 for an address literal, on every platform; a dialer that resolves names checks what they resolve to.
    if (isAddressLiteral(this.endpoint.host)) checkAddress(this.endpoint.url, this.endpoint.host, allowPrivate);
    const socket = await this.dialer(
      this.endpoint,
      { allowPrivateDestinations: allowPrivate, maxMessageBytes: limits.maxFrameBytes, timeoutMs },
      { message: (m) => this.onMessage(socket, m), closed: (reason) => this.onClosed(socket, reason) },
    );
    if (this.closedWith) {
      socket.close();
      throw this.closedWith;
    }
    this.socket = socket;
    try {
      const challenge = (await this.handshake({ kind: "OpenSession", request_id: requestId(0), grant: this.grant }, timeoutMs)) as Kind<
        ServerFrame,
        "SessionChallenge"
      >;
      const proof = signProof(
        {
          chain_instance_id: this.grant.chain_instance_id,
          stream_id: this.grant.stream_id,
          grant_id: grantId(this.grant),
          session_id: challenge.session_id,
          challenge: challenge.challenge,
        },
        this.options.holderSeed,
      );
      const opened = (await this.handshake({ kind: "CompleteSession", request_id: requestId(0), proof }, timeoutMs)) as Kind<
        ServerFrame,
        "SessionOpened"
      >;
      if (!equalBytes(opened.session_id, challenge.session_id)) throw new CbqsError("protocol", "SessionOpened names another session");
      this.sessionOpened(opened);
    } catch (e) {
      socket.close();
      if (this.socket === socket) this.socket = undefined;
      throw e;
    }
  }

  private handshake(frame: ClientFrame, timeoutMs: number): Promise<ServerFrame> {
    const n = this.nextNumber++;
    (frame as { request_id: Uint8Array }).request_id = requestId(n);
    return new Promise((resolve, reject) => {
      this.register(n, { expect: "handshake", resolve: resolve as Pending["resolve"], reject }, timeoutMs, "no session");
      this.send(frame);
    });
  }

  private sessionOpened(opened: Kind<ServerFrame, "SessionOpened">): void {
    this.sessionId = opened.session_id.slice(); // kept: not a view into the message
    ++this.epoch;
    ++this.stats.connects;
    this.options.onEvent?.({ type: "connected", sessions: this.stats.connects, snapshotHeight: opened.snapshot_height });
    // Resubscribe first (a Subscribe still waiting to be sent is replaced, not sent too),
    // then appends in the order they were made, then whatever waited.
    for (const [n, sub] of [...this.subscriptions]) {
      this.subscriptions.delete(n);
      this.pending.delete(n);
      sub.resubscribe();
    }
    for (const [n, p] of this.pending)
      if (p.append && p.append.epoch !== this.epoch) {
        if (p.append.epoch >= 0) ++this.stats.resentAppends;
        this.sendAppend(n, p.append);
      }
    const waiting = this.waitingForSession;
    this.waitingForSession = [];
    for (const then of waiting) then();
  }

  private onMessage(socket: Socket, message: Uint8Array): void {
    if (socket !== this.socket) return;
    let frame: ServerFrame;
    try {
      frame = decodeServerFrame(message);
    } catch (e) {
      return this.drop(`a frame that does not decode: ${(e as Error).message}`);
    }
    switch (frame.kind) {
      case "SessionChallenge":
      case "SessionOpened":
        return this.answer(frame.request_id, frame);
      case "Response":
        return this.answer(frame.request_id, frame.body);
      case "Delivery": {
        if (!this.sessionId || !equalBytes(frame.session_id, this.sessionId)) return;
        const sub = this.subscriptions.get(requestNumber(frame.subscription_id));
        return sub?.delivered(frame, message.length);
      }
      case "DeliveryState": {
        const sub = this.subscriptions.get(requestNumber(frame.subscription_id));
        return sub?.creditShort(frame.state.needed_bytes);
      }
      case "Error":
        return this.onError(frame);
    }
  }

  private answer(id: Uint8Array, body: ServerFrame | ResponseBody): void {
    const n = requestNumber(id);
    const p = this.take(n);
    if (!p) {
      // The unsolicited second CursorProgress of a cursor subscription (§L).
      if (body.kind === "CursorProgress") this.subscriptions.get(n)?.progressed(body.scanned_through);
      return;
    }
    const expected = p.expect === "handshake" ? body.kind === "SessionChallenge" || body.kind === "SessionOpened" : body.kind === p.expect;
    if (expected) p.resolve(p.append ? (body as Kind<ResponseBody, "Appended">).sequence : body);
    else p.reject(new CbqsError("protocol", `the broker answered ${body.kind} where ${p.expect} was due`));
  }

  private onError(frame: Kind<ServerFrame, "Error">): void {
    const message = new TextDecoder().decode(frame.message);
    const error = new CbqsError("broker", message, frame.code, frame.details);
    // Ends the session (details = its id) or the connection (FrameTooLarge): start over.
    if (frame.request_id === null) return this.drop(error.message);
    const n = requestNumber(frame.request_id);
    const p = this.take(n);
    if (p) return p.reject(error);
    const sub = this.subscriptions.get(n);
    if (!sub) return;
    if (error.is("Backpressure")) return this.options.onEvent?.({ type: "backpressure", subscription: sub.role });
    this.subscriptions.delete(n);
    sub.failed(error);
  }

  /** Ends the connection for `reason`, which onClosed then reports (once) and recovers from. */
  private drop(reason: string): void {
    this.dropReason = reason;
    this.dropConnection();
  }

  private onClosed(socket: Socket, closed: string): void {
    if (socket !== this.socket) return;
    const reason = this.dropReason ?? closed;
    this.dropReason = undefined;
    this.socket = undefined;
    this.sessionId = undefined;
    if (this.closedWith) return;
    this.options.onEvent?.({ type: "disconnected", reason });
    const lost = new CbqsError("disconnected", `the connection dropped (${reason}) before the answer came`);
    for (const [n, p] of this.pending) {
      if (p.append) continue;
      this.take(n);
      if (!p.subscribe) p.reject(lost);
    }
    for (const sub of this.subscriptions.values()) sub.sessionLost();
    // Before the first session, connect() reports the failure; nothing is retried behind its back.
    if (this.epoch > 0) void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    const random = this.options.random ?? Math.random;
    for (let attempt = 0; !this.closedWith; ++attempt) {
      const base = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(attempt, 30));
      const wait = base * (1 - this.backoff.jitter + 2 * this.backoff.jitter * random());
      await new Promise((r) => setTimeout(r, wait));
      if (this.closedWith) break;
      try {
        await this.openSession();
        break;
      } catch (e) {
        const err = e as CbqsError;
        if (err.kind === "broker" && !RETRYABLE.has(err.codeName ?? "")) {
          this.shutdown(err);
          break;
        }
        this.options.onEvent?.({ type: "disconnected", reason: err.message });
      }
    }
    this.reconnecting = false;
  }

  private shutdown(error: CbqsError): void {
    this.closedWith = error;
    const socket = this.socket;
    this.socket = undefined;
    this.sessionId = undefined;
    socket?.close();
    for (const n of [...this.pending.keys()]) this.take(n)!.reject(error);
    for (const sub of this.subscriptions.values()) sub.failed(error);
    this.subscriptions.clear();
    this.waitingForSession = [];
  }
}

export type { ErrorName };
export type { ConsumerOptions, ReaderOptions, Record } from "./subscriptions.js";
