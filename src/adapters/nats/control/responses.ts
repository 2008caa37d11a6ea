/**
 * Responses-API records in a NATS KV bucket, `resp.<agent>.<id>`. A record whose JSON fits
 * in one message (the server's max_payload, read from the connection, less room for the
 * subject and headers) is stored whole. A larger one's sealed content goes to the Object
 * Store under a name derived from agent and id, and the KV value is a pointer: the record
 * without `sealed`, plus the object's name.
 *
 * Order of writes: the object before its pointer, the pointer's removal before its
 * object. A reader holding a pointer whose object is gone (replaced or deleted meanwhile)
 * reads the key again. Objects left without a pointer by a crash or a failed write are
 * swept by `prune` once they are an hour old (`large-values.ts`, which the conversation
 * store shares).
 */
import type { KV } from '@nats-io/kv';
import type { ResponseStore, StoredResponse } from '../../../ports/responses.js';
import type { NatsContext } from '../connection.js';
import { responseKeys } from './keys.js';
import { createKey, KvStore, readJson, retryLostRaces, type KvStoreOptions, type Stored } from './kv-support.js';
import { maxValueBytes, type LargeValues } from './large-values.js';

/** A large record in the KV bucket: everything but `sealed`, which is in the named object. */
interface BodyPointer extends Omit<StoredResponse, 'sealed'> {
  sealedObject: string;
}

type StoredValue = StoredResponse | BodyPointer;

const isPointer = (value: StoredValue): value is BodyPointer => 'sealedObject' in value;
const bodyOf = (value: StoredValue): string | undefined => (isPointer(value) ? value.sealedObject : undefined);
/** Body names never hold a `/` (`responseKeys.body`); other stores' names in the shared bucket do. */
const ownsObject = (name: string): boolean => !name.includes('/');

/** Writes and deletes that lose a race with a replacement retry this often. */
const ATTEMPTS = 5;

export class NatsResponseStore extends KvStore implements ResponseStore {
  readonly #bodies: LargeValues;

  constructor(ctx: NatsContext, kv: KV, bodies: LargeValues, options: KvStoreOptions) {
    super(ctx, kv, options);
    this.#bodies = bodies;
  }

  async put(record: StoredResponse): Promise<void> {
    await this.guard('put', async () => {
      const key = responseKeys.response(record.agentId, record.id);
      const whole = JSON.stringify(record);
      if (Buffer.byteLength(whole, 'utf8') <= maxValueBytes(this.ctx)) {
        const previous = await this.#write(key, whole);
        if (previous && isPointer(previous)) await this.#bodies.discard(previous.sealedObject);
        return;
      }
      const { sealed, ...rest } = record;
      const name = responseKeys.body(record.agentId, record.id);
      // Same name as the record it replaces: the client swaps the content and drops the old chunks.
      await this.#bodies.put(name, sealed);
      const pointer: BodyPointer = { ...rest, sealedObject: name };
      await this.#write(key, JSON.stringify(pointer));
    });
  }

  async get(agentId: string, id: string): Promise<StoredResponse | undefined> {
    return this.guard('get', async () => {
      const key = responseKeys.response(agentId, id);
      return this.#bodies.readThrough(
        () => this.#read(key, agentId, id),
        async ({ value }, load) => (isPointer(value) ? toRecord(value, await load(value.sealedObject)) : value),
        `response ${id}`,
      );
    });
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return this.guard('delete', async () => {
      const key = responseKeys.response(agentId, id);
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const stored = await this.#read(key, agentId, id);
        if (!stored) return false;
        if (await this.purge(key, stored.revision)) {
          if (isPointer(stored.value)) await this.#bodies.discard(stored.value.sealedObject);
          return true;
        }
        // Replaced between the read and the purge: delete the newer record.
      }
      throw new Error(`response ${id} kept changing under ${ATTEMPTS} attempts to delete it`);
    });
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.guard('deleteAgent', async () => {
      const filter = responseKeys.responses(agentId);
      const objects = await this.scan(filter, (entry) => bodyOf(entry.json<StoredValue>()));
      await this.purgeAll(filter);
      await this.#bodies.discardAll(objects.map(({ item }) => item));
    });
  }

  async prune(createdBefore: number): Promise<number> {
    return this.guard('prune', async () => {
      // Only the age and the body's name of each record are kept: inline records can be large.
      const records = await this.scan(responseKeys.responses(), (entry) => {
        const value = entry.json<StoredValue>();
        return { createdAt: value.createdAt, body: bodyOf(value) };
      });
      const referenced = new Set<string>();
      const old: typeof records = [];
      for (const record of records) {
        if (record.item.createdAt < createdBefore) old.push(record);
        else if (record.item.body !== undefined) referenced.add(record.item.body);
      }
      const pruned = await this.purgeScanned(old, async ({ item }, purged) => {
        if (item.body === undefined) return;
        if (purged) await this.#bodies.discard(item.body);
        else referenced.add(item.body); // replaced since the scan: kept
      });
      await this.#bodies.sweepOrphans(ownsObject, referenced);
      return pruned;
    });
  }

  /**
   * Writes `value` under `key`: created when new (one request in the common case, so the
   * first try reads nothing), else replacing whatever is there. Returns the value it replaced.
   */
  async #write(key: string, value: string): Promise<StoredValue | undefined> {
    let tries = 0;
    return retryLostRaces(ATTEMPTS + 1, `${key} kept changing under ${ATTEMPTS} attempts to write it`, async () => {
      const previous = tries++ === 0 ? undefined : await readJson<StoredValue>(this.kv, key);
      if (previous) await this.kv.update(key, value, previous.revision);
      else await createKey(this.kv, key, value);
      return previous?.value;
    });
  }

  /** The stored value, unless it belongs to another (agent, id) whose key digest collides. */
  #read(key: string, agentId: string, id: string): Promise<Stored<StoredValue> | undefined> {
    return readJson<StoredValue>(this.kv, key, (value) => value.agentId === agentId && value.id === id);
  }
}

function toRecord(pointer: BodyPointer, sealed: string): StoredResponse {
  return {
    id: pointer.id,
    agentId: pointer.agentId,
    conversationId: pointer.conversationId,
    previousResponseId: pointer.previousResponseId,
    createdAt: pointer.createdAt,
    sealed,
  };
}
