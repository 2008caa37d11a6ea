/**
 * `lastUsedAt` of tokens, recorded at most once per `resolutionMs` per token so that the
 * lookup on every proxied request stays a read. The write happens in the background: the
 * lookup's answer never waits for NATS, and a failed write is only reported (the next use
 * tries again). Writes are revision-checked against the record the lookup saw, so one can
 * never undo a revocation that came in between; losing that race is not an error.
 */
import type { KV } from '@nats-io/kv';
import type { TokenRecord } from '../../../domain/types.js';
import type { DirectoryMirror, StoredToken } from './directory-mirror.js';
import { directoryKeys } from './keys.js';
import { isWrongLastSequence, type ErrorReporter, type Stored } from './kv-support.js';

export interface TokenUsesOptions {
  resolutionMs: number;
  timeoutMs: number;
  onError: ErrorReporter;
}

export class TokenUses {
  readonly #kv: KV;
  readonly #mirror: DirectoryMirror;
  readonly #options: TokenUsesOptions;
  /** Hashes of tokens whose write is in flight, and those writes (awaited by `settled`). */
  readonly #inFlight = new Set<string>();
  readonly #writes = new Set<Promise<void>>();

  constructor(kv: KV, mirror: DirectoryMirror, options: TokenUsesOptions) {
    this.#kv = kv;
    this.#mirror = mirror;
    this.#options = options;
  }

  due(token: TokenRecord, now: number): boolean {
    return token.lastUsedAt === null || now - token.lastUsedAt >= this.#options.resolutionMs;
  }

  /** Starts writing `lastUsedAt = now` onto the stored token; returns at once. */
  record(stored: Stored<StoredToken>, now: number): void {
    const { hash, token } = stored.value;
    if (this.#inFlight.has(hash)) return;
    this.#inFlight.add(hash);
    const write = (async () => {
      try {
        const value = JSON.stringify({ hash, token: { ...token, lastUsedAt: now } });
        const revision = await this.#kv.update(directoryKeys.token(hash), value, stored.revision);
        // Until the mirror has it, further lookups would try the same (then stale) write again.
        await this.#mirror.waitFor(revision, this.#options.timeoutMs);
      } catch (error) {
        // Lost to a revocation or another replica's use: that write stands.
        if (!isWrongLastSequence(error)) this.#options.onError(error, `recording a use of token ${token.id}`);
      } finally {
        this.#inFlight.delete(hash);
      }
    })();
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }

  /** Resolves when the writes in flight have finished (each is bounded by the client's timeout). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#writes]);
  }
}
