/**
 * The control plane's stores on NATS KV (+ an Object Store for values too large for KV),
 * shared by every replica (DESIGN section 9). One bucket per port, named `<prefix>_...`:
 *
 * | bucket                      | holds                                             | port          |
 * |-----------------------------|---------------------------------------------------|---------------|
 * | `<prefix>_directory`        | orgs, agents, tokens, name claims                 | Directory     |
 * | `<prefix>_conversations`    | conversation state, session marks                 | Conversations |
 * | `<prefix>_responses`        | Responses-API records (or pointers to bodies)     | Responses     |
 * | `<prefix>_response_bodies`  | Object Store: large records and states (pointed   | Responses,    |
 * |                             | to from the KV buckets, `large-values.ts`)        | Conversations |
 * | `<prefix>_indexes`          | root memory index per agent                       | RootIndex     |
 * | `<prefix>_accounts`         | users, email claims, sessions, OAuth clients and  | Accounts      |
 * |                             | grants (+ per-user markers), the signing key      |               |
 * | `<prefix>_activity`         | requests, injections, extractions per agent, day  | Activity      |
 *
 * Buckets keep one value per key, on file storage, and use nothing newer than
 * nats-server 2.9. Every operation that reaches NATS fails after the connection's
 * timeout when NATS is unreachable, with `EngramError('unavailable')` naming the bucket and
 * operation (other failures: `NatsStoreError`); directory reads keep answering from the
 * replica's mirror.
 */
import { Objm } from '@nats-io/obj';
import { StorageType } from '@nats-io/jetstream';
import type { ControlStores } from '../../../ports/index.js';
import type { NatsContext } from '../connection.js';
import { NatsAccountStore } from './accounts.js';
import { NatsActivityStore } from './activity.js';
import { NatsConversationStore } from './conversations.js';
import { NatsDirectory } from './directory.js';
import { controlBuckets } from './keys.js';
import { guarded, openBucket, openExpiringBucket, type ErrorReporter } from './kv-support.js';
import { LargeValues } from './large-values.js';
import { NatsRequestLog } from './request-log.js';
import { NatsResponseStore } from './responses.js';
import { NatsRootIndexStore } from './root-index.js';

export { controlBuckets, controlStreams } from './keys.js';

export interface NatsControlOptions {
  /** Bucket name prefix (default `engram`): letters, digits, `_` and `-`. */
  prefix?: string;
  /** Replicas of each bucket's stream in a clustered NATS (default 1). */
  replicas?: number;
  now?: () => number;
  /** `lastUsedAt` of a token is written at most this often (default 60 s). */
  lastUsedResolutionMs?: number;
  /** A name or email claim whose record is missing is taken over once this old (default: twice the timeout). */
  staleClaimMs?: number;
  /** How often each replica checks that its directory watch still delivers (default 5 s). */
  watchCheckMs?: number;
  /** The request log's entries are kept this long (the bucket's max age; default 7 days). */
  requestLogMs?: number;
  /** Failures with no caller to reject: background `lastUsedAt` writes, a lagging or restarting watch. */
  onError?: ErrorReporter;
}

export type NatsControlStores = ControlStores & { close(): Promise<void> };

/** Opens (creating when missing) the buckets and loads the directory; rejects when NATS cannot (see `guarded`). */
export function openNatsControl(ctx: NatsContext, options: NatsControlOptions = {}): Promise<NatsControlStores> {
  return guarded('NATS: opening the control stores', () => open(ctx, options));
}

async function open(ctx: NatsContext, options: NatsControlOptions): Promise<NatsControlStores> {
  const buckets = controlBuckets(options.prefix ?? 'engram');
  const replicas = options.replicas ?? 1;
  const now = options.now ?? Date.now;
  const onError = options.onError ?? ((error, context) => console.error(`engram: ${context}:`, error));
  const staleClaimMs = options.staleClaimMs ?? 2 * ctx.timeoutMs;
  const [directoryKv, conversationsKv, responsesKv, indexesKv, accountsKv, activityKv, requestsKv, bodies] = await Promise.all([
    openBucket(ctx, buckets.directory, replicas),
    openBucket(ctx, buckets.conversations, replicas),
    openBucket(ctx, buckets.responses, replicas),
    openBucket(ctx, buckets.indexes, replicas),
    openBucket(ctx, buckets.accounts, replicas),
    openBucket(ctx, buckets.activity, replicas),
    openExpiringBucket(ctx, buckets.requests, replicas, options.requestLogMs ?? 7 * 24 * 3600_000),
    new Objm(ctx.js).create(buckets.responseBodies, { storage: StorageType.File, replicas }),
  ]);
  const directory = await NatsDirectory.open(ctx, directoryKv, {
    bucket: buckets.directory,
    timeoutMs: ctx.timeoutMs,
    now,
    lastUsedResolutionMs: options.lastUsedResolutionMs ?? 60_000,
    staleClaimMs,
    watchCheckMs: options.watchCheckMs ?? 5_000,
    onError,
  });
  const largeValues = new LargeValues(bodies, ctx.jsm, { bucket: buckets.responseBodies, idleMs: ctx.timeoutMs, now, onError });
  const timeoutMs = ctx.timeoutMs;
  const stores = {
    directory,
    conversations: new NatsConversationStore(ctx, conversationsKv, largeValues, { bucket: buckets.conversations, timeoutMs }),
    responses: new NatsResponseStore(ctx, responsesKv, largeValues, { bucket: buckets.responses, timeoutMs }),
    indexes: new NatsRootIndexStore(ctx, indexesKv, { bucket: buckets.indexes, timeoutMs }),
    accounts: new NatsAccountStore(ctx, accountsKv, { bucket: buckets.accounts, timeoutMs, staleClaimMs, now, onError }),
    activity: new NatsActivityStore(ctx, activityKv, { bucket: buckets.activity, timeoutMs }),
    requests: new NatsRequestLog(ctx, requestsKv, { bucket: buckets.requests, timeoutMs }),
  };
  return {
    ...stores,
    async close() {
      await Promise.all(Object.values(stores).map((store) => store.close()));
    },
  };
}
