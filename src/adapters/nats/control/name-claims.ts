/**
 * Unique names over NATS KV, which has no transactions across keys: a name is held by a
 * claim key (`orgname.<name>`, `agentname.<org>.<name>`) created with `kv.create`, which
 * fails atomically when the key exists. A writer claims the name first, then writes its
 * record, and releases the claim when the record write fails.
 *
 * A crash between the two leaves a claim without its record (or, for a rename, with a
 * record under another name). Such a claim is dead: the next writer wanting the name
 * takes it over, revision-checked. It is only judged dead once it is older than
 * `staleAfterMs` (about two request timeouts), because a claim a moment old may belong to
 * a writer whose record write is still in flight; judging by the record alone would let
 * two writers both win. Claim ages use the server's timestamp of the claim against this
 * machine's clock, so clocks must agree to well within `staleAfterMs`.
 */
import type { KV } from '@nats-io/kv';
import type { JetStreamClient } from '@nats-io/jetstream';
import { EngramError } from '../../../errors.js';
import { createKey, isWrongLastSequence, readJson, writeDeleteMarker } from './kv-support.js';

/** Who holds a name: the record's id, the full name (keys may hold only a digest of it), its org for agents. */
export interface NameClaim {
  id: string;
  name: string;
  orgId?: string;
}

export interface NameClaimsOptions {
  kv: KV;
  js: JetStreamClient;
  bucket: string;
  staleAfterMs: number;
  now: () => number;
}

/** Whether the holder's record still exists under that name. */
export type ClaimCheck = (held: NameClaim) => Promise<boolean>;

const ATTEMPTS = 5;

export class NameClaims {
  readonly #options: NameClaimsOptions;

  constructor(options: NameClaimsOptions) {
    this.#options = options;
  }

  /**
   * Claims `key` for `claim.id` and returns the claim's revision; a claim this id already
   * holds is kept. Rejects with `EngramError('conflict', conflictMessage)` while a live
   * record, or a writer still within `staleAfterMs`, holds it.
   */
  async take(key: string, claim: NameClaim, isLive: ClaimCheck, conflictMessage: string): Promise<number> {
    const { kv, staleAfterMs, now } = this.#options;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        return await createKey(kv, key, JSON.stringify(claim));
      } catch (error) {
        if (!isWrongLastSequence(error)) throw error;
      }
      const entry = await kv.get(key);
      if (!entry || entry.operation !== 'PUT') continue; // released meanwhile: create again
      const held = entry.json<NameClaim>();
      if (held.id === claim.id && held.name === claim.name) return entry.revision;
      const young = now() - entry.created.getTime() < staleAfterMs;
      if (young || held.name !== claim.name || (await isLive(held))) throw new EngramError('conflict', conflictMessage);
      try {
        return await kv.update(key, JSON.stringify(claim), entry.revision);
      } catch (error) {
        if (!isWrongLastSequence(error)) throw error; // another writer took it over first: look again
      }
    }
    throw new EngramError('conflict', conflictMessage);
  }

  /** True while `key` holds `id`'s claim (another writer may have taken over a dead one). */
  async holds(key: string, id: string): Promise<boolean> {
    const held = await readJson<NameClaim>(this.#options.kv, key);
    return held?.value.id === id;
  }

  /**
   * Frees `key` if it still holds `id`'s claim; another holder's claim is left alone.
   * Returns the revision of the delete, if it wrote one.
   */
  async release(key: string, id: string): Promise<number | undefined> {
    const { kv, js, bucket } = this.#options;
    const held = await readJson<NameClaim>(kv, key);
    if (held?.value.id !== id) return undefined;
    try {
      return await writeDeleteMarker(js, bucket, key, held.revision);
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined; // changed hands in between
      throw error;
    }
  }
}
