// The types of server.mjs, for the browser test (test/browser/chat.test.ts).
export declare const spkiHash: (pem: string) => string;

export interface ChatServer {
  /** The page: http://host:port/ */
  url: string;
  /** The dev broker certificate's base64 SPKI hash, for --ignore-certificate-errors-spki-list. */
  spki: string;
  /** The broker's wss:// endpoint. */
  endpoint: string;
  close(): Promise<void>;
}

export declare function startChatServer(options: { devDir: string; port?: number; host?: string }): Promise<ChatServer>;
