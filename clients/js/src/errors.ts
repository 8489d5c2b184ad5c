// Typed errors: the §14 codes an Error frame carries (docs/protocol.md §D),
// and the client's own kinds. The table mirrors include/cbqs/wire/errors.h
// row for row; test/unit/errors.test.ts fails when the two differ.

/** [code, name, meaning] */
export const errorTable = [
  [100, "Malformed", "the frame failed strict decoding"],
  [101, "UnsupportedVersion", "a version byte other than 2"],
  [102, "FrameTooLarge", "the frame exceeds the connection's frame cap"],
  [200, "UnknownSession", "the session_id is not open on this connection"],
  [201, "SessionLimit", "cbqs.max_sessions_per_connection pairs already held"],
  [202, "ChallengeUnknown", "no such (session_id, challenge) pending on this connection"],
  [203, "ChallengeExpired", "the proof arrived after the challenge expired"],
  [204, "ChainStateStale", "the broker's snapshot is older than cbqs.max_snapshot_age_blocks"],
  [205, "ProofMismatch", "proof grant_id, stream_id or chain_instance_id differ from the grant"],
  [206, "BadProofSignature", "the proof signature does not verify under the holder key"],
  [300, "WrongChain", "the grant names another chain_instance_id"],
  [301, "UnknownStream", "the stream is unknown or not served by this provider"],
  [302, "StreamClosed", "the stream is Closed"],
  [303, "GenerationMismatch", "authorization_generation differs from the snapshot"],
  [304, "BadGrantSignature", "the admin-key signature does not verify"],
  [305, "GrantNotYetValid", "not_before_ms > now + cbqs.max_clock_skew_ms"],
  [306, "GrantExpired", "now > expires_at_ms"],
  [307, "GrantTtlExceeded", "not_before_ms >= expires_at_ms or the lifetime exceeds the cap"],
  [308, "InvalidLaneScope", "a Set scope that is not 2..=max sorted unique ids"],
  [309, "InvalidVerbs", "a verb bit above 7 is set"],
  [400, "VerbNotGranted", "the grant lacks the verb this request needs"],
  [401, "LaneScopeTooNarrow", "the request needs a lane scope of Any"],
  [402, "GroupScopeTooNarrow", "the request needs a group scope of Any"],
  [403, "LaneNotInScope", "the lane is outside the grant's lane scope"],
  [404, "GroupNotInScope", "the group is outside the grant's group scope"],
  [405, "AccountInsolvent", "the stream's account fails the §6.2 solvency predicate"],
  [406, "NotLeaseHolder", "the lease was issued to another holder"],
  [500, "InvalidRequest", "a field value the request cannot carry"],
  [501, "UnknownLane", "no such lane"],
  [502, "LaneClosed", "the lane is Closed"],
  [503, "LaneLimit", "cbqs.max_lanes_per_stream reached"],
  [504, "LaneIdConflict", "a derived room-lane id collides with another lane"],
  [505, "UnknownGroup", "no such group"],
  [506, "GroupLimit", "cbqs.max_groups_per_stream reached"],
  [507, "InvalidGroupConfig", "a group field is zero or above its ceiling"],
  [508, "ImmutableField", "UpdateGroup changes an immutable field"],
  [509, "InvalidSettings", "a settings field is zero or above its ceiling"],
  [510, "InvalidPageLimit", "limit outside 1..=cbqs.max_lane_list_page"],
  [511, "UnknownSubscription", "no such subscription in this session"],
  [512, "SubscriptionExists", "the subscription_id is already open in this session"],
  [513, "LeaseStale", "the lease is unknown, expired or already resolved"],
  [514, "DeliveryTerminal", "the delivery cycle is ACKED or EXPIRED"],
  [515, "CheckpointNotFound", "no retained checkpoint matches"],
  [516, "SequenceNotRetained", "the sequence is below the retention floor"],
  [600, "MessageTooLarge", "the payload exceeds the effective max_message_bytes"],
  [601, "RateLimited", "the effective append rate is exhausted"],
  [602, "Backpressure", "max_in_flight or max_in_flight_per_holder reached"],
  [603, "CreditOverflow", "the subscription's credit would exceed its cap"],
  [604, "SlowConsumer", "no credit was added within cbqs.slow_consumer_timeout_ms"],
  [700, "Unavailable", "the broker cannot serve this now (shutting down or storage failure)"],
  [701, "Internal", "an internal failure; nothing was applied"],
] as const;

export type ErrorName = (typeof errorTable)[number][1];
const byCode = new Map<number, readonly [number, string, string]>(errorTable.map((row) => [row[0], row]));
const byName = new Map<string, number>(errorTable.map((row) => [row[1], row[0]]));

/** The §14 name of a code ("LeaseStale"), or undefined for a code the table lacks. */
export const errorName = (code: number): ErrorName | undefined => byCode.get(code)?.[1] as ErrorName | undefined;
export const errorCode = (name: ErrorName): number => byName.get(name)!;

export type ErrorKind =
  | "broker" // the broker refused: `code` and `codeName` are the §14 code
  | "disconnected" // the connection dropped before the answer came
  | "timeout" // no answer (or no connection) within the time allowed
  | "refused_destination" // §11.4: the endpoint resolves to a refused address
  | "configuration" // an unusable grant, key, certificate or endpoint
  | "protocol" // the broker sent something the protocol does not allow here
  | "closed"; // the client, reader or consumer was closed

export class CbqsError extends Error {
  readonly codeName: ErrorName | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly code = 0,
    readonly details: Uint8Array = new Uint8Array(0),
  ) {
    const name = kind === "broker" ? errorName(code) : undefined;
    super(kind === "broker" ? `${name ?? "unknown code"} (${code}): ${message}` : `${kind}: ${message}`);
    this.name = "CbqsError";
    this.codeName = name;
  }

  /** True when the broker refused with this §14 code. */
  is(name: ErrorName): boolean {
    return this.kind === "broker" && this.codeName === name;
  }

  /** RateLimited carries the milliseconds to wait as a u64 in `details`. */
  get retryAfterMs(): number | undefined {
    if (!this.is("RateLimited") || this.details.length !== 8) return undefined;
    return Number(new DataView(this.details.buffer, this.details.byteOffset, 8).getBigUint64(0));
  }
}
