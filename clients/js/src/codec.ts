// Canonical CIP-39 encoding (docs/protocol.md §A), the same rules as the C++
// codec (src/common/codec.h):
//
//   integers  fixed width, big-endian: u8 u16 u32 u64 u128 (u64 and u128 as bigint)
//   bool      u8, 0 or 1
//   Bytes     u32 length, then the bytes; BytesN: N raw bytes
//   Vec<T>    u32 count, then each T
//   Option<T> u8 tag 0 = None (null), 1 = Some then T
//   union     u8 tag, then the variant's fields: { kind: "Name", ...fields }
//
// Each type is one Codec value built from its field list (wire.ts); the same
// list encodes and decodes. Decoding is strict: every length is compared with
// its cap and with the bytes left before anything is allocated, and any
// failure throws a DecodeError naming what was wrong. Fixed-size byte fields
// (ids, keys, signatures) of a decoded value are views into the input, so the
// hot path allocates no buffer for them: copy one (slice) to keep it past the
// input's life. Variable-length bytes (payloads, messages) are copies.

export type DecodeFailure =
  | "truncated"
  | "trailing_bytes"
  | "bad_version"
  | "unknown_variant"
  | "bad_bool"
  | "bad_option_tag"
  | "length_over_cap";

export class DecodeError extends Error {
  constructor(
    readonly failure: DecodeFailure,
    readonly offset: number,
  ) {
    super(`malformed CBQS bytes: ${failure} at byte ${offset}`);
    this.name = "DecodeError";
  }
}

export class Writer {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;

  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  private room(n: number): number {
    const at = this.pos;
    if (at + n > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, at + n));
      grown.set(this.buf.subarray(0, at));
      this.buf = grown;
      this.view = new DataView(grown.buffer);
    }
    this.pos += n;
    return at;
  }

  // room() may replace buf and view, so it runs before either is read.
  u8(v: number): void {
    const at = this.room(1);
    this.buf[at] = v;
  }
  u16(v: number): void {
    const at = this.room(2);
    this.view.setUint16(at, v);
  }
  u32(v: number): void {
    const at = this.room(4);
    this.view.setUint32(at, v);
  }
  u64(v: bigint): void {
    const at = this.room(8);
    this.view.setBigUint64(at, v);
  }
  u128(v: bigint): void {
    const at = this.room(16);
    this.view.setBigUint64(at, v >> 64n);
    this.view.setBigUint64(at + 8, v & 0xffffffffffffffffn);
  }
  raw(bytes: Uint8Array): void {
    const at = this.room(bytes.length);
    this.buf.set(bytes, at);
  }
  bytes(bytes: Uint8Array): void {
    this.u32(bytes.length);
    this.raw(bytes);
  }

  /** The bytes written so far (a copy: the writer may be reused). */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
  /** The bytes written so far, as a view into the writer's buffer. */
  written(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
  /** Empties the writer; a buffer grown past 1 MiB (a large payload) is let go. */
  reset(): void {
    this.pos = 0;
    if (this.buf.length > 1 << 20) {
      this.buf = new Uint8Array(64 * 1024);
      this.view = new DataView(this.buf.buffer);
    }
  }
}

export class Reader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly input: Uint8Array) {
    this.view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  }

  get remaining(): number {
    return this.input.length - this.pos;
  }
  get offset(): number {
    return this.pos;
  }

  fail(failure: DecodeFailure): never {
    throw new DecodeError(failure, this.pos);
  }

  private take(n: number): number {
    if (this.remaining < n) this.fail("truncated");
    const at = this.pos;
    this.pos += n;
    return at;
  }

  u8(): number {
    return this.input[this.take(1)]!;
  }
  u16(): number {
    return this.view.getUint16(this.take(2));
  }
  u32(): number {
    return this.view.getUint32(this.take(4));
  }
  u64(): bigint {
    return this.view.getBigUint64(this.take(8));
  }
  u128(): bigint {
    const at = this.take(16);
    return (this.view.getBigUint64(at) << 64n) | this.view.getBigUint64(at + 8);
  }
  /** N raw bytes: a view into the input (ids and keys; see bytes() for payloads). */
  fixed(n: number): Uint8Array {
    const at = this.take(n);
    return this.input.subarray(at, at + n);
  }
  /** Bytes with a u32 length, refused above `cap` before allocating. */
  bytes(cap: number): Uint8Array {
    const n = this.u32();
    if (n > cap) this.fail("length_over_cap");
    if (n > this.remaining) this.fail("truncated");
    return this.fixed(n).slice(); // a copy: a payload must not pin the socket's buffer
  }
  /** A u32 element count, refused above `cap` or beyond what the input can hold. */
  count(cap: number, minElementBytes: number): number {
    const n = this.u32();
    if (n > cap) this.fail("length_over_cap");
    if (n * minElementBytes > this.remaining) this.fail("truncated");
    return n;
  }
  finish(): void {
    if (this.remaining !== 0) this.fail("trailing_bytes");
  }
}

// ---- codecs ------------------------------------------------------------------

export interface Codec<T> {
  put(w: Writer, v: T): void;
  get(r: Reader): T;
}
export type Infer<C> = C extends Codec<infer T> ? T : never;

export const u8: Codec<number> = { put: (w, v) => w.u8(v), get: (r) => r.u8() };
export const u16: Codec<number> = { put: (w, v) => w.u16(v), get: (r) => r.u16() };
export const u32: Codec<number> = { put: (w, v) => w.u32(v), get: (r) => r.u32() };
export const u64: Codec<bigint> = { put: (w, v) => w.u64(v), get: (r) => r.u64() };
export const u128: Codec<bigint> = { put: (w, v) => w.u128(v), get: (r) => r.u128() };

export const bool: Codec<boolean> = {
  put: (w, v) => w.u8(v ? 1 : 0),
  get: (r) => {
    const b = r.u8();
    if (b > 1) r.fail("bad_bool");
    return b === 1;
  },
};

/** N raw bytes (Bytes32, Address = 20). Encoding checks the length too. */
export function fixed(n: number): Codec<Uint8Array> {
  return {
    put: (w, v) => {
      if (v.length !== n) throw new RangeError(`expected ${n} bytes, got ${v.length}`);
      w.raw(v);
    },
    get: (r) => r.fixed(n),
  };
}

export function bytes(cap: number): Codec<Uint8Array> {
  return {
    put: (w, v) => {
      if (v.length > cap) throw new RangeError(`${v.length} bytes is above the cap of ${cap}`);
      w.bytes(v);
    },
    get: (r) => r.bytes(cap),
  };
}

/** Vec<T>: at most `cap` elements, each at least `minBytes` on the wire. */
export function vec<T>(item: Codec<T>, cap: number, minBytes: number): Codec<T[]> {
  return {
    put: (w, v) => {
      if (v.length > cap) throw new RangeError(`${v.length} elements is above the cap of ${cap}`);
      w.u32(v.length);
      for (const x of v) item.put(w, x);
    },
    get: (r) => {
      const n = r.count(cap, minBytes);
      const out: T[] = [];
      for (let i = 0; i < n; ++i) out.push(item.get(r));
      return out;
    },
  };
}

export function option<T>(item: Codec<T>): Codec<T | null> {
  return {
    put: (w, v) => {
      if (v === null || v === undefined) return w.u8(0);
      w.u8(1);
      item.put(w, v);
    },
    get: (r) => {
      const tag = r.u8();
      if (tag > 1) r.fail("bad_option_tag");
      return tag === 1 ? item.get(r) : null;
    },
  };
}

/** A byte that must equal `value` (a version, an algorithm tag); not a field of the value. */
export interface Constant extends Codec<undefined> {
  readonly constant: number;
}
export function constant(value: number, failure: DecodeFailure): Constant {
  return {
    constant: value,
    put: (w) => w.u8(value),
    get: (r) => {
      if (r.u8() !== value) r.fail(failure);
    },
  };
}

/** A constant byte (a version, an algorithm tag), then `inner`'s value. */
export function prefixed<T>(prefix: Constant, inner: Codec<T>): Codec<T> {
  return {
    put: (w, v) => {
      prefix.put(w, undefined);
      inner.put(w, v);
    },
    get: (r) => {
      prefix.get(r);
      return inner.get(r);
    },
  };
}

type Fields = Record<string, Codec<any>>;
type StructOf<F extends Fields> = { [K in keyof F as F[K] extends Constant ? never : K]: Infer<F[K]> };

/** A struct: its fields in the order listed, nothing between them. */
export function struct<F extends Fields>(fields: F): Codec<StructOf<F>> {
  const list = Object.entries(fields);
  return {
    put: (w, v) => {
      for (const [name, codec] of list) codec.put(w, (v as Record<string, unknown>)[name]);
    },
    get: (r) => {
      const out: Record<string, unknown> = {};
      for (const [name, codec] of list) {
        const x = codec.get(r);
        if (x !== undefined) out[name] = x;
      }
      return out as StructOf<F>;
    },
  };
}

type Variants = Record<string, readonly [number, Codec<any>]>;
export type UnionOf<V extends Variants> = {
  [K in keyof V & string]: { kind: K } & Infer<V[K][1]>;
}[keyof V & string];

/** A tagged union: u8 tag, then the variant's fields; a value is { kind, ...fields }. */
export function union<V extends Variants>(variants: V): Codec<UnionOf<V>> {
  const byTag = new Map<number, [string, Codec<any>]>();
  for (const [kind, [tag, codec]] of Object.entries(variants)) byTag.set(tag, [kind, codec]);
  return {
    put: (w, v) => {
      const variant = variants[v.kind];
      if (!variant) throw new RangeError(`unknown variant ${String(v.kind)}`);
      w.u8(variant[0]);
      variant[1].put(w, v);
    },
    get: (r) => {
      const entry = byTag.get(r.u8()) ?? r.fail("unknown_variant");
      const value = entry[1].get(r);
      value.kind = entry[0];
      return value;
    },
  };
}

// One writer for every encode: JavaScript runs one encode at a time, and
// finish() copies the bytes out, so only the result is allocated.
const scratch = new Writer(64 * 1024);

export function encode<T>(codec: Codec<T>, value: T): Uint8Array {
  return encodeTransient(codec, value).slice();
}

/** Encodes into the shared buffer: the view is valid until the next encode (a socket copies it at once). */
export function encodeTransient<T>(codec: Codec<T>, value: T): Uint8Array {
  scratch.reset();
  codec.put(scratch, value);
  return scratch.written();
}

/** Strict: the whole input must be exactly one value. */
export function decode<T>(codec: Codec<T>, input: Uint8Array): T {
  const r = new Reader(input);
  const v = codec.get(r);
  r.finish();
  return v;
}
