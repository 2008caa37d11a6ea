/**
 * Conversation state in a NATS KV bucket: `conv.<agent>.<id>` holds the state as JSON and
 * its KV revision is the port's revision, so a put is `kv.create` (must not exist yet) or
 * `kv.update(key, value, revision)`, both refused by the server when another writer came
 * first. Session marks are keys of their own, `session.<agent>.<digest>` -> last `at`.
 *
 * Removals purge the stored message instead of writing a delete marker: nothing watches
 * this bucket, and hourly pruning would otherwise leave a marker per conversation forever.
 */
import type { KV } from '@nats-io/kv';
import type { ConversationState } from '../../../domain/conversation-state.js';
import type { ConversationStore, Revisioned } from '../../../ports/conversations.js';
import type { NatsContext } from '../connection.js';
import { conversationKeys, kvSubject } from './keys.js';
import { createKey, forEachLimited, guarded, isWrongLastSequence, purgeRevision, purgeSubjects, readJson, scanLatest } from './kv-support.js';

/** A session mark's value: the full ids (keys may hold only their digests) and the last time. */
interface SessionMark {
  agentId: string;
  digest: string;
  at: number;
}

export interface NatsConversationStoreOptions {
  bucket: string;
  timeoutMs: number;
}

/** Purges in flight at once while pruning. */
const PRUNE_CONCURRENCY = 16;

export class NatsConversationStore implements ConversationStore {
  readonly #ctx: NatsContext;
  readonly #kv: KV;
  readonly #bucket: string;
  readonly #stream: string;
  readonly #timeoutMs: number;

  constructor(ctx: NatsContext, kv: KV, options: NatsConversationStoreOptions) {
    this.#ctx = ctx;
    this.#kv = kv;
    this.#bucket = options.bucket;
    this.#stream = `KV_${options.bucket}`;
    this.#timeoutMs = options.timeoutMs;
  }

  async get(agentId: string, id: string): Promise<Revisioned<ConversationState> | undefined> {
    return this.#guard('get', async () => {
      const stored = await readJson<ConversationState>(this.#kv, conversationKeys.conversation(agentId, id));
      // A different id under the same key is a digest collision of two very long ids.
      if (!stored || stored.value.agentId !== agentId || stored.value.id !== id) return undefined;
      return stored;
    });
  }

  async put(state: ConversationState, expected: number | undefined): Promise<number | undefined> {
    return this.#guard('put', async () => {
      const key = conversationKeys.conversation(state.agentId, state.id);
      const value = JSON.stringify(state);
      if (expected !== undefined && expected <= 0) return undefined; // no stored state has such a revision
      try {
        return expected === undefined ? await createKey(this.#kv, key, value) : await this.#kv.update(key, value, expected);
      } catch (error) {
        if (isWrongLastSequence(error)) return undefined; // another writer came first
        throw error;
      }
    });
  }

  async prune(idleSince: number): Promise<number> {
    return this.#guard('prune', async () => {
      const isIdle = (at: number) => (at < idleSince ? true : undefined);
      const idle = await scanLatest(this.#kv, conversationKeys.conversations(), this.#timeoutMs, (entry) =>
        isIdle(entry.json<ConversationState>().lastActivityAt),
      );
      const marks = await scanLatest(this.#kv, conversationKeys.sessions(), this.#timeoutMs, (entry) => isIdle(entry.json<SessionMark>().at));
      let pruned = 0;
      // Each purge takes only the revision that was seen idle: a conversation that became
      // active since (a newer revision) stays.
      await forEachLimited(idle, PRUNE_CONCURRENCY, async (entry) => {
        if (await purgeRevision(this.#ctx.jsm, this.#stream, kvSubject(this.#bucket, entry.key), entry.revision)) pruned++;
      });
      await forEachLimited(marks, PRUNE_CONCURRENCY, async (entry) => {
        await purgeRevision(this.#ctx.jsm, this.#stream, kvSubject(this.#bucket, entry.key), entry.revision);
      });
      return pruned;
    });
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.#guard('deleteAgent', async () => {
      await purgeSubjects(this.#ctx.jsm, this.#stream, kvSubject(this.#bucket, conversationKeys.conversations(agentId)));
      await purgeSubjects(this.#ctx.jsm, this.#stream, kvSubject(this.#bucket, conversationKeys.sessions(agentId)));
    });
  }

  /** Last writer wins: marks only feed hourly pruning, where milliseconds of disorder do not matter. */
  async markSession(agentId: string, sessionDigest: string, at: number): Promise<void> {
    await this.#guard('markSession', async () => {
      const mark: SessionMark = { agentId, digest: sessionDigest, at };
      await this.#kv.put(conversationKeys.session(agentId, sessionDigest), JSON.stringify(mark));
    });
  }

  async hasSession(agentId: string, sessionDigest: string): Promise<boolean> {
    return this.#guard('hasSession', async () => {
      const stored = await readJson<SessionMark>(this.#kv, conversationKeys.session(agentId, sessionDigest));
      return stored?.value.agentId === agentId && stored.value.digest === sessionDigest;
    });
  }

  /** Nothing to stop: the store holds no watch, and the connection belongs to its opener. */
  async close(): Promise<void> {}

  #guard<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return guarded(`NATS KV ${this.#bucket}: ${operation}`, run);
  }
}
