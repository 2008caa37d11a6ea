/**
 * Small helpers over NATS KV shared by the control stores, limited to what nats-server
 * 2.9 offers: revision-checked publishes (`Nats-Expected-Last-Subject-Sequence`),
 * stream purges by subject and sequence, ordered push consumers. Nothing here needs
 * per-key TTLs, limit markers or batch gets (2.10+).
 */
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Empty, errors, headers, nanos } from '@nats-io/transport-node';
import { EngramError } from '../../../errors.js';
import type { NatsContext } from '../connection.js';
import { kvSubject } from './keys.js';

/** Reports a failure that has no caller to reject (a background write, a lagging watch). */
export type ErrorReporter = (error: unknown, context: string) => void;

/** A value as stored, with the KV revision it was read at. */
export interface Stored<T> {
  value: T;
  revision: number;
}

/**
 * A call to NATS failed for another reason than NATS being unreachable (JetStream refused
 * it, a value was unreadable). The message names the bucket and the operation; `cause`
 * holds the client's error. Unreachable NATS is `EngramError('unavailable')` (see `guarded`).
 */
export class NatsStoreError extends Error {
  override name = 'NatsStoreError';
}

/** A read through a consumer made no progress: NATS went away in the middle of it. */
export class NatsStalledError extends Error {
  override name = 'NatsStalledError';
}

/** NATS did not answer: down, restarting, unreachable, or JetStream not (yet) available. */
function isUnreachable(error: unknown): boolean {
  return (
    error instanceof errors.TimeoutError ||
    error instanceof errors.ClosedConnectionError ||
    error instanceof errors.DrainingConnectionError ||
    error instanceof errors.ConnectionError ||
    error instanceof errors.NoRespondersError ||
    (error instanceof errors.RequestError && error.isNoResponders()) ||
    error instanceof NatsStalledError ||
    (error instanceof Error && error.name === 'JetStreamNotEnabled')
  );
}

/** Carries an error thrown by the caller's own code (a `change` callback) through `guarded` untouched. */
export class CallerError {
  constructor(readonly error: unknown) {}
}

/**
 * Runs `run`, naming `where` in what it throws: NATS unreachable becomes
 * `EngramError('unavailable')` (503: the client may retry; requests fail in their
 * protocol's envelope instead of hanging), any other failure a `NatsStoreError`.
 */
export async function guarded<T>(where: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof CallerError) throw error.error;
    if (error instanceof EngramError || error instanceof NatsStoreError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (isUnreachable(error)) throw new EngramError('unavailable', `${where} failed: NATS is unreachable (${message})`, { cause: error });
    throw new NatsStoreError(`${where} failed: ${message}`, { cause: error });
  }
}

export interface KvStoreOptions {
  bucket: string;
  /** A scan with no progress for this long fails (NATS went away mid-scan). */
  timeoutMs: number;
}

/**
 * What the control stores share around their bucket: each operation named in what it
 * throws (`guarded`), scans bounded by `timeoutMs`, and purges, which the stores whose
 * bucket nothing watches remove with (a delete marker would stay per pruned key forever;
 * the watched directory writes markers). Nothing to stop on close: the connection
 * belongs to the store's opener.
 */
export abstract class KvStore<Options extends KvStoreOptions = KvStoreOptions> {
  protected readonly stream: string;

  constructor(
    protected readonly ctx: NatsContext,
    protected readonly kv: KV,
    protected readonly options: Options,
  ) {
    this.stream = `KV_${options.bucket}`;
  }

  async close(): Promise<void> {}

  protected guard<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return guarded(`NATS KV ${this.options.bucket}: ${operation}`, run);
  }

  /** Creates `key` holding `record` and returns its revision; `EngramError('conflict', conflict)` when it holds a live value. */
  protected async create(key: string, record: unknown, conflict: string): Promise<number> {
    try {
      return await createKey(this.kv, key, JSON.stringify(record));
    } catch (error) {
      if (isWrongLastSequence(error)) throw new EngramError('conflict', conflict);
      throw error;
    }
  }

  /** Removes `key`'s value stored at `revision` (a newer one stays), leaving no delete marker. */
  protected purge(key: string, revision: number): Promise<boolean> {
    return purgeRevision(this.ctx.jsm, this.stream, kvSubject(this.options.bucket, key), revision);
  }

  /** Removes every value under a key filter (`conv.<agent>.>`) in one request. */
  protected async purgeAll(filter: string): Promise<number> {
    return (await this.ctx.jsm.streams.purge(this.stream, { filter: kvSubject(this.options.bucket, filter) })).purged;
  }

  protected scan<T>(filter: string, select: (entry: KvEntry) => T | undefined): Promise<Scanned<T>[]> {
    return scanLatest(this.kv, filter, this.options.timeoutMs, select);
  }

  /**
   * Purges, `PRUNE_CONCURRENCY` at a time, what a scan found, each at the revision the
   * scan saw (a key written since survives); `then` learns whether each went. How many went.
   */
  protected async purgeScanned<T>(found: Scanned<T>[], then?: (scanned: Scanned<T>, purged: boolean) => Promise<void> | void): Promise<number> {
    let pruned = 0;
    await forEachLimited(found, PRUNE_CONCURRENCY, async (scanned) => {
      const purged = await this.purge(scanned.key, scanned.revision);
      if (purged) pruned++;
      await then?.(scanned, purged);
    });
    return pruned;
  }

  /** Purges the keys under `filter` whose newest value is `old`, as `purgeScanned` does. */
  protected async pruneOld(filter: string, old: (entry: KvEntry) => boolean): Promise<number> {
    return this.purgeScanned(await this.scan(filter, (entry) => (old(entry) ? true : undefined)));
  }
}

/** Oldest first; records created in the same millisecond by id. */
export const byCreation = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Opens (creating when missing) a KV bucket with one value per key, on file storage. */
export function openBucket(ctx: NatsContext, bucket: string, replicas: number): Promise<KV> {
  // Only options 2.9 knows: no compression, metadata or markerTTL (those make the client
  // send stream settings a 2.9 server rejects).
  return new Kvm(ctx.js).create(bucket, { history: 1, storage: StorageType.File, replicas });
}

/**
 * Opens (creating when missing) a bucket whose values NATS forgets `maxAgeMs` after they
 * were written (the stream's `max_age`, which 2.9 knows). A bucket made with another age
 * (the setting changed) gets the new one: `Kvm.create` leaves an existing stream as it is.
 */
export async function openExpiringBucket(ctx: NatsContext, bucket: string, replicas: number, maxAgeMs: number): Promise<KV> {
  const kv = await new Kvm(ctx.js).create(bucket, { history: 1, storage: StorageType.File, replicas, ttl: maxAgeMs });
  const stream = `KV_${bucket}`;
  const { config } = await ctx.jsm.streams.info(stream);
  const maxAge = nanos(maxAgeMs);
  if (config.max_age !== maxAge) await ctx.jsm.streams.update(stream, { ...config, max_age: maxAge });
  return kv;
}

/** The publish was refused because the key is no longer at the expected revision. */
export function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Runs `attempt` (read a record, change it, write it checked against the revision read)
 * until it does not lose the race: a write refused for a newer revision runs it again on
 * the newer record, any other failure rejects. Past the third try the retries are spread
 * at random, so many writers on one record each get a winner quickly. After `attempts`
 * lost races it rejects with `exhausted`.
 */
export async function retryLostRaces<R>(attempts: number, exhausted: string, attempt: () => Promise<R>): Promise<R> {
  for (let round = 1; round <= attempts; round++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isWrongLastSequence(error)) throw error;
    }
    if (round > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * round * 2));
  }
  throw new Error(exhausted);
}

/**
 * Creates `key`, refused by the server when it holds a live value (a delete marker may be
 * replaced). `kv.create` does the same, but after any failure, a timeout included, it
 * asks the server again, doubling the wait when NATS is unreachable.
 */
export async function createKey(kv: KV, key: string, value: string): Promise<number> {
  try {
    return await kv.put(key, value, { previousSeq: 0 });
  } catch (error) {
    if (!isWrongLastSequence(error)) throw error;
    const entry = await kv.get(key);
    if (entry && entry.operation !== 'PUT') return kv.put(key, value, { previousSeq: entry.revision });
    throw error;
  }
}

/**
 * The live value of `key` parsed as JSON, or undefined when it is absent or deleted, or
 * when `owns` finds it another record's (ids whose key digests collide, `keyPart`).
 */
export async function readJson<T>(kv: KV, key: string, owns?: (value: T) => boolean): Promise<Stored<T> | undefined> {
  const entry = await kv.get(key);
  if (!entry || entry.operation !== 'PUT') return undefined;
  const value = entry.json<T>();
  return !owns || owns(value) ? { value, revision: entry.revision } : undefined;
}

/**
 * Writes a delete marker for `key` (the KV `delete` of ADR-8), only if the key is still at
 * `expected` when given, and returns the marker's revision. `kv.delete` returns nothing,
 * and the directory needs the revision to wait until its own watch has seen the delete.
 */
export async function writeDeleteMarker(js: JetStreamClient, bucket: string, key: string, expected?: number): Promise<number> {
  const marker = headers();
  marker.set('KV-Operation', 'DEL');
  const ack = await js.publish(kvSubject(bucket, key), Empty, {
    headers: marker,
    ...(expected === undefined ? {} : { expect: { lastSubjectSequence: expected } }),
  });
  return ack.seq;
}

/**
 * Removes the value of `key` stored at `revision`, leaving no delete marker behind (the
 * buckets pruned hourly would otherwise keep one marker per pruned key forever). A
 * newer value of the key survives: the purge only takes messages below `revision + 1`.
 * True when it removed that revision. Exact because the buckets keep one value per key.
 * (`revision + 1` is at least 2: 2.9 purges a subject whole when asked for `seq: 1`.)
 */
export async function purgeRevision(jsm: JetStreamManager, stream: string, subject: string, revision: number): Promise<boolean> {
  const response = await jsm.streams.purge(stream, { filter: subject, seq: revision + 1 });
  return response.purged > 0;
}

/** What a scan kept of one key: its revision and what `select` made of its value. */
export interface Scanned<T> {
  key: string;
  revision: number;
  item: T;
}

/**
 * Goes through the live values under a key filter with one ordered consumer (not a
 * request per key), keeping only what `select` returns for each (undefined: skip it), so a
 * scan of large values holds little. The newest revision of each key counts. Fails after
 * `idleMs` without progress (NATS gone mid-scan) rather than waiting for the consumer's
 * 30 s heartbeats.
 */
export async function scanLatest<T>(kv: KV, filter: string, idleMs: number, select: (entry: KvEntry) => T | undefined): Promise<Scanned<T>[]> {
  const latest = new Map<string, { revision: number; item: T | undefined }>();
  const entries = await kv.history({ key: filter });
  let watchdog: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => entries.stop(new NatsStalledError(`no progress reading ${filter} for ${idleMs} ms`)), idleMs);
  };
  try {
    arm();
    for await (const entry of entries) {
      arm();
      const seen = latest.get(entry.key);
      if (seen && seen.revision > entry.revision) continue;
      latest.set(entry.key, { revision: entry.revision, item: entry.operation === 'PUT' ? select(entry) : undefined });
    }
  } finally {
    clearTimeout(watchdog);
  }
  return [...latest].flatMap(([key, { revision, item }]) => (item === undefined ? [] : [{ key, revision, item }]));
}

/** Purges in flight at once while pruning. */
export const PRUNE_CONCURRENCY = 16;

/** Runs `task` over `items` with at most `limit` in flight; resolves when all are done. */
export async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A promise that settles after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
