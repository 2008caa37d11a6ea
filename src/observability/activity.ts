/**
 * Counts per agent and day for the dashboard (requests, injected reflections, extraction
 * jobs done), summed in this process and written to the activity store every few seconds
 * and on close: the proxy's hot path pays one map update, never a write. A failed flush
 * keeps its counts for the next one (bounded: past `MAX_PENDING` agent-days the oldest
 * are dropped and reported), so a store that is briefly down loses nothing.
 */
import type { ActivityStore, DailyCounts } from '../ports/activity.js';
import type { Metrics } from './metrics.js';

const FLUSH_EVERY_MS = 5_000;
const MAX_PENDING = 100_000;

/** `YYYY-MM-DD` of a time, UTC. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export interface ActivityRecorderOptions {
  store: ActivityStore;
  now: () => number;
  onError: (error: unknown) => void;
  flushEveryMs?: number;
}

interface Pending extends DailyCounts {
  agentId: string;
  day: string;
}

export class ActivityRecorder {
  readonly #store: ActivityStore;
  readonly #now: () => number;
  readonly #onError: (error: unknown) => void;
  readonly #everyMs: number;
  #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;

  constructor(options: ActivityRecorderOptions) {
    this.#store = options.store;
    this.#now = options.now;
    this.#onError = options.onError;
    this.#everyMs = options.flushEveryMs ?? FLUSH_EVERY_MS;
  }

  record(agentId: string, counts: Partial<DailyCounts>): void {
    this.#add(agentId, dayOf(this.#now()), counts);
  }

  #add(agentId: string, day: string, counts: Partial<DailyCounts>): void {
    const key = `${agentId}\n${day}`;
    let pending = this.#pending.get(key);
    if (!pending) {
      if (this.#pending.size >= MAX_PENDING) this.#dropOldest();
      pending = { agentId, day, requests: 0, injected: 0, extractions: 0 };
      this.#pending.set(key, pending);
    }
    pending.requests += counts.requests ?? 0;
    pending.injected += counts.injected ?? 0;
    pending.extractions += counts.extractions ?? 0;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, this.#everyMs).unref();
  }

  /** Writes what was counted so far; resolves once written (or kept back after a failure). */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    await this.flush();
  }

  async #write(): Promise<void> {
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    for (const item of batch) {
      try {
        await this.#store.add(item.agentId, item.day, { requests: item.requests, injected: item.injected, extractions: item.extractions });
      } catch (error) {
        this.#onError(error);
        this.#add(item.agentId, item.day, item);
      }
    }
  }

  #dropOldest(): void {
    const [oldest] = this.#pending.keys();
    if (oldest !== undefined) this.#pending.delete(oldest);
    this.#onError(new Error(`more than ${MAX_PENDING} agent-days of activity waiting to be written: the oldest are dropped`));
  }
}

/** The metrics, also counting each proxied exchange and its injected reflections for the agent's day. */
export function withActivity(metrics: Metrics, activity: ActivityRecorder): Metrics {
  return {
    ...metrics,
    exchangeFinished(summary) {
      metrics.exchangeFinished(summary);
      activity.record(summary.agentId, { requests: 1, injected: summary.injected });
    },
  };
}
