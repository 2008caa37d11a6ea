/**
 * Sealed content of response records too large for one KV value, in a NATS Object Store
 * (chunked by the client to the server's max_payload).
 *
 * Removing an object the client's way leaves a "deleted" metadata entry per object
 * forever; `remove` purges that entry too, conditioned on its revision so a concurrent
 * put of the same name keeps its metadata.
 */
import type { ObjectInfo, ObjectStore } from '@nats-io/obj';
import type { JetStreamManager } from '@nats-io/jetstream';
import { NatsStalledError, purgeRevision } from './kv-support.js';

/** Listing metadata is one small message per object: this many idle timeouts is ample. */
const LIST_DEADLINE_FACTOR = 6;

export interface ResponseBodiesOptions {
  bucket: string;
  /** A read fails after this long without a chunk (NATS gone mid-read) rather than waiting on heartbeats. */
  idleMs: number;
}

export class ResponseBodies {
  readonly #os: ObjectStore;
  readonly #jsm: JetStreamManager;
  readonly #options: ResponseBodiesOptions;

  constructor(os: ObjectStore, jsm: JetStreamManager, options: ResponseBodiesOptions) {
    this.#os = os;
    this.#jsm = jsm;
    this.#options = options;
  }

  async put(name: string, text: string): Promise<void> {
    await this.#os.putBlob({ name }, Buffer.from(text, 'utf8'));
  }

  /** The object's text, or undefined when there is no such object. */
  async get(name: string): Promise<string | undefined> {
    const result = await this.#os.get(name);
    if (!result) return undefined;
    const reader = result.data.getReader();
    const chunks: Uint8Array[] = [];
    let watchdog: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      watchdog = setTimeout(() => {
        void reader.cancel();
        reject(new NatsStalledError(`no progress reading object ${name} for ${this.#options.idleMs} ms`));
      }, this.#options.idleMs);
    });
    stalled.catch(() => undefined); // observed through the race below
    try {
      for (;;) {
        const { done, value } = await Promise.race([reader.read(), stalled]);
        if (done) break;
        chunks.push(value);
        watchdog?.refresh();
      }
      // The client checks the SHA-256 of what it read and reports a mismatch here.
      await result.error;
    } finally {
      clearTimeout(watchdog);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async remove(name: string): Promise<void> {
    const live = await this.#os.info(name);
    if (!live || live.deleted) return;
    await this.#os.delete(name);
    const tombstone = await this.#os.info(name);
    if (tombstone?.deleted) await purgeRevision(this.#jsm, `OBJ_${this.#options.bucket}`, metaSubject(this.#options.bucket, name), tombstone.revision);
  }

  /**
   * Every live object (names and modification times), for sweeping orphans. Bounded by a
   * deadline: the client's listing only notices a vanished server through heartbeats.
   */
  async list(): Promise<ObjectInfo[]> {
    const deadlineMs = this.#options.idleMs * LIST_DEADLINE_FACTOR;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new NatsStalledError(`listing ${this.#options.bucket} took over ${deadlineMs} ms`)), deadlineMs);
    });
    try {
      return await Promise.race([this.#os.list(), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The subject of an object's metadata (ADR-20): base64url of the name, padded. */
function metaSubject(bucket: string, name: string): string {
  const encoded = Buffer.from(name, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return `$O.${bucket}.M.${encoded}`;
}
