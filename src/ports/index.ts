/**
 * The ports of Engram's architecture (DESIGN section 2): each has an embedded adapter
 * (SQLite) and a distributed one (NATS JetStream / KV, Weaviate), and every adapter of a
 * port passes the same contract suite in `test/contracts/`.
 *
 * All methods are async so network-backed adapters fit; embedded adapters resolve at once.
 */
export type * from './event-bus.js';
export { DEDUP_WINDOW_MS, DEFAULT_CONSUMER_OPTIONS, EventBusClosedError, consumerOptions } from './event-bus.js';
export type * from './directory.js';
export type * from './conversations.js';
export type * from './responses.js';
export type * from './root-index.js';
export type * from './accounts.js';
export type * from './activity.js';
export type * from './requests.js';
export type * from './reflections.js';
export type * from './embedder.js';
export type * from './upstream.js';

import type { Directory } from './directory.js';
import type { ConversationStore } from './conversations.js';
import type { ResponseStore } from './responses.js';
import type { RootIndexStore } from './root-index.js';
import type { AccountStore } from './accounts.js';
import type { ActivityStore } from './activity.js';
import type { RequestLog } from './requests.js';

/** The control plane's stores, opened together by one adapter family. */
export interface ControlStores {
  directory: Directory;
  conversations: ConversationStore;
  responses: ResponseStore;
  indexes: RootIndexStore;
  /** Dashboard users, sessions and the global MCP server's OAuth state. */
  accounts: AccountStore;
  /** Per agent and day: requests, injected reflections, extractions. */
  activity: ActivityStore;
  /** Each proxied request: ids, timings and what was injected (DESIGN section 12). */
  requests: RequestLog;
}
