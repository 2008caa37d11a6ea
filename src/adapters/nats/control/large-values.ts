/**
 * Values of the control stores too large for one KV message, in a NATS Object Store
 * (chunked by the client to the server's max_payload). A store keeps the object's name in
 * its KV value (a pointer), writes the object before its pointer and removes the pointer
 * before its object; this module holds what every such store needs around that: the size
 * that still fits in one message, reading through a pointer that may be replaced meanwhile,
 * and sweeping objects a crash left without a pointer.
 *
 * One bucket, `<prefix>_response_bodies` (named for its first user; a new name would
 * strand the objects of existing deployments), shared by the stores through disjoint
 * names, so each sweeps only its own:
 *
 * | store         | object names                      |
 * |---------------|-----------------------------------|
 * | Responses     | `<agent>.<id>` (never a `/`)      |
 * | Conversations | `conv/<agent>.<id>.<unique>`      |
 *
 * Removing an object the client's way leaves a "deleted" metadata entry per object
 * forever; `remove` purges that entry too, conditioned on its revision so a concurrent
 * put of the same name keeps its metadata.
 */
import type { ObjectInfo, ObjectStore } from '@nats-io/obj';
import type { JetStreamManager } from '@nats-io/jetstream';
import { withDeadline, type NatsContext } from '../connection.js';
import { forEachLimited, NatsStalledError, purgeRevision, type ErrorReporter } from './kv-support.js';

/** Listing metadata is one small message per object: this many idle timeouts is ample. */
const LIST_DEADLINE_FACTOR = 6;
/** Room left in a message for the subject, headers and protocol line. */
const MESSAGE_OVERHEAD = 4 * 1024;
/** An object without a pointer is only swept once this old: its pointer may still be on its way. */
const ORPHAN_AGE_MS = 60 * 60 * 1000;
/** A read without a chunk for this long checks whether its object was deleted under it. */
const PROBE_MS = 200;
/** Reads that lose a race with a replacement (their object deleted under them) try again this often. */
const READ_ATTEMPTS = 5;
const REMOVE_CONCURRENCY = 16;

/**
 * The largest KV value that fits in one message: the server's max_payload less room for
 * the rest of the message. Read per write: the connection may have moved to a server with
 * another limit.
 */
export function maxValueBytes(ctx: NatsContext): number {
  return (ctx.nc.info?.max_payload ?? 1024 * 1024) - MESSAGE_OVERHEAD;
}

export interface LargeValuesOptions {
  bucket: string;
  /** A read fails after this long without a chunk (NATS gone mid-read) rather than waiting on heartbeats. */
  idleMs: number;
  now: () => number;
  /** Failed removals of objects nothing points to any more: left for the sweep, reported here. */
  onError: ErrorReporter;
}

export class LargeValues {
  readonly #os: ObjectStore;
  readonly #jsm: JetStreamManager;
  readonly #options: LargeValuesOptions;

  constructor(os: ObjectStore, jsm: JetStreamManager, options: LargeValuesOptions) {
    this.#os = os;
    this.#jsm = jsm;
    this.#options = options;
  }

  async put(name: string, text: string): Promise<void> {
    await this.#os.putBlob({ name }, Buffer.from(text, 'utf8'));
  }

  /**
   * The object's text, or undefined when there is no such object, including one deleted
   * while it was being read (its pointer was replaced: the caller reads the pointer again).
   * Never a part of it: a read that stops short fails.
   */
  async get(name: string): Promise<string | undefined> {
    const result = await this.#os.get(name);
    if (!result) return undefined;
    result.error.catch(() => undefined); // a failed read also fails `reader.read()`, which reports it
    const reader = result.data.getReader();
    const abandon = (pending: Promise<unknown>) => {
      pending.catch(() => undefined); // settles (done) on cancel; nobody waits for it any more
      void reader.cancel();
    };
    const chunks: Uint8Array[] = [];
    let size = 0;
    let pending = reader.read();
    let lastProgress = Date.now();
    for (;;) {
      const step = await withTimer(pending, Math.min(PROBE_MS, this.#options.idleMs));
      if (step === TIMED_OUT) {
        // Deleted under us: the chunks are purged and will never come. Otherwise NATS may be gone.
        const live = await this.#os.info(name);
        if (!live || live.deleted || live.nuid !== result.info.nuid) {
          abandon(pending);
          return undefined;
        }
        if (Date.now() - lastProgress < this.#options.idleMs) continue;
        abandon(pending);
        throw new NatsStalledError(`no progress reading object ${name} for ${this.#options.idleMs} ms`);
      }
      if (step.done) break;
      chunks.push(step.value);
      size += step.value.byteLength;
      lastProgress = Date.now();
      pending = reader.read();
    }
    // The client checks the SHA-256 of what it read and reports a mismatch here.
    await result.error;
    if (size !== result.info.size) throw new Error(`read ${size} of the ${result.info.size} bytes of object ${name}`);
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Reads a value with `read` and resolves it with `resolve`, which loads the object a
   * pointer names through `load`. An object that is gone (or whose chunks vanish mid-read)
   * was deleted by a writer that replaced the pointer: the value is read again. `label`
   * names the value in the error thrown when that keeps happening.
   */
  async readThrough<V, R>(
    read: () => Promise<V | undefined>,
    resolve: (value: V, load: (name: string) => Promise<string>) => R | Promise<R>,
    label: string,
  ): Promise<R | undefined> {
    const load = async (name: string): Promise<string> => {
      let text: string | undefined;
      try {
        text = await this.get(name);
      } catch (error) {
        // A replacement purging the chunks being read shows as a stall or a digest mismatch.
        throw new Replaced(error);
      }
      if (text === undefined) throw new Replaced(new Error(`the content of ${label} is missing from the object store (object ${name})`));
      return text;
    };
    for (let attempt = 1; ; attempt++) {
      const value = await read();
      if (value === undefined) return undefined;
      try {
        return await resolve(value, load);
      } catch (error) {
        if (!(error instanceof Replaced)) throw error;
        if (attempt >= READ_ATTEMPTS) throw error.cause;
      }
    }
  }

  async remove(name: string): Promise<void> {
    const live = await this.#os.info(name);
    if (!live || live.deleted) return;
    await this.#os.delete(name);
    const tombstone = await this.#os.info(name);
    if (tombstone?.deleted) await purgeRevision(this.#jsm, `OBJ_${this.#options.bucket}`, metaSubject(this.#options.bucket, name), tombstone.revision);
  }

  /**
   * Removes an object its pointer no longer names (replaced, purged, or never written): a
   * failure only leaves work for the sweep, so it is reported rather than thrown.
   */
  async discard(name: string): Promise<void> {
    await this.remove(name).catch((error: unknown) => this.#options.onError(error, `removing object ${name} of ${this.#options.bucket}`));
  }

  async discardAll(names: readonly string[]): Promise<void> {
    await forEachLimited(names, REMOVE_CONCURRENCY, (name) => this.discard(name));
  }

  /**
   * Removes a store's objects (`owns`) that no pointer names (`referenced`, the pointers a
   * scan saw) once they are an hour old: a pointer written after the scan names a newer
   * object, and an object written long ago without its pointer was left by a crash or a
   * failed write.
   */
  async sweepOrphans(owns: (name: string) => boolean, referenced: ReadonlySet<string>): Promise<void> {
    const cutoff = this.#options.now() - ORPHAN_AGE_MS;
    const orphans = (await this.#list()).filter((info) => owns(info.name) && !referenced.has(info.name) && Date.parse(info.mtime) < cutoff);
    await this.discardAll(orphans.map((info) => info.name));
  }

  /**
   * Every live object (names and modification times). Bounded by a deadline: the client's
   * listing only notices a vanished server through heartbeats.
   */
  #list(): Promise<ObjectInfo[]> {
    const deadlineMs = this.#options.idleMs * LIST_DEADLINE_FACTOR;
    return withDeadline(this.#os.list(), deadlineMs, () => new NatsStalledError(`listing ${this.#options.bucket} took over ${deadlineMs} ms`));
  }
}

const TIMED_OUT = Symbol('timed out');

/** What `promise` settles to, or TIMED_OUT if it has not after `ms`. */
async function withTimer<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** An object could not be read because a newer value replaced its pointer (probably): read the pointer again. */
class Replaced {
  constructor(readonly cause: unknown) {}
}

/** The subject of an object's metadata (ADR-20): base64url of the name, padded. */
function metaSubject(bucket: string, name: string): string {
  const encoded = Buffer.from(name, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return `$O.${bucket}.M.${encoded}`;
}
