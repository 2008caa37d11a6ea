/**
 * Rate and concurrency limits kept in this process: a request rate per key (an agent, a
 * token) and a number of requests in flight per key. Limits are per replica: behind a
 * load balancer spreading clients over N replicas, a client gets up to N times the rate.
 *
 * The rate is the generic cell rate algorithm (one number per key: when the key's next
 * request is due), which allows a burst of `burst` requests and then `perMinute` a
 * minute, and says exactly how long to wait when it refuses.
 */

export interface RateLimit {
  /** Sustained requests per minute. */
  perMinute: number;
  /** Requests allowed at once after a quiet period; `perMinute` when absent. */
  burst?: number;
}

/** Keys idle this long have a full burst again and are dropped, so memory follows active keys. */
const PRUNE_EVERY_MS = 60_000;

export class RateLimiter {
  readonly #interval: number;
  readonly #tolerance: number;
  readonly #now: () => number;
  /** Per key, the theoretical arrival time of its next request (ms). */
  readonly #due = new Map<string, number>();
  #prunedAt: number;

  constructor(limit: RateLimit, now: () => number = Date.now) {
    if (!(limit.perMinute > 0)) throw new RangeError('perMinute must be positive');
    this.#interval = 60_000 / limit.perMinute;
    this.#tolerance = this.#interval * (Math.max(1, Math.floor(limit.burst ?? limit.perMinute)) - 1);
    this.#now = now;
    this.#prunedAt = now();
  }

  /** Counts one request for `key`: 0 when it may go, else the milliseconds to wait before one may. */
  take(key: string): number {
    const wait = this.wait(key);
    if (wait === 0) {
      const now = this.#now();
      this.#due.set(key, Math.max(this.#due.get(key) ?? now, now) + this.#interval);
    }
    return wait;
  }

  /** What `take` would answer, without counting anything. */
  wait(key: string): number {
    const now = this.#now();
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) this.#prune(now);
    const due = Math.max(this.#due.get(key) ?? now, now);
    return Math.max(0, Math.ceil(due - this.#tolerance - now));
  }

  /** Keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.#due.size;
  }

  #prune(now: number): void {
    this.#prunedAt = now;
    for (const [key, due] of this.#due) if (due <= now) this.#due.delete(key);
  }
}

/** At most `max` holders per key at once; `enter` answers a release function, or undefined when full. */
export class ConcurrencyLimiter {
  readonly #max: number;
  readonly #held = new Map<string, number>();

  constructor(max: number) {
    if (!(max > 0)) throw new RangeError('max must be positive');
    this.#max = max;
  }

  enter(key: string): (() => void) | undefined {
    const held = this.#held.get(key) ?? 0;
    if (held >= this.#max) return undefined;
    this.#held.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left <= 0) this.#held.delete(key);
      else this.#held.set(key, left);
    };
  }

  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }
}
