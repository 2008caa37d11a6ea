/**
 * Conversation state in a NATS KV bucket, `conv.<agent>.<id>`. Session marks are keys of
 * their own, `session.<agent>.<digest>` -> last `at`.
 *
 * A state whose JSON fits in one message (the server's max_payload, read from the
 * connection, less room for the rest) is the key's value: the common case, one request
 * per get and per put. A larger one (a long conversation keeps every block it was given)
 * is written to the Object Store (`large-values.ts`) under a fresh name, and the key's
 * value is a pointer naming it, with what prune needs (`lastActivityAt`). Puts are
 * revision-checked either way (`kv.create`, or `kv.update(key, value, revision)`), so a
 * pointer carries the port's semantics: an object is only ever named by the one revision
 * written with it, and a writer refused its pointer deletes its object.
 *
 * The port's revision is the KV revision doubled, plus one when the value there is a
 * pointer. A write over a pointer must delete the pointer's object once replaced, and so
 * reads the pointer first; a write over an inline state (odd bit clear) needs no read.
 * (KV revisions are stream sequences, far below 2^52, so the doubled ones stay exact.)
 *
 * Order of writes: the object before its pointer, the pointer's removal (or replacement)
 * before its object. A reader holding a pointer whose object is gone reads the key again.
 * Objects left without a pointer (a crash between the two writes, a failed removal) are
 * swept by `prune` once they are an hour old. Removals purge (`KvStore`).
 */
import type { KV } from '@nats-io/kv';
import { nuid } from '@nats-io/transport-node';
import type { ConversationState } from '../../../domain/conversation-state.js';
import type { ConversationStore, Revisioned } from '../../../ports/conversations.js';
import type { NatsContext } from '../connection.js';
import { conversationKeys, keyPart } from './keys.js';
import { createKey, isWrongLastSequence, KvStore, readJson, type KvStoreOptions, type Stored } from './kv-support.js';
import { maxValueBytes, type LargeValues } from './large-values.js';

/** A session mark's value: the full ids (keys may hold only their digests) and the last time. */
interface SessionMark {
  agentId: string;
  digest: string;
  at: number;
}

/** A large state's KV value: the object holding its JSON, and what prune reads. */
interface StatePointer {
  agentId: string;
  id: string;
  object: string;
  lastActivityAt: number;
}

type StoredValue = ConversationState | StatePointer;

const isPointer = (value: StoredValue): value is StatePointer => 'object' in value;
const objectOf = (value: StoredValue): string | undefined => (isPointer(value) ? value.object : undefined);

/** Object names of this store in the shared bucket: `conv/<agent>.<id>.<unique>` (unique: concurrent writers never share one). */
const OBJECT_NAMESPACE = 'conv/';
const objectName = (state: ConversationState): string => `${OBJECT_NAMESPACE}${keyPart(state.agentId)}.${keyPart(state.id)}.${nuid.next()}`;
const ownsObject = (name: string): boolean => name.startsWith(OBJECT_NAMESPACE);

/** A KV revision and whether the value stored there is a pointer (see the header). */
interface At {
  revision: number;
  pointer: boolean;
}

const toPortRevision = (at: At): number => at.revision * 2 + (at.pointer ? 1 : 0);

/** The KV revision a port revision stands for; undefined for a number no stored state has. */
function fromPortRevision(revision: number): At | undefined {
  if (!Number.isSafeInteger(revision) || revision < 2) return undefined;
  return { revision: Math.floor(revision / 2), pointer: revision % 2 === 1 };
}

export class NatsConversationStore extends KvStore implements ConversationStore {
  readonly #objects: LargeValues;

  constructor(ctx: NatsContext, kv: KV, objects: LargeValues, options: KvStoreOptions) {
    super(ctx, kv, options);
    this.#objects = objects;
  }

  async get(agentId: string, id: string): Promise<Revisioned<ConversationState> | undefined> {
    return this.guard('get', async () => {
      const key = conversationKeys.conversation(agentId, id);
      return this.#objects.readThrough(
        () => this.#read(key, agentId, id),
        async ({ value, revision }, load) => {
          if (!isPointer(value)) return { value, revision: toPortRevision({ revision, pointer: false }) };
          const state = JSON.parse(await load(value.object)) as ConversationState;
          return { value: state, revision: toPortRevision({ revision, pointer: true }) };
        },
        `conversation ${id}`,
      );
    });
  }

  async put(state: ConversationState, expected: number | undefined): Promise<number | undefined> {
    return this.guard('put', async () => {
      const at = expected === undefined ? undefined : fromPortRevision(expected);
      if (expected !== undefined && !at) return undefined; // no stored state has such a revision
      const key = conversationKeys.conversation(state.agentId, state.id);
      // The object of the pointer being replaced, to delete once it is.
      let replaced: string | undefined;
      if (at?.pointer) {
        const current = await this.#read(key, state.agentId, state.id);
        // Checked here too: a stale writer then never writes its (large) object at all.
        if (!current || current.revision !== at.revision || !isPointer(current.value)) return undefined;
        replaced = current.value.object;
      }
      const json = JSON.stringify(state);
      let written: At | undefined;
      if (Buffer.byteLength(json, 'utf8') <= maxValueBytes(this.ctx)) {
        const revision = await this.#write(key, json, at?.revision);
        written = revision === undefined ? undefined : { revision, pointer: false };
      } else {
        const object = objectName(state);
        await this.#objects.put(object, json);
        const pointer: StatePointer = { agentId: state.agentId, id: state.id, object, lastActivityAt: state.lastActivityAt };
        // Any other failure (a timeout) may still have stored the pointer: the object stays, for the sweep if unnamed.
        const revision = await this.#write(key, JSON.stringify(pointer), at?.revision);
        if (revision === undefined) await this.#objects.discard(object);
        written = revision === undefined ? undefined : { revision, pointer: true };
      }
      if (!written) return undefined;
      if (replaced !== undefined) await this.#objects.discard(replaced);
      return toPortRevision(written);
    });
  }

  async prune(idleSince: number): Promise<number> {
    return this.guard('prune', async () => {
      // Only the activity and the object's name of each state are kept: inline states can be large.
      const states = await this.scan(conversationKeys.conversations(), (entry) => {
        const value = entry.json<StoredValue>();
        return { lastActivityAt: value.lastActivityAt, object: objectOf(value) };
      });
      const marks = await this.scan(conversationKeys.sessions(), (entry) => (entry.json<SessionMark>().at < idleSince ? true : undefined));
      const referenced = new Set<string>();
      const idle: typeof states = [];
      for (const state of states) {
        if (state.item.lastActivityAt < idleSince) idle.push(state);
        else if (state.item.object !== undefined) referenced.add(state.item.object);
      }
      // Each purge takes only the revision that was seen idle: a conversation that became
      // active since (a newer revision) stays, and its writer deletes the object it replaced.
      const pruned = await this.purgeScanned(idle, async ({ item }, purged) => {
        if (item.object === undefined) return;
        if (purged) await this.#objects.discard(item.object);
        else referenced.add(item.object);
      });
      await this.purgeScanned(marks);
      await this.#objects.sweepOrphans(ownsObject, referenced);
      return pruned;
    });
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.guard('deleteAgent', async () => {
      const filter = conversationKeys.conversations(agentId);
      const objects = await this.scan(filter, (entry) => objectOf(entry.json<StoredValue>()));
      await this.purgeAll(filter);
      await this.purgeAll(conversationKeys.sessions(agentId));
      await this.#objects.discardAll(objects.map(({ item }) => item));
    });
  }

  /** Last writer wins: marks only feed hourly pruning, where milliseconds of disorder do not matter. */
  async markSession(agentId: string, sessionDigest: string, at: number): Promise<void> {
    await this.guard('markSession', async () => {
      const mark: SessionMark = { agentId, digest: sessionDigest, at };
      await this.kv.put(conversationKeys.session(agentId, sessionDigest), JSON.stringify(mark));
    });
  }

  async hasSession(agentId: string, sessionDigest: string): Promise<boolean> {
    return this.guard('hasSession', async () => {
      const stored = await readJson<SessionMark>(this.kv, conversationKeys.session(agentId, sessionDigest));
      return stored?.value.agentId === agentId && stored.value.digest === sessionDigest;
    });
  }

  /** The stored value, unless it belongs to another (agent, id) whose key digest collides. */
  #read(key: string, agentId: string, id: string): Promise<Stored<StoredValue> | undefined> {
    return readJson<StoredValue>(this.kv, key, (value) => value.agentId === agentId && value.id === id);
  }

  /** Writes `value` if `key` is still at `expected` (undefined: absent); the new KV revision, or undefined when another writer came first. */
  async #write(key: string, value: string, expected: number | undefined): Promise<number | undefined> {
    try {
      return expected === undefined ? await createKey(this.kv, key, value) : await this.kv.update(key, value, expected);
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined;
      throw error;
    }
  }
}
