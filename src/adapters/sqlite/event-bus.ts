/**
 * The embedded event bus: a durable work queue in the SQLite file with JetStream's
 * semantics (see `EventBus` in ports/event-bus.ts). Storage is `BusQueue`, the fetch loop
 * is `BusConsumer`.
 */
import {
  consumerOptions,
  EventBusClosedError,
  type BusMessage,
  type ConsumerOptions,
  type DeadLetter,
  type EventBus,
  type PublishOptions,
  type Subscription,
} from '../../ports/event-bus.js';
import { BusConsumer } from './bus-consumer.js';
import { BusQueue } from './bus-queue.js';
import type { SqliteDatabase } from './database.js';

export interface SqliteEventBusOptions {
  now?: () => number;
  /** Longest sleep of an idle consumer: how late it sees a publish by another connection. */
  maxPollMs?: number;
  /** Failures consumers survive (e.g. a database locked for longer than busy_timeout). */
  onError?: (error: unknown) => void;
}

export class SqliteEventBus implements EventBus {
  readonly #queue: BusQueue;
  readonly #now: () => number;
  readonly #maxPollMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #consumers = new Set<Pick<BusConsumer<unknown>, 'subject' | 'published' | 'stop'>>();
  #closed = false;

  constructor(db: SqliteDatabase, options: SqliteEventBusOptions = {}) {
    this.#queue = new BusQueue(db);
    this.#now = options.now ?? Date.now;
    this.#maxPollMs = options.maxPollMs ?? 250;
    this.#onError = options.onError ?? ((error) => console.error('engram event bus:', error));
  }

  async publish(subject: string, payload: unknown, options: PublishOptions = {}): Promise<void> {
    if (this.#closed) throw new EventBusClosedError('The event bus is closed');
    const now = this.#now();
    const dueAt = Math.max(now, options.notBefore ?? now);
    const stored = this.#queue.publish(subject, JSON.stringify(payload) ?? 'null', options.msgId ?? null, now, dueAt);
    if (!stored) return;
    for (const consumer of this.#consumers) if (consumer.subject === subject) consumer.published(dueAt);
  }

  consume<T>(
    subject: string,
    handler: (message: BusMessage<T>) => Promise<void>,
    options: Partial<ConsumerOptions> = {},
  ): Subscription {
    if (this.#closed) throw new EventBusClosedError('The event bus is closed');
    const settings = consumerOptions(options);
    const consumer = new BusConsumer<T>(
      { queue: this.#queue, now: this.#now, maxPollMs: this.#maxPollMs, onError: this.#onError },
      subject,
      handler,
      settings,
    );
    this.#consumers.add(consumer);
    consumer.start();
    return {
      stop: async () => {
        await consumer.stop();
        this.#consumers.delete(consumer);
      },
    };
  }

  async pending(subject: string): Promise<number> {
    return this.#queue.pending(subject);
  }

  async deadLetters(subject?: string): Promise<DeadLetter[]> {
    return this.#queue.deadLetters(subject);
  }

  async retryDeadLetter(id: string): Promise<boolean> {
    if (this.#closed) throw new EventBusClosedError('The event bus is closed');
    const seq = Number(id);
    if (!Number.isSafeInteger(seq)) return false;
    const now = this.#now();
    const retried = this.#queue.retryDead(seq, now);
    if (!retried) return false;
    for (const consumer of this.#consumers) if (consumer.subject === retried.subject) consumer.published(now);
    return true;
  }

  /** Stops every consumer (waiting for running handlers); the shared database stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    const consumers = [...this.#consumers];
    this.#consumers.clear();
    await Promise.all(consumers.map((consumer) => consumer.stop()));
  }
}
