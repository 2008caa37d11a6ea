/**
 * Uses of reflections (`markUsed`) not yet written to Weaviate. `markUsed` runs on every
 * proxied request, and a use is a read-modify-write of two properties; so uses are
 * counted here and written together about once a second (the port allows it).
 *
 * A use is pending (counted, not yet taken for a write) or in flight (taken; its write
 * may or may not have reached Weaviate). Reads through the store add both, so they see
 * every use at once. For an in-flight use whose target is known, a read that already
 * shows the target `useCount` has seen the write, and the use is not added twice.
 */

export interface Use {
  agentId: string;
  id: string;
  /** Calls that named the reflection. */
  count: number;
  /** Latest `at` of those calls. */
  at: number;
  /** The useCount being written, once the write has read the stored one. */
  target?: number;
  /** Its agent was deleted while the use was in flight: never put back. */
  dropped?: boolean;
}

export class PendingUses {
  #pending = new Map<string, Use>();
  readonly #inFlight = new Set<Use>();

  get empty(): boolean {
    return this.#pending.size === 0;
  }

  /** One use of each distinct id at `at`. */
  add(agentId: string, ids: Iterable<string>, at: number): void {
    for (const id of new Set(ids)) {
      const k = key(agentId, id);
      const use = this.#pending.get(k);
      if (!use) this.#pending.set(k, { agentId, id, count: 1, at });
      else {
        use.count++;
        use.at = Math.max(use.at, at);
      }
    }
  }

  /** Moves every pending use in flight and returns them, for one write. */
  take(): Use[] {
    const taken = [...this.#pending.values()];
    this.#pending = new Map();
    for (const use of taken) this.#inFlight.add(use);
    return taken;
  }

  /** The write of an in-flight use is over: written, or dropped (its reflection is gone). */
  settle(use: Use): void {
    this.#inFlight.delete(use);
  }

  /** The write failed: the use is pending again, for the next write (false: dropped instead). */
  restore(use: Use): boolean {
    this.#inFlight.delete(use);
    if (use.dropped) return false;
    const { agentId, id, count, at } = use;
    const k = key(agentId, id);
    const known = this.#pending.get(k);
    if (known) {
      known.count += count;
      known.at = Math.max(known.at, at);
    } else this.#pending.set(k, { agentId, id, count, at });
    return true;
  }

  /** Forgets an agent's uses (its reflections were deleted). */
  dropAgent(agentId: string): void {
    for (const [k, use] of this.#pending) if (use.agentId === agentId) this.#pending.delete(k);
    for (const use of this.#inFlight) {
      if (use.agentId !== agentId) continue;
      use.dropped = true;
      this.#inFlight.delete(use);
    }
  }

  /**
   * The uses a read of a stored reflection (whose stored counters are given) does not
   * show yet: how many to add to its useCount, and the latest `at` among them.
   */
  unseen(agentId: string, id: string, storedUseCount: number): { count: number; at: number } | undefined {
    let count = 0;
    let at = -Infinity;
    const pending = this.#pending.get(key(agentId, id));
    if (pending) {
      count += pending.count;
      at = pending.at;
    }
    for (const use of this.#inFlight) {
      if (use.agentId !== agentId || use.id !== id) continue;
      if (use.target !== undefined && storedUseCount >= use.target) continue;
      count += use.count;
      at = Math.max(at, use.at);
    }
    return count === 0 ? undefined : { count, at };
  }
}

function key(agentId: string, id: string): string {
  return JSON.stringify([agentId, id]);
}
