// Signing preimages, identifiers, digests and the §10 verdicts (docs/protocol.md
// §B); the C++ twin is src/cbqs/wire/ids.cc. Each preimage is
//     domain string || canonical(object) without its trailing signature
// and each id is Keccak-256 (the original Keccak, not SHA3-256) of it.
import { ed25519 } from "@noble/curves/ed25519.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { randomBytes } from "@noble/hashes/utils.js";

import { type Codec, Writer, encode, encodeTransient } from "./codec.js";
import {
  CheckpointReceiptV2,
  type ProviderRecordV2,
  RecordHeaderV2,
  type RoomLaneV2,
  SessionProofV2,
  StreamGrantV2,
} from "./wire.js";

export const domains = {
  streamId: "cbqs/stream-id/v2",
  grant: "cbqs/stream-grant/v2",
  checkpoint: "cbqs/checkpoint/v2",
  sessionProof: "cbqs/session-proof/v2",
  record: "cbqs/record/v2",
  recordsDigest: "cbqs/records-digest/v2",
  roomLane: "cowboy/room-lane/v1",
} as const;

// Each domain's bytes, encoded once.
const domainBytes = Object.fromEntries(Object.entries(domains).map(([k, v]) => [k, new TextEncoder().encode(v)])) as {
  [K in keyof typeof domains]: Uint8Array;
};
const SIGNATURE_BYTES = 1 + 64;

export function keccak256(...parts: Uint8Array[]): Uint8Array {
  const h = keccak_256.create();
  for (const p of parts) h.update(p);
  return h.digest();
}

// The signature is the last field of every signed object, fixed at 65 bytes.
function signingBytes<T>(d: Uint8Array, codec: Codec<T>, value: T): Uint8Array {
  const body = encodeTransient(codec, value);
  const out = new Uint8Array(d.length + body.length - SIGNATURE_BYTES);
  out.set(d);
  out.set(body.subarray(0, body.length - SIGNATURE_BYTES), d.length);
  return out;
}

type Unsigned<T> = Omit<T, "signature"> & { signature?: Uint8Array };
const withBlank = <T extends { signature: Uint8Array }>(v: Unsigned<T>): T =>
  ({ ...v, signature: v.signature ?? new Uint8Array(64) }) as T;

export const grantSigningBytes = (g: Unsigned<StreamGrantV2>) => signingBytes(domainBytes.grant, StreamGrantV2, withBlank(g));
export const checkpointSigningBytes = (r: Unsigned<CheckpointReceiptV2>) =>
  signingBytes(domainBytes.checkpoint, CheckpointReceiptV2, withBlank(r));
export const sessionProofSigningBytes = (p: Unsigned<SessionProofV2>) =>
  signingBytes(domainBytes.sessionProof, SessionProofV2, withBlank(p));

export const grantId = (g: StreamGrantV2): Uint8Array => keccak256(grantSigningBytes(g));
export const checkpointId = (r: CheckpointReceiptV2): Uint8Array => keccak256(checkpointSigningBytes(r));

export function streamId(chainInstanceId: Uint8Array, owner: Uint8Array, ownerNonce: bigint): Uint8Array {
  const nonce = new Writer(8);
  nonce.u64(ownerNonce);
  return keccak256(domainBytes.streamId, chainInstanceId, owner, nonce.finish());
}

/** record_digest = keccak256("cbqs/record/v2" || canonical(header) || keccak256(payload)) */
export function recordDigest(header: RecordHeaderV2, payload: Uint8Array): Uint8Array {
  return keccak256(domainBytes.record, encode(RecordHeaderV2, header), keccak256(payload));
}

/** records_digest = keccak256("cbqs/records-digest/v2" || u32 count || record_digest...) */
export function recordsDigest(recordDigests: Uint8Array[]): Uint8Array {
  const count = new Writer(4);
  count.u32(recordDigests.length);
  return keccak256(domainBytes.recordsDigest, count.finish(), ...recordDigests);
}

/** commitment = keccak256("cowboy/room-lane/v1" || room_id || u8 kind [|| seat_id]) */
export function roomLaneCommitment(room: RoomLaneV2): Uint8Array {
  const d = domainBytes.roomLane;
  return room.kind === "Messages"
    ? keccak256(d, room.room_id, Uint8Array.of(1))
    : keccak256(d, room.room_id, Uint8Array.of(3), room.seat_id);
}

/** A room lane's id on every broker (§11.1): the commitment's first 8 bytes, big-endian. */
export function roomLaneId(room: RoomLaneV2): bigint {
  const c = roomLaneCommitment(room);
  return new DataView(c.buffer, c.byteOffset, 8).getBigUint64(0);
}

/** A room id from a human name: keccak256 of its UTF-8 bytes (any 32 bytes will do). */
export const roomIdFromName = (name: string): Uint8Array => keccak256(new TextEncoder().encode(name));

// ---- Ed25519 -------------------------------------------------------------------------
// Strict verification (RFC 8032, no ZIP-215 leniency), as libsodium's
// crypto_sign_verify_detached that the broker and the C++ SDK use.

export interface Ed25519Keypair {
  seed: Uint8Array;
  publicKey: Uint8Array;
}
export function keypairFromSeed(seed: Uint8Array): Ed25519Keypair {
  return { seed, publicKey: ed25519.getPublicKey(seed) };
}
export const newKeypair = (): Ed25519Keypair => keypairFromSeed(randomBytes(32));
export const sign = (seed: Uint8Array, message: Uint8Array): Uint8Array => ed25519.sign(message, seed);
export function verify(publicKey: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  try {
    return ed25519.verify(sig, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** Signs a grant with the stream's admin seed (what a grant service does). */
export function signGrant(grant: Unsigned<StreamGrantV2>, adminSeed: Uint8Array): StreamGrantV2 {
  return { ...grant, signature: sign(adminSeed, grantSigningBytes(grant)) };
}
export function signProof(proof: Unsigned<SessionProofV2>, holderSeed: Uint8Array): SessionProofV2 {
  return { ...proof, signature: sign(holderSeed, sessionProofSigningBytes(proof)) };
}
export function signCheckpoint(receipt: Unsigned<CheckpointReceiptV2>, providerSeed: Uint8Array): CheckpointReceiptV2 {
  return { ...receipt, signature: sign(providerSeed, checkpointSigningBytes(receipt)) };
}

// ---- §10: three verdicts -----------------------------------------------------------------
export type Verdict = "valid" | "invalid" | "unverifiable";

/** The provider key that covers `snapshotHeight`, or null (before the rotation before last). */
export function resolveCheckpointKey(provider: ProviderRecordV2, snapshotHeight: bigint): Uint8Array | null {
  if (snapshotHeight >= provider.signing_key_since) return provider.signing_key;
  if (provider.previous_signing_key && snapshotHeight >= provider.previous_signing_key_since)
    return provider.previous_signing_key;
  return null;
}

/** invalid also covers a receipt of another provider or chain than the record's. */
export function verifyCheckpoint(receipt: CheckpointReceiptV2, provider: ProviderRecordV2): Verdict {
  if (!equalBytes(receipt.provider, provider.provider) || !equalBytes(receipt.chain_instance_id, provider.chain_instance_id))
    return "invalid";
  const key = resolveCheckpointKey(provider, receipt.snapshot_height);
  if (!key) return "unverifiable";
  return verify(key, checkpointSigningBytes(receipt), receipt.signature) ? "valid" : "invalid";
}

// ---- bytes helpers ----------------------------------------------------------------------------
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; ++i) if (a[i] !== b[i]) return false;
  return true;
}
export const toHex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
/** Lenient as the C++ key files: an optional 0x, either case, surrounding whitespace. */
export function fromHex(text: string): Uint8Array {
  const s = text.trim().replace(/^0x/i, "");
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new Error("not a hex string");
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; ++i) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}
export { randomBytes };
