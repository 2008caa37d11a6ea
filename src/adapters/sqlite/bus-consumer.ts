/**
 * One consumer's fetch loop over the SQLite queue: lease what is due (up to the free
 * handler slots), run handlers, then sleep until the next message is due, at most
 * `maxPollMs`. A publish in this process, a settle, or a finished handler wakes the
 * loop at once; the poll bound is only for writes by other connections.
 */
import type { BusMessage, ConsumerOptions } from '../../memory/ports.js';
import { MAX_DELIVERIES_REASON, type BusQueue, type LeasedRow } from './bus-queue.js';

export interface ConsumerContext {
  queue: BusQueue;
  now: () => number;
  maxPollMs: number;
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
  #interruptSleep: (() => void) | undefined;

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
    if (this.#interruptSleep) this.#interruptSleep();
    else this.#signalled = true;
  }

  /** Stops fetching and waits for the handlers already running. */
  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#loop;
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #run(): Promise<void> {
    const { queue, now, maxPollMs, onError } = this.#context;
    while (this.#running) {
      let sleepMs = maxPollMs;
      try {
        const free = this.#options.concurrency - this.#inFlight.size;
        if (free > 0) {
          const leased = queue.lease(this.subject, free, now(), this.#options.ackWaitMs, this.#options.maxDeliver);
          for (const row of leased) this.#dispatch(row);
          // With slots left nothing else is due now: sleep until the next message is.
          // With none left, a finishing handler wakes the loop.
          if (leased.length < free) {
            const next = queue.nextDueAt(this.subject);
            if (next !== undefined) sleepMs = Math.min(maxPollMs, Math.max(0, next - now()));
          }
        }
      } catch (error) {
        if (!queue.open) break; // the database was closed under us: nothing left to do
        onError(error);
      }
      if (this.#running) await this.#sleep(sleepMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#signalled) {
      this.#signalled = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#interruptSleep = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#interruptSleep = done;
    });
  }

  #dispatch(row: LeasedRow): void {
    const { queue, now, onError } = this.#context;
    let payload: T;
    try {
      payload = JSON.parse(row.payload) as T;
    } catch {
      queue.term(row.seq, row.attempts, 'payload is not valid JSON', now());
      return;
    }
    let settled = false;
    const settle = (apply: () => void): Promise<void> => {
      if (settled) return Promise.resolve();
      settled = true;
      try {
        apply();
      } catch (error) {
        return Promise.reject(error);
      } finally {
        this.wake();
      }
      return Promise.resolve();
    };
    const message: BusMessage<T> = {
      id: String(row.seq),
      subject: row.subject,
      payload,
      attempt: row.attempts,
      publishedAt: row.published_at,
      ack: () => settle(() => queue.ack(row.seq)),
      nak: (delayMs?: number) => settle(() => this.#retry(row, delayMs)),
      term: (reason: string) => settle(() => queue.term(row.seq, row.attempts, reason, now())),
    };
    const task = (async () => {
      try {
        await this.#handler(message);
      } catch {
        // A throwing handler is a nak (the port's rule); the error itself is the
        // handler's to report.
        await message.nak().catch(onError);
      }
    })().finally(() => {
      this.#inFlight.delete(task);
      this.wake();
    });
    this.#inFlight.add(task);
  }

  #retry(row: LeasedRow, delayMs: number | undefined): void {
    const { queue, now } = this.#context;
    // The last allowed delivery failed: dead-letter now instead of after a pointless wait.
    if (row.attempts >= this.#options.maxDeliver) {
      queue.term(row.seq, row.attempts, MAX_DELIVERIES_REASON, now());
      return;
    }
    const delay = delayMs ?? this.#options.backoffMs(row.attempts);
    queue.retry(row.seq, row.attempts, now() + (Number.isFinite(delay) ? Math.max(0, delay) : 0));
  }
}
