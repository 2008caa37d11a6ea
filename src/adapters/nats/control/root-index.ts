/**
 * Each agent's root memory index in a NATS KV bucket, one key per agent, `index.<agent>`.
 * The value carries the agent id beside the markdown, so a (theoretical) digest collision
 * of two very long agent ids reads as absent rather than as another agent's index. An
 * index must fit in one message (the server's max_payload); a larger put fails.
 */
import type { KV } from '@nats-io/kv';
import type { RootIndexStore } from '../../../ports/root-index.js';
import type { NatsContext } from '../connection.js';
import { indexKeys, kvSubject } from './keys.js';
import { guarded, purgeSubjects, readJson } from './kv-support.js';

interface StoredIndex {
  agentId: string;
  markdown: string;
}

export class NatsRootIndexStore implements RootIndexStore {
  readonly #ctx: NatsContext;
  readonly #kv: KV;
  readonly #bucket: string;

  constructor(ctx: NatsContext, kv: KV, options: { bucket: string }) {
    this.#ctx = ctx;
    this.#kv = kv;
    this.#bucket = options.bucket;
  }

  async get(agentId: string): Promise<string | undefined> {
    return this.#guard('get', async () => {
      const stored = await readJson<StoredIndex>(this.#kv, indexKeys.index(agentId));
      return stored?.value.agentId === agentId ? stored.value.markdown : undefined;
    });
  }

  /** The latest rebuild wins (every rebuild reads all reflections), so a plain put. */
  async put(agentId: string, markdown: string): Promise<void> {
    await this.#guard('put', async () => {
      const value: StoredIndex = { agentId, markdown };
      await this.#kv.put(indexKeys.index(agentId), JSON.stringify(value));
    });
  }

  /** Purges the key rather than writing a delete marker: nothing watches this bucket. */
  async delete(agentId: string): Promise<void> {
    await this.#guard('delete', async () => {
      await purgeSubjects(this.#ctx.jsm, `KV_${this.#bucket}`, kvSubject(this.#bucket, indexKeys.index(agentId)));
    });
  }

  /** Nothing to stop: the store holds no watch, and the connection belongs to its opener. */
  async close(): Promise<void> {}

  #guard<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return guarded(`NATS KV ${this.#bucket}: ${operation}`, run);
  }
}
