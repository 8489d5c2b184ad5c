// The one thing the client needs from a platform: a WebSocket carrying binary
// messages. Browsers have one built in (browserDialer); Node gets one from the
// `ws` package with the §11.4 checks and certificate pinning (node.ts).
import { CbqsError } from "./errors.js";
import type { Endpoint } from "./dialing.js";

export interface SocketEvents {
  message(data: Uint8Array): void;
  /** Once, when the socket is gone for whatever reason. */
  closed(reason: string): void;
}

export interface Socket {
  /** Sends one binary message; `frame` is only valid during the call, so the socket copies it before returning. */
  send(frame: Uint8Array): void;
  /** Frames handed to send() in the current turn go out together (one TLS record where the platform allows). */
  flush?(): void;
  close(): void;
  /** Ends the connection at once, unsent frames lost, as a network failure would (where the platform can). */
  abort?(): void;
}

export interface DialOptions {
  allowPrivateDestinations: boolean;
  /** Largest message accepted from the broker (cbqs.max_frame_bytes). */
  maxMessageBytes: number;
  timeoutMs: number;
}

export type Dialer = (endpoint: Endpoint, options: DialOptions, events: SocketEvents) => Promise<Socket>;

/** The browser's WebSocket (or any WHATWG-compatible global one). */
export const browserDialer: Dialer = (endpoint, options, events) =>
  new Promise((resolve, reject) => {
    const WS = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
    if (!WS) return reject(new CbqsError("configuration", "no WebSocket on this platform: in Node use @cowboy/cbqs/node"));
    const ws = new WS(endpoint.url);
    ws.binaryType = "arraybuffer";
    let open = false;
    const timer = setTimeout(() => {
      ws.close();
      reject(new CbqsError("timeout", `no WebSocket to ${endpoint.url} within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    ws.onopen = () => {
      clearTimeout(timer);
      open = true;
      // WebSocket.send copies the bytes it is given when it is called.
      resolve({ send: (frame) => ws.send(frame), close: () => ws.close() });
    };
    ws.onmessage = (e) => {
      if (e.data instanceof ArrayBuffer) return events.message(new Uint8Array(e.data));
      open = false; // the close that follows is reported here, once
      ws.close(1003);
      events.closed("a text message (frames are binary)");
    };
    ws.onclose = (e) => {
      clearTimeout(timer);
      if (!open) reject(new CbqsError("disconnected", `WebSocket to ${endpoint.url} failed (close code ${e.code})`));
      else events.closed(`closed with ${e.code}${e.reason ? ` ${e.reason}` : ""}`);
    };
  });
