// @cowboy/cbqs: the CBQS (CIP-39) client for browsers and Node.
// Node programs import "@cowboy/cbqs/node" for its dialer and the dev files.
export { Client, withGroupDefaults } from "./client.js";
export type { Backoff, ClientEvent, ClientOptions, GroupFields } from "./client.js";
export { Consumer, Lease, Reader } from "./subscriptions.js";
export type { ConsumerOptions, ReaderOptions, Record } from "./subscriptions.js";
export { ChainVerifier, fetchProviderRecord, verifyChain } from "./checkpoints.js";
export type { ChainReport } from "./checkpoints.js";
export { CbqsError, errorCode, errorName, errorTable } from "./errors.js";
export type { ErrorKind, ErrorName } from "./errors.js";
export { checkAddress, isAddressLiteral, parseEndpoint, refusedRange } from "./dialing.js";
export { browserDialer } from "./transport.js";
export type { Dialer, DialOptions, Socket, SocketEvents } from "./transport.js";
export { DecodeError, decode, encode } from "./codec.js";
export * as wire from "./wire.js";
export * from "./ids.js";
export * as verbs from "./verbs.js";
