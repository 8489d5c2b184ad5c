// CIP-39 wire objects and frames (docs/protocol.md §A-§C), one field list per
// type in the seed's order; the C++ twin is src/cbqs/wire/codec.cc. Field
// names are the protocol's own (snake_case) so that each reads against the
// seed; u64 and u128 are bigint, smaller integers number, byte strings
// Uint8Array, unions { kind: "Variant", ...fields }.
import {
  type Codec,
  DecodeError,
  type Infer,
  bool,
  bytes,
  constant,
  decode,
  fixed,
  option,
  prefixed,
  struct,
  u128,
  u16,
  u32,
  u64,
  union,
  vec,
} from "./codec.js";

/** Decode caps: the Maximum column of the §15 parameter that bounds each field (§F). */
export const limits = {
  version: 2,
  maxFrameBytes: 16_778_240,
  maxPreSessionFrameBytes: 16 * 1024,
  maxMessageBytes: 16_777_216,
  maxLaneIdsPerGrant: 256,
  maxProviderEndpoints: 8,
  maxProviderEndpointUriBytes: 256,
  maxErrorMessageBytes: 1_024,
  maxErrorDetailsBytes: 4_096,
  maxLaneListPage: 10_000,
  maxCreditBytes: 1_073_741_824,
} as const;

const version = constant(limits.version, "bad_version");
export const bytes32 = fixed(32);
export const address = fixed(20);

/** SigningPublicKey = alg u8 (Ed25519 = 1) || 32 key bytes; the value is the key. */
const ed25519 = constant(1, "unknown_variant");
export const signingPublicKey = prefixed(ed25519, fixed(32));
/** Signature = alg u8 (Ed25519 = 1) || 64 signature bytes; the value is the 64 bytes. */
export const signature = prefixed(ed25519, fixed(64));

/** Active = 1 | Closed = 2 */
export type Status = "Active" | "Closed";
const status: Codec<Status> = {
  put: (w, v) => w.u8(v === "Active" ? 1 : 2),
  get: (r) => {
    const s = r.u8();
    if (s !== 1 && s !== 2) r.fail("unknown_variant");
    return s === 1 ? "Active" : "Closed";
  },
};

const endpoints = vec(bytes(limits.maxProviderEndpointUriBytes), limits.maxProviderEndpoints, 4);
const none = struct({});

// ---- chain records (§4) --------------------------------------------------------
export const ProviderRecordV2 = struct({
  version,
  chain_instance_id: bytes32,
  provider: address,
  signing_key: signingPublicKey,
  signing_key_since: u64,
  previous_signing_key: option(signingPublicKey),
  previous_signing_key_since: u64,
  endpoints,
  accepts_new: bool,
  max_streams: u64,
  assigned_streams: u64,
  metadata_hash: bytes32,
});
export type ProviderRecordV2 = Infer<typeof ProviderRecordV2>;

export const StreamRecordV2 = struct({
  version,
  chain_instance_id: bytes32,
  stream_id: bytes32,
  owner: address,
  owner_nonce: u64,
  admin_key: signingPublicKey,
  provider: address,
  authorization_generation: u64,
  status,
});
export type StreamRecordV2 = Infer<typeof StreamRecordV2>;

export const CbqsAccountV2 = struct({
  version,
  owner: address,
  provider: address,
  balance: u128,
  active_streams: u64,
  rate_per_block: u128,
  last_settled_block: u64,
  suspended: bool,
});
export type CbqsAccountV2 = Infer<typeof CbqsAccountV2>;

// ---- authorization (§7) ---------------------------------------------------------
export const LaneScope = union({
  Any: [1, none],
  Exact: [2, struct({ lane_id: u64 })],
  Set: [3, struct({ lane_ids: vec(u64, limits.maxLaneIdsPerGrant, 8) })],
});
export type LaneScope = Infer<typeof LaneScope>;

export const GroupScope = union({
  Any: [1, none],
  Exact: [2, struct({ group_id: u64 })],
});
export type GroupScope = Infer<typeof GroupScope>;

export const StreamGrantV2 = struct({
  version,
  chain_instance_id: bytes32,
  stream_id: bytes32,
  authorization_generation: u64,
  grant_nonce: bytes32,
  holder_signing_key: signingPublicKey,
  verbs: u16,
  lane_scope: LaneScope,
  group_scope: GroupScope,
  not_before_ms: u64,
  expires_at_ms: u64,
  max_message_bytes: u32,
  max_append_bytes_per_sec: u64,
  signature,
});
export type StreamGrantV2 = Infer<typeof StreamGrantV2>;

export const SessionProofV2 = struct({
  version,
  chain_instance_id: bytes32,
  stream_id: bytes32,
  grant_id: bytes32,
  session_id: bytes32,
  challenge: bytes32,
  signature,
});
export type SessionProofV2 = Infer<typeof SessionProofV2>;

// ---- lanes, records, groups, settings, checkpoints (§8-§13) -----------------------
export const LaneRecordV2 = struct({ version, stream_id: bytes32, lane_id: u64, status });
export type LaneRecordV2 = Infer<typeof LaneRecordV2>;

export const AppendRequestV2 = struct({ lane_id: u64, payload: bytes(limits.maxMessageBytes) });
export type AppendRequestV2 = Infer<typeof AppendRequestV2>;

export const RecordHeaderV2 = struct({ version, stream_id: bytes32, lane_id: u64 });
export type RecordHeaderV2 = Infer<typeof RecordHeaderV2>;

export const StartPosition = union({
  Head: [1, none],
  At: [2, struct({ sequence: u64 })],
});
export type StartPosition = Infer<typeof StartPosition>;

export const GroupConfigV2 = struct({
  version,
  group_id: u64,
  lane_id: u64,
  start: StartPosition,
  visibility_timeout_ms: u64,
  max_visibility_ms: u64,
  max_in_flight: u32,
  max_in_flight_per_holder: u32,
  max_attempts: u16,
  record_deadline_ms: u64,
});
export type GroupConfigV2 = Infer<typeof GroupConfigV2>;

export const GroupCeilingsV2 = struct({ max_visibility_ms: u64, max_attempts: u16, max_in_flight: u32 });
export type GroupCeilingsV2 = Infer<typeof GroupCeilingsV2>;

export const StreamSettingsV2 = struct({
  version,
  retention_ms: u64,
  retained_bytes_limit: u64,
  max_message_bytes: u32,
  max_append_bytes_per_sec: u64,
  max_delivered_bytes_per_sec: u64,
});
export type StreamSettingsV2 = Infer<typeof StreamSettingsV2>;

export const CheckpointReceiptV2 = struct({
  version,
  chain_instance_id: bytes32,
  stream_id: bytes32,
  provider: address,
  first_sequence: u64,
  last_sequence: u64,
  records_digest: bytes32,
  previous_checkpoint: bytes32,
  committed_at_ms: u64,
  snapshot_height: u64,
  signature,
});
export type CheckpointReceiptV2 = Infer<typeof CheckpointReceiptV2>;

// ---- subscriptions, delivery state, rooms (§11) ------------------------------------
export const SubscriptionSourceV2 = union({
  Cursor: [1, struct({ lane_scope: LaneScope, start: StartPosition })],
  Group: [2, struct({ lane_id: u64, group_id: u64 })],
});
export type SubscriptionSourceV2 = Infer<typeof SubscriptionSourceV2>;

export const DeliveryStateBodyV2 = union({ CreditShort: [1, struct({ needed_bytes: u32 })] });
export type DeliveryStateBodyV2 = Infer<typeof DeliveryStateBodyV2>;

/** The tags are the kind bytes of the §11.1 derivation (2 is not a kind). */
export const RoomLaneV2 = union({
  Messages: [1, struct({ room_id: bytes32 })],
  Inbox: [3, struct({ room_id: bytes32, seat_id: bytes32 })],
});
export type RoomLaneV2 = Infer<typeof RoomLaneV2>;

// ---- request and response bodies (docs/protocol.md §C) -------------------------------
const lease = struct({ subscription_id: bytes32, lease: bytes32 });
export const RequestBody = union({
  Append: [1, struct({ append: AppendRequestV2 })],
  CreateLane: [2, struct({ room: option(RoomLaneV2) })],
  CloseLane: [3, struct({ lane_id: u64 })],
  ListLanes: [4, struct({ after_lane_id: option(u64), limit: u32 })],
  GetSettings: [5, none],
  UpdateSettings: [6, struct({ settings: StreamSettingsV2 })],
  GetCheckpoint: [7, struct({ covering_sequence: option(u64) })],
  CreateGroup: [8, struct({ config: GroupConfigV2 })],
  UpdateGroup: [9, struct({ config: GroupConfigV2 })],
  GetGroup: [10, struct({ group_id: u64 })],
  DeleteGroup: [11, struct({ group_id: u64 })],
  Subscribe: [12, struct({ source: SubscriptionSourceV2, initial_credit_bytes: u64 })],
  AddCredit: [13, struct({ subscription_id: bytes32, credit_bytes: u64 })],
  Unsubscribe: [14, struct({ subscription_id: bytes32 })],
  Ack: [15, lease],
  Nack: [16, lease],
  Extend: [17, struct({ subscription_id: bytes32, lease: bytes32, extend_ms: u64 })],
  Reject: [18, lease],
  CloseSession: [19, none],
});
export type RequestBody = Infer<typeof RequestBody>;

const laneRecordBytes = 1 + 32 + 8 + 1;
export const ResponseBody = union({
  Appended: [1, struct({ sequence: u64 })],
  LaneCreated: [2, struct({ lane_id: u64 })],
  Lanes: [3, struct({ lanes: vec(LaneRecordV2, limits.maxLaneListPage, laneRecordBytes), next_after_lane_id: option(u64) })],
  Settings: [4, struct({ settings: StreamSettingsV2, group_ceilings: GroupCeilingsV2 })],
  Checkpoint: [5, struct({ receipt: CheckpointReceiptV2 })],
  Group: [6, struct({ config: GroupConfigV2 })],
  GroupCreated: [7, struct({ group_id: u64 })],
  Ok: [8, none],
  CursorProgress: [9, struct({ subscription_id: bytes32, lane_id: u64, scanned_through: u64 })],
});
export type ResponseBody = Infer<typeof ResponseBody>;

// ---- frames: u8 version = 2 || u8 variant || fields --------------------------------------
const versioned = <T>(inner: Codec<T>): Codec<T> => prefixed(version, inner);

export const ClientFrame = versioned(
  union({
    OpenSession: [1, struct({ request_id: bytes32, grant: StreamGrantV2 })],
    CompleteSession: [2, struct({ request_id: bytes32, proof: SessionProofV2 })],
    Request: [3, struct({ request_id: bytes32, session_id: bytes32, body: RequestBody })],
  }),
);
export type ClientFrame = Infer<typeof ClientFrame>;

export const ServerFrame = versioned(
  union({
    SessionChallenge: [1, struct({ request_id: bytes32, session_id: bytes32, challenge: bytes32, expires_at_ms: u64 })],
    SessionOpened: [2, struct({ request_id: bytes32, session_id: bytes32, snapshot_height: u64 })],
    Response: [3, struct({ request_id: bytes32, body: ResponseBody })],
    Delivery: [
      4,
      struct({
        session_id: bytes32,
        subscription_id: bytes32,
        lease: option(bytes32),
        header: RecordHeaderV2,
        sequence: u64,
        payload: bytes(limits.maxMessageBytes),
      }),
    ],
    Error: [
      5,
      struct({
        request_id: option(bytes32),
        code: u16,
        message: bytes(limits.maxErrorMessageBytes),
        details: bytes(limits.maxErrorDetailsBytes),
      }),
    ],
    DeliveryState: [6, struct({ session_id: bytes32, subscription_id: bytes32, state: DeliveryStateBodyV2 })],
  }),
);
export type ServerFrame = Infer<typeof ServerFrame>;

// ---- SYS_CBQS instructions (§5): u8 version || u8 tag || fields -----------------------------
export const Instruction = versioned(
  union({
    RegisterProviderV2: [
      1,
      struct({ signing_key: signingPublicKey, endpoints, max_streams: u64, accepts_new: bool, metadata_hash: bytes32 }),
    ],
    UpdateProviderV2: [
      2,
      struct({
        signing_key: option(signingPublicKey),
        endpoints: option(endpoints),
        max_streams: option(u64),
        accepts_new: option(bool),
        metadata_hash: option(bytes32),
      }),
    ],
    CreateStreamV2: [3, struct({ owner_nonce: u64, provider: address, admin_key: signingPublicKey })],
    UpdateStreamV2: [
      4,
      struct({ stream_id: bytes32, admin_key: option(signingPublicKey), bump_authorization_generation: bool }),
    ],
    CloseStreamV2: [5, struct({ stream_id: bytes32 })],
    TopUpAccountV2: [6, struct({ owner: address, provider: address, amount: u128 })],
    SettleAccountV2: [7, struct({ owner: address, provider: address })],
    WithdrawAccountV2: [8, struct({ provider: address, amount: option(u128) })],
  }),
);
export type Instruction = Infer<typeof Instruction>;

/** A server frame from one WebSocket message; throws DecodeError (strict, bounded). */
export function decodeServerFrame(message: Uint8Array): ServerFrame {
  if (message.length > limits.maxFrameBytes) throw new DecodeError("length_over_cap", 0);
  return decode(ServerFrame, message);
}

/** The member of a tagged union `U` whose kind is `K` (a frame or body by its kind). */
export type Kind<U, K> = Extract<U, { kind: K }>;
