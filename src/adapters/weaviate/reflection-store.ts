/**
 * The reflection store in a Weaviate collection: one tenant per agent (so no query can
 * cross agents), self-provided vectors searched by cosine (`nearest`), BM25 over content,
 * topic and tags (`keywords`). Fusion happens above the port, so this adapter only runs
 * the two searches.
 *
 * Weaviate has no conditional write, so the upsert merge rule and `markUsed` are
 * read-merge-write; see `upsert` and usage-writer.ts for what concurrent writers can do.
 */
import { Filters, type FilterValue, type WeaviateClient } from 'weaviate-client';
import { TAG_AUTHORS, type Reflection, type ReflectionKind, type Visibility } from '../../domain/types.js';
import {
  patchedReflection,
  type KeywordQuery,
  type ListQuery,
  type Match,
  type ReflectionPatch,
  type ReflectionStore,
  type StoredReflection,
  type VectorQuery,
} from '../../ports/reflections.js';
import { storeError, WeaviateStoreError } from './errors.js';
import { reflectionUuid, tenantName } from './ids.js';
import { keywordTerms } from './keyword-terms.js';
import { eachLimited } from './limited.js';
import {
  compareForList,
  cosine,
  cosineFromDistance,
  fromProperties,
  listed,
  mergeUpsert,
  scopeProperties,
  supersessionChanges,
  termsOf,
  toProperties,
  upsertChanges,
} from './mapping.js';
import { KEYWORD_PROPERTIES, VECTOR_NAME, type ReflectionObjects, type ReflectionProperties } from './schema.js';
import { TenantRegistry } from './tenants.js';
import { UsageWriter } from './usage-writer.js';

export interface WeaviateReflectionStoreOptions {
  /** The collection, which must exist (see `ensureCollection`). */
  collection: string;
  now?: () => number;
  /** Longest time a `markUsed` waits in memory before it is written (default 1 s). */
  usageFlushMs?: number;
  /**
   * The server's QUERY_MAXIMUM_RESULTS (default 10 000): offset + limit of one query may
   * not exceed it. Longer lists are read page by page with a cursor instead.
   */
  maxQueryResults?: number;
  /** Failures of a background write of uses (the uses are kept and retried). */
  onError?: (error: unknown) => void;
  /** Strings cut out of error messages (the API key). */
  secrets?: readonly string[];
  /** Close the client when the store closes (the store opened it). */
  ownsClient?: boolean;
}

type Objects = ReflectionObjects;

/** Page size of cursor reads (`list` without a limit). */
const PAGE = 1_000;
/** Reflections of one upsert read and written at once (see `#insert`). */
const WRITE_CONCURRENCY = 16;

export class WeaviateReflectionStore implements ReflectionStore {
  readonly collection: string;
  readonly #client: WeaviateClient;
  readonly #objects: Objects;
  readonly #tenants: TenantRegistry;
  readonly #uses: UsageWriter;
  readonly #now: () => number;
  readonly #maxQueryResults: number;
  readonly #secrets: readonly string[];
  readonly #ownsClient: boolean;
  #closed = false;

  constructor(client: WeaviateClient, options: WeaviateReflectionStoreOptions) {
    this.collection = options.collection;
    this.#client = client;
    this.#objects = client.collections.use<string, ReflectionProperties>(options.collection);
    this.#tenants = new TenantRegistry(this.#objects.tenants);
    this.#now = options.now ?? Date.now;
    this.#maxQueryResults = options.maxQueryResults ?? 10_000;
    this.#secrets = options.secrets ?? [];
    this.#ownsClient = options.ownsClient ?? false;
    const onError =
      options.onError ?? ((error: unknown) => console.error('engram:', error instanceof Error ? error.message : error));
    this.#uses = new UsageWriter({
      objectsOf: (agentId) => this.#agent(agentId),
      tenants: this.#tenants,
      flushMs: options.usageFlushMs ?? 1_000,
      report: (error) => onError(storeError('markUsed', error, this.#secrets)),
    });
  }

  /**
   * Reads each stored object and applies the merge rule (mapping.ts `mergeUpsert`). A new
   * reflection is inserted whole; a stored one is PATCHed with what the rule changes
   * (`upsertChanges`), so uses another replica writes meanwhile survive unless the
   * incoming counters win (then the later write wins: Weaviate has no conditional
   * write). One deleted between the read and the PATCH is inserted.
   */
  async upsert(reflections: StoredReflection[]): Promise<void> {
    this.#open('upsert');
    if (reflections.length === 0) return;
    // Pending uses first: an incoming useCount read through this store already counts them.
    await this.#uses.flush();
    const byAgent = new Map<string, Map<string, StoredReflection>>();
    for (const r of reflections) {
      let batch = byAgent.get(r.agentId);
      if (!batch) byAgent.set(r.agentId, (batch = new Map()));
      // The same id twice in one call: merged in order, as if upserted one after the other.
      const earlier = batch.get(r.id);
      batch.set(r.id, { ...mergeUpsert(earlier && plain(earlier), plain(r)), vector: r.vector });
    }
    await Promise.all([...byAgent].map(([agentId, batch]) => this.#upsertAgent(agentId, [...batch.values()])));
  }

  async get(agentId: string, id: string): Promise<Reflection | undefined> {
    this.#open('get');
    return this.#read('get', agentId, undefined, async (objects) => {
      const found = await objects.query.fetchObjectById(reflectionUuid(agentId, id));
      return found ? this.#uses.withUses(fromProperties(found.properties, agentId)) : undefined;
    });
  }

  async getMany(agentId: string, ids: readonly string[]): Promise<Reflection[]> {
    this.#open('getMany');
    const distinct = [...new Set(ids)];
    if (distinct.length === 0) return [];
    return this.#read('getMany', agentId, [], async (objects) => {
      const found: Reflection[] = [];
      // A page of ids per query: one query may return at most `maxQueryResults` objects.
      for (let start = 0; start < distinct.length; start += this.#maxQueryResults) {
        const page = distinct.slice(start, start + this.#maxQueryResults);
        const result = await objects.query.fetchObjects({
          limit: page.length,
          filters: objects.filter.byId().containsAny(page.map((id) => reflectionUuid(agentId, id))),
        });
        for (const o of result.objects) found.push(this.#uses.withUses(fromProperties(o.properties, agentId)));
      }
      return found;
    });
  }

  /** Most recently updated first (least recently with `oldestFirst`), ties by id (`compareForList`). */
  async list(agentId: string, query: ListQuery = {}): Promise<Reflection[]> {
    this.#open('list');
    const offset = Math.max(0, Math.floor(query.offset ?? 0));
    const unbounded = query.limit === undefined || query.limit < 0;
    const limit = unbounded ? Infinity : Math.floor(query.limit ?? 0);
    if (limit === 0) return [];
    return this.#read('list', agentId, [], async (objects) => {
      if (offset + limit <= this.#maxQueryResults) {
        const page = await objects.query.fetchObjects({
          limit,
          offset,
          filters: listFilters(objects, query),
          sort: objects.sort.byProperty('updatedAt', query.oldestFirst === true).byProperty('reflectionId'),
        });
        return page.objects.map((o) => this.#uses.withUses(fromProperties(o.properties, agentId)));
      }
      // Beyond what one query may return: read everything with the cursor (which cannot
      // sort or filter), then filter and sort here.
      const all = (await this.#scan(objects, agentId)).filter((r) => listed(r, query));
      return all.sort((a, b) => compareForList(a, b, query.oldestFirst === true)).slice(offset, offset + limit).map((r) => this.#uses.withUses(r));
    });
  }

  async count(agentId: string): Promise<number> {
    this.#open('count');
    return this.#read('count', agentId, 0, (objects) => objects.length());
  }

  /**
   * A PATCH of the changed properties (and the vector when one is given): Weaviate keeps
   * the stored vector of a self-provided named vector that a PATCH leaves out, and the
   * counters of `markUsed` are not touched.
   */
  async update(agentId: string, id: string, patch: ReflectionPatch): Promise<Reflection | undefined> {
    this.#open('update');
    await this.#uses.flush();
    return this.#read('update', agentId, undefined, async (objects) => {
      const found = await objects.query.fetchObjectById(reflectionUuid(agentId, id));
      if (!found) return undefined;
      const current = fromProperties(found.properties, agentId);
      const next = patchedReflection(current, patch, this.#now());
      const { kind, content, topic, tags, embedderId, updatedAt } = next;
      const changes: Partial<ReflectionProperties> = { kind, content, topic, tags, terms: termsOf(next), embedderId, updatedAt };
      if (patch.supersededBy !== undefined) Object.assign(changes, supersessionChanges(next));
      // '' clears it: a PATCH cannot remove a property.
      if (patch.tagsBy !== undefined) changes.tagsBy = next.tagsBy ?? '';
      if (patch.scope !== undefined) Object.assign(changes, scopeProperties(next));
      // Deleted between the read and the PATCH: as if it had never been there.
      if (!(await this.#patch(objects, next, changes, patch.vector))) return undefined;
      return this.#uses.withUses(next);
    });
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    this.#open('delete');
    await this.#uses.flush();
    return this.#read('delete', agentId, false, async (objects) => {
      const result = await objects.data.deleteMany(objects.filter.byId().equal(reflectionUuid(agentId, id)));
      if (result.failed > 0) throw new Error(`Weaviate failed to delete ${result.failed} object(s)`);
      return result.successful > 0;
    });
  }

  /** Removes the agent's tenant: its objects, vectors and indexes go with it. */
  async deleteAgent(agentId: string): Promise<void> {
    this.#open('deleteAgent');
    this.#uses.dropAgent(agentId);
    try {
      await this.#tenants.remove(tenantName(agentId));
    } catch (error) {
      throw storeError('deleteAgent', error, this.#secrets);
    }
  }

  /**
   * `score` = `cosine` = 1 - Weaviate's cosine distance. A search whose `signal` has
   * aborted is not sent; one under way runs to its end (the client's queries take no signal).
   */
  async nearest(agentId: string, query: VectorQuery): Promise<Match[]> {
    this.#open('nearest');
    query.signal?.throwIfAborted();
    const limit = this.#limit(query.limit);
    if (limit === 0) return [];
    return this.#read('nearest', agentId, [], async (objects) => {
      const found = await objects.query.nearVector(Array.from(query.vector), {
        limit,
        targetVector: VECTOR_NAME,
        filters: searchFilters(objects, query.kind, query.visible),
        returnMetadata: ['distance'],
      });
      return found.objects.map((o) => {
        const distance = o.metadata?.distance;
        if (distance === undefined) throw new Error('Weaviate returned a match without its distance');
        const similarity = cosineFromDistance(distance);
        const reflection = this.#uses.withUses(fromProperties(o.properties, agentId));
        return { id: reflection.id, reflection, score: similarity, cosine: similarity };
      });
    });
  }

  async vectors(agentId: string, ids: string[]): Promise<Map<string, Float32Array>> {
    this.#open('vectors');
    return this.#read('vectors', agentId, new Map<string, Float32Array>(), async (objects) => {
      const out = new Map<string, Float32Array>();
      for (const id of ids) {
        const found = await objects.query.fetchObjectById(reflectionUuid(agentId, id), { includeVector: [VECTOR_NAME] });
        const stored = found?.vectors?.[VECTOR_NAME];
        if (isFlat(stored)) out.set(id, Float32Array.from(stored));
      }
      return out;
    });
  }

  /**
   * BM25 by Weaviate over the query's words (keyword-terms.ts); no words, no call. With a
   * query vector, each match's stored vector comes back with it and the cosine is computed
   * here (one round trip instead of a second search). As for `nearest`, a search whose
   * `signal` has aborted is not sent.
   */
  async keywords(agentId: string, query: KeywordQuery): Promise<Match[]> {
    this.#open('keywords');
    query.signal?.throwIfAborted();
    const terms = keywordTerms(query.text);
    const limit = this.#limit(query.limit);
    if (terms.length === 0 || limit === 0) return [];
    const vector = query.vector;
    return this.#read('keywords', agentId, [], async (objects) => {
      const found = await objects.query.bm25(terms.join(' '), {
        limit,
        queryProperties: [...KEYWORD_PROPERTIES],
        filters: searchFilters(objects, query.kind, query.visible),
        returnMetadata: ['score'],
        ...(vector ? { includeVector: [VECTOR_NAME] } : {}),
      });
      return found.objects.map((o) => {
        const score = o.metadata?.score;
        if (score === undefined) throw new Error('Weaviate returned a match without its BM25 score');
        const stored = o.vectors?.[VECTOR_NAME];
        const similarity = vector && isFlat(stored) ? cosine(vector, stored) : 0;
        const reflection = this.#uses.withUses(fromProperties(o.properties, agentId));
        return { id: reflection.id, reflection, score, cosine: similarity };
      });
    });
  }

  /**
   * Counted in memory and written within `usageFlushMs` (and before any other write of
   * this store, and on close); reads through this store include them at once. Other
   * replicas see them once written. After close, uses are dropped: the process is
   * stopping, which the port lets lose about a second of uses anyway.
   */
  async markUsed(agentId: string, ids: string[], at: number): Promise<void> {
    if (ids.length === 0 || this.#closed) return;
    this.#uses.add(agentId, ids, at);
  }

  /** Writes the uses counted so far now. */
  flush(): Promise<void> {
    return this.#uses.flush();
  }

  /** Writes pending uses, then closes the client if the store opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#uses.stop();
    if (this.#ownsClient) await this.#client.close();
  }

  async #upsertAgent(agentId: string, batch: StoredReflection[]): Promise<void> {
    const tenant = tenantName(agentId);
    const objects = this.#agent(agentId);
    const write = () => eachLimited(batch, WRITE_CONCURRENCY, (r) => this.#upsertOne(objects, r));
    try {
      await this.#tenants.ensure(tenant);
      try {
        await write();
      } catch (error) {
        if (!(await this.#tenants.missing(tenant))) throw error;
        // Another replica deleted the agent since this one made its tenant: make it again.
        await this.#tenants.ensure(tenant);
        await write();
      }
    } catch (error) {
      throw storeError('upsert', error, this.#secrets);
    }
  }

  async #upsertOne(objects: Objects, r: StoredReflection): Promise<void> {
    const found = await objects.query.fetchObjectById(reflectionUuid(r.agentId, r.id));
    let next = plain(r);
    if (found) {
      const stored = fromProperties(found.properties, r.agentId);
      next = mergeUpsert(stored, next);
      if (await this.#patch(objects, next, upsertChanges(stored, next), r.vector)) return;
    }
    await this.#insert(objects, next, r.vector);
  }

  /** PATCHes a stored reflection; false when it no longer exists. */
  async #patch(
    objects: Objects,
    r: Reflection,
    properties: Partial<ReflectionProperties>,
    vector: Float32Array | undefined,
  ): Promise<boolean> {
    const uuid = reflectionUuid(r.agentId, r.id);
    try {
      const vectors = vector ? { vectors: { [VECTOR_NAME]: Array.from(vector) } } : {};
      await objects.data.update({ id: uuid, properties, ...vectors });
      return true;
    } catch (error) {
      const still = await objects.query.fetchObjectById(uuid).catch(() => undefined);
      if (still === null) return false;
      throw error;
    }
  }

  /**
   * A batch write, which overwrites an object with the same UUID whole. One object per
   * batch: for two or more objects, the client's batch serialiser (weaviate-client 3.14,
   * `Serialize.batchObjects`) polls for its own progress every 500 ms, which would add
   * half a second to every multi-reflection upsert.
   */
  async #insert(objects: Objects, r: Reflection, vector: Float32Array): Promise<void> {
    const result = await objects.data.insertMany([
      { id: reflectionUuid(r.agentId, r.id), properties: toProperties(r), vectors: { [VECTOR_NAME]: Array.from(vector) } },
    ]);
    if (result.hasErrors) {
      throw new Error(`Weaviate rejected reflection ${r.id}: ${Object.values(result.errors)[0]?.message}`);
    }
  }

  /**
   * Runs a read in the agent's tenant. A failure for want of a tenant means the agent has
   * no reflections (`empty`); anything else is an error naming Weaviate.
   */
  async #read<T>(operation: string, agentId: string, empty: T, work: (objects: Objects) => Promise<T>): Promise<T> {
    try {
      return await work(this.#agent(agentId));
    } catch (error) {
      if (!(error instanceof WeaviateStoreError) && (await this.#tenants.missing(tenantName(agentId)))) return empty;
      throw storeError(operation, error, this.#secrets);
    }
  }

  #agent(agentId: string): Objects {
    return this.#objects.withTenant(tenantName(agentId));
  }

  /** Every object of the tenant, by cursor (no sort, no offset: they cannot be combined). */
  async #scan(objects: Objects, agentId: string): Promise<Reflection[]> {
    const out: Reflection[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await objects.query.fetchObjects({ limit: PAGE, ...(after ? { after } : {}) });
      for (const o of page.objects) out.push(fromProperties(o.properties, agentId));
      if (page.objects.length < PAGE) return out;
      after = page.objects[page.objects.length - 1].uuid;
    }
  }

  #limit(limit: number): number {
    return Number.isFinite(limit) ? Math.min(Math.max(0, Math.floor(limit)), this.#maxQueryResults) : 0;
  }

  #open(operation: string): void {
    if (this.#closed) throw new WeaviateStoreError(operation, 'the store is closed');
  }
}

/**
 * "Not superseded", as Weaviate can say it of every object. Objects stored before the
 * supersession properties existed have no value for them, and they are current.
 * `isNull` would need the collection's `indexNullState`, which is fixed when a collection
 * is created (a collection made by an older release lacks it), and matching an empty
 * text depends on how a version tokenises it. `NotEqual` is the complement of `Equal`
 * over the tenant's objects (a deny list, since Weaviate 1.24; Engram requires 1.27), so
 * objects with no value match it. Hence a boolean written on every object, and "current"
 * as `superseded != true`, which matches objects written `false` and older ones alike;
 * `supersededBy` carries the id, not the filter. The Weaviate-specific tests store an
 * object the way an older release did and check it is found.
 */
function currentOnly(objects: Objects): FilterValue {
  return objects.filter.byProperty('superseded').notEqual(true);
}

/** Searches: current reflections only, of one kind if given, visible to the conversation if given. */
function searchFilters(objects: Objects, kind: ReflectionKind | undefined, visible: Visibility | undefined): FilterValue {
  const filters = [currentOnly(objects)];
  if (kind) filters.push(objects.filter.byProperty('kind').equal(kind));
  if (visible) filters.push(...visibleOnly(objects, visible));
  return filters.length === 1 ? filters[0] : Filters.and(...filters);
}

/**
 * `isVisible` as Weaviate filters: no scope (`scoped != true`, which older objects without
 * the property match too) or this scope; the same for the user.
 */
function visibleOnly(objects: Objects, visible: Visibility): FilterValue[] {
  const unscoped = objects.filter.byProperty('scoped').notEqual(true);
  const shared = objects.filter.byProperty('personal').notEqual(true);
  return [
    visible.scope ? Filters.or(unscoped, objects.filter.byProperty('scope').equal(visible.scope)) : unscoped,
    visible.user ? Filters.or(shared, objects.filter.byProperty('user').equal(visible.user)) : shared,
  ];
}

/**
 * `list`'s filters (mapping.ts `listed` is the same rule for lists read by cursor). "No
 * tag author" is `tagsBy` equal to none of them, for the same reason as `currentOnly`:
 * it matches objects with no value and those cleared to ''.
 */
function listFilters(objects: Objects, query: ListQuery): FilterValue | undefined {
  const filters: FilterValue[] = [];
  if (query.kind) filters.push(objects.filter.byProperty('kind').equal(query.kind));
  if (query.superseded === true) filters.push(objects.filter.byProperty('superseded').equal(true));
  if (query.superseded === false || query.needsTags) filters.push(currentOnly(objects));
  if (query.needsTags) for (const author of TAG_AUTHORS) filters.push(objects.filter.byProperty('tagsBy').notEqual(author));
  if (query.visible) filters.push(...visibleOnly(objects, query.visible));
  if (query.scope !== undefined) {
    filters.push(query.scope === null ? objects.filter.byProperty('scoped').notEqual(true) : objects.filter.byProperty('scope').equal(query.scope));
  }
  if (query.user !== undefined) {
    filters.push(query.user === null ? objects.filter.byProperty('personal').notEqual(true) : objects.filter.byProperty('user').equal(query.user));
  }
  return filters.length <= 1 ? filters[0] : Filters.and(...filters);
}

/** A stored reflection without its vector. */
function plain(r: StoredReflection): Reflection {
  const { vector: _vector, ...reflection } = r;
  return reflection;
}

/** A single (not multi-) vector as Weaviate returns it. */
function isFlat(vector: unknown): vector is number[] {
  return Array.isArray(vector) && (vector.length === 0 || typeof vector[0] === 'number');
}
