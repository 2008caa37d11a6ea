/**
 * One consumer's fetch loop over the SQLite queue: look up when the next message is
 * due (one indexed read), lease what is due (up to the free handler slots) in a write
 * transaction only when something is, run handlers, then sleep until the next message
 * is due, at most `maxPollMs`. A settle or a finished handler wakes the loop at once; a
 * publish in this process only moves the wake-up earlier when its message is due
 * sooner (most are published to wait, e.g. 30 s for a conversation to settle, and must
 * cost the loop nothing). The poll bound is only for writes by other connections.
 */
import { boundedReason, exhaustedReason, runHandler, type BusMessage, type ConsumerOptions, type NakOptions } from '../../ports/event-bus.js';
import type { BusQueue, LeasedRow, LeaseHolder } from './bus-queue.js';

export interface ConsumerContext {
  queue: BusQueue;
  now: () => number;
  maxPollMs: number;
  /** Named on every lease this consumer takes. */
  holder: LeaseHolder;
  /** Failures the loop survives (a locked database, a failed settle). */
  onError: (error: unknown) => void;
}

export class BusConsumer<T> {
  readonly subject: string;
  readonly #context: ConsumerContext;
  readonly #handler: (message: BusMessage<T>) => Promise<void>;
  readonly #options: ConsumerOptions;
  readonly #inFlight = new Set<Promise<void>>();
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  /** A wake-up that arrived while the loop was busy, so the next sleep is skipped. */
  #signalled = false;
  /** Earliest due time published while the loop was busy; bounds the next sleep. */
  #publishedDueAt = Infinity;
  /** While asleep: when the sleep ends, and how to end or re-arm it. */
  #sleep: { until: number; timer: NodeJS.Timeout; done: () => void } | undefined;

  constructor(
    context: ConsumerContext,
    subject: string,
    handler: (message: BusMessage<T>) => Promise<void>,
    options: ConsumerOptions,
  ) {
    this.#context = context;
    this.subject = subject;
    this.#handler = handler;
    this.#options = options;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Fetch now rather than at the next poll. */
  wake(): void {
    if (this.#sleep) this.#sleep.done();
    else this.#signalled = true;
  }

  /** A message on this subject was published in this process, deliverable from `dueAt`. */
  published(dueAt: number): void {
    const sleep = this.#sleep;
    if (!sleep) {
      this.#publishedDueAt = Math.min(this.#publishedDueAt, dueAt);
      return;
    }
    // The loop looks at the queue by then anyway.
    if (dueAt >= sleep.until) return;
    clearTimeout(sleep.timer);
    sleep.until = dueAt;
    sleep.timer = setTimeout(sleep.done, Math.max(0, dueAt - this.#context.now()));
  }

  /** Stops fetching and waits for the handlers already running. */
  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#loop;
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #run(): Promise<void> {
    const { queue, now, maxPollMs, onError, holder } = this.#context;
    while (this.#running) {
      let wakeAt = now() + maxPollMs;
      try {
        const free = this.#options.concurrency - this.#inFlight.size;
        // With no free slot there is nothing to do: a finishing handler wakes the loop.
        if (free > 0) {
          let next = queue.nextDueAt(this.subject);
          if (next !== undefined && next <= now()) {
            const leased = queue.lease(this.subject, free, now(), this.#options.ackWaitMs, this.#options.maxDeliver, holder);
            for (const row of leased) this.#dispatch(row);
            // All slots taken: more may be due, and a finishing handler wakes the loop.
            next = leased.length < free ? queue.nextDueAt(this.subject) : undefined;
          }
          if (next !== undefined) wakeAt = Math.min(wakeAt, next);
        }
      } catch (error) {
        if (!queue.open) break; // the database was closed under us: nothing left to do
        onError(error);
      }
      if (this.#running) await this.#sleepUntil(Math.min(wakeAt, this.#publishedDueAt));
    }
  }

  #sleepUntil(until: number): Promise<void> {
    this.#publishedDueAt = Infinity;
    if (this.#signalled) {
      this.#signalled = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        if (this.#sleep) clearTimeout(this.#sleep.timer);
        this.#sleep = undefined;
        resolve();
      };
      this.#sleep = { until, timer: setTimeout(done, Math.max(0, until - this.#context.now())), done };
    });
  }

  #dispatch(row: LeasedRow): void {
    const { queue, now, onError } = this.#context;
    let payload: T;
    try {
      payload = JSON.parse(row.payload) as T;
    } catch {
      const reason = 'payload is not valid JSON';
      queue.term(row.seq, row.attempts, reason, reason, now());
      return;
    }
    let settled = false;
    const settle = async (apply: () => void): Promise<void> => {
      if (settled) return;
      settled = true;
      try {
        apply();
      } finally {
        this.wake();
      }
    };
    const message: BusMessage<T> = {
      id: String(row.seq),
      subject: row.subject,
      payload,
      attempt: row.attempts,
      publishedAt: row.published_at,
      ack: () => settle(() => queue.ack(row.seq)),
      nak: (options?: NakOptions) => settle(() => this.#retry(row, options)),
      term: (reason: string) =>
        settle(() => {
          const bounded = boundedReason(reason);
          queue.term(row.seq, row.attempts, bounded, bounded, now());
        }),
      // The lease runs for another ack wait from now (nothing to do once settled).
      working: async () => {
        if (!settled) queue.extend(row.seq, row.attempts, now() + this.#options.ackWaitMs);
      },
    };
    const task = runHandler(this.#handler, message, onError).finally(() => {
      this.#inFlight.delete(task);
      this.wake();
    });
    this.#inFlight.add(task);
  }

  #retry(row: LeasedRow, { delayMs, reason }: NakOptions = {}): void {
    const { queue, now } = this.#context;
    const error = reason === undefined ? null : boundedReason(reason);
    // The last allowed delivery failed: dead-letter now instead of after a pointless wait.
    if (row.attempts >= this.#options.maxDeliver) {
      queue.term(row.seq, row.attempts, exhaustedReason(row.attempts, error ?? undefined), error, now());
      return;
    }
    const delay = delayMs ?? this.#options.backoffMs(row.attempts);
    queue.retry(row.seq, row.attempts, now() + (Number.isFinite(delay) ? Math.max(0, delay) : 0), error);
  }
}
