/**
 * Each agent's root memory index in a NATS KV bucket, one key per agent, `index.<agent>`.
 * The value carries the agent id beside the markdown, so a (theoretical) digest collision
 * of two very long agent ids reads as absent rather than as another agent's index. An
 * index must fit in one message (the server's max_payload); a larger put fails.
 */
import type { RootIndexStore } from '../../../ports/root-index.js';
import { indexKeys } from './keys.js';
import { KvStore, readJson } from './kv-support.js';

interface StoredIndex {
  agentId: string;
  markdown: string;
}

export class NatsRootIndexStore extends KvStore implements RootIndexStore {
  async get(agentId: string): Promise<string | undefined> {
    return this.guard('get', async () => {
      const stored = await readJson<StoredIndex>(this.kv, indexKeys.index(agentId), (value) => value.agentId === agentId);
      return stored?.value.markdown;
    });
  }

  /** The latest rebuild wins (every rebuild reads all reflections), so a plain put. */
  async put(agentId: string, markdown: string): Promise<void> {
    await this.guard('put', async () => {
      const value: StoredIndex = { agentId, markdown };
      await this.kv.put(indexKeys.index(agentId), JSON.stringify(value));
    });
  }

  async delete(agentId: string): Promise<void> {
    await this.guard('delete', () => this.purgeAll(indexKeys.index(agentId)));
  }
}
