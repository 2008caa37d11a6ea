/**
 * Counts per agent and day for the dashboard (requests, injected reflections, extraction
 * jobs done, what extraction and tagging calls spent), summed in this process and written to the activity store every few seconds
 * and on close: the proxy's hot path pays one map update, never a write. A failed flush
 * keeps its counts for the next one (bounded: past `MAX_PENDING` agent-days the oldest
 * are dropped and reported), so a store that is briefly down loses nothing.
 */
import { ACTIVITY_COUNTS, emptyCounts, tokensSpent } from '../domain/activity.js';
import type { ActivityStore, DailyCounts } from '../ports/activity.js';
import type { Metrics } from './metrics.js';
import type { SpendMeter } from '../memory/budget.js';

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
      pending = { agentId, day, ...emptyCounts() };
      this.#pending.set(key, pending);
    }
    for (const name of ACTIVITY_COUNTS) pending[name] += counts[name] ?? 0;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, this.#everyMs).unref();
  }

  /**
   * The input and output tokens the agent's extraction and tagging calls spent today
   * (UTC, by the clock): what the store holds plus what this process counted and has not
   * written yet. Other replicas' counts arrive with their next flush, so a budget may be
   * passed by a few seconds of their calls.
   */
  async tokensToday(agentId: string): Promise<number> {
    const day = dayOf(this.#now());
    // A flush in progress took its batch out of the map: wait until it is stored. Then the
    // map before the store: a flush in between counts twice (the budget errs on the safe side), never not at all.
    await this.#flushing;
    const unwritten = tokensSpent(this.#pending.get(`${agentId}\n${day}`) ?? {});
    const stored = (await this.#store.read(agentId, day)).find((row) => row.day === day);
    return tokensSpent(stored ?? {}) + unwritten;
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
        const { agentId, day, ...counts } = item;
        await this.#store.add(agentId, day, counts);
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

/**
 * The spend of Engram's own upstream calls, counted for `/metrics` and the agent's day,
 * and read back (with what this process has not written yet) for the daily budget.
 */
export function spendMeter(metrics: Metrics, activity: ActivityRecorder): SpendMeter {
  return {
    spent(agentId, job, usage) {
      metrics.upstreamSpend(agentId, job, usage);
      const input = usage?.inputTokens ?? 0;
      const output = usage?.outputTokens ?? 0;
      const cached = usage?.cachedInputTokens ?? 0;
      activity.record(
        agentId,
        job === 'extraction'
          ? { extractionCalls: 1, extractionInputTokens: input, extractionOutputTokens: output, extractionCachedInputTokens: cached }
          : { taggingCalls: 1, taggingInputTokens: input, taggingOutputTokens: output, taggingCachedInputTokens: cached },
      );
    },
    tokensToday: (agentId) => activity.tokensToday(agentId),
  };
}
