// The verb bits of a StreamGrantV2 (docs/protocol.md §C; include/cbqs/wire/verbs.h).
export const APPEND = 0x0001;
export const CONSUME = 0x0002;
export const REPLAY = 0x0004;
export const MANAGE_LANES = 0x0008;
export const MANAGE_GROUPS = 0x0010;
export const MANAGE_SETTINGS = 0x0020;
/** Every verb the protocol defines. */
export const ALL = 0x003f;
