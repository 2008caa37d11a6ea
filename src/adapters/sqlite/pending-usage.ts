/**
 * Uses of reflections (`markUsed`) not yet written to SQLite. `markUsed` runs on every
 * proxied request; a write transaction each time would cost more than the rest of the
 * reflection store's work, so uses are counted here and written together at most once
 * per flush interval (see SqliteReflectionStore).
 */

export interface Use {
  /** Calls that named the reflection. */
  count: number;
  /** Latest `at` of those calls. */
  at: number;
}

export type UseLog = Map<string, Map<string, Use>>;

export class PendingUsage {
  #byAgent: UseLog = new Map();
  #timer: NodeJS.Timeout | undefined;
  readonly #flushMs: number;
  readonly #onDue: () => void;

  /** `onDue` runs `flushMs` after a use is added to an empty log (on an unref'd timer). */
  constructor(flushMs: number, onDue: () => void) {
    this.#flushMs = flushMs;
    this.#onDue = onDue;
  }

  get empty(): boolean {
    return this.#byAgent.size === 0;
  }

  /** One use of each id, at `at`; `ids` must be distinct (one SQL update each). */
  add(agentId: string, ids: Iterable<string>, at: number): void {
    let uses = this.#byAgent.get(agentId);
    if (!uses) this.#byAgent.set(agentId, (uses = new Map()));
    for (const id of ids) {
      const use = uses.get(id);
      if (!use) uses.set(id, { count: 1, at });
      else {
        use.count++;
        if (at > use.at) use.at = at;
      }
    }
    this.#arm();
  }

  /** Pending uses of one agent's reflection. */
  get(agentId: string, id: string): Use | undefined {
    return this.#byAgent.get(agentId)?.get(id);
  }

  /** Pending uses of one agent. */
  of(agentId: string): ReadonlyMap<string, Use> | undefined {
    return this.#byAgent.get(agentId);
  }

  /** Empties the log and returns what it held. */
  take(): UseLog {
    const taken = this.#byAgent;
    this.#byAgent = new Map();
    this.#disarm();
    return taken;
  }

  /** Puts back uses taken for a write that failed. */
  restore(log: UseLog): void {
    for (const [agentId, uses] of log) {
      let current = this.#byAgent.get(agentId);
      if (!current) this.#byAgent.set(agentId, (current = new Map()));
      for (const [id, use] of uses) {
        const known = current.get(id);
        current.set(id, known ? { count: known.count + use.count, at: Math.max(known.at, use.at) } : { ...use });
      }
    }
    if (!this.empty) this.#arm();
  }

  /** Stops the timer (the log keeps its contents). */
  #disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#onDue();
    }, this.#flushMs);
    // Pending uses never keep the process alive; close() writes them.
    this.#timer.unref();
  }
}
