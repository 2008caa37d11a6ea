/**
 * The embedded event bus: a durable work queue in the SQLite file with JetStream's
 * semantics (see `EventBus` in ports/event-bus.ts). Storage is `BusQueue`, the fetch loop
 * is `BusConsumer`.
 *
 * Crash recovery: every lease names this process start (`PROCESS_HOLDER`). The first
 * consumer a bus starts makes due at once the leases that a dead process on this host
 * held, so after `kill -9` and a restart the jobs that were in flight run again within
 * the poll interval, not an ack wait later. Several servers never share one data dir
 * (it is locked); a process on another host sharing the file only ever waits out the
 * ack wait, the port's rule.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import {
  consumerOptions,
  EventBusClosedError,
  QUEUED_LIMIT,
  subscribed,
  type BusMessage,
  type ConsumerOptions,
  type DeadLetter,
  type EventBus,
  type PublishOptions,
  type QueuedMessage,
  type QueuedQuery,
  type Subscription,
} from '../../ports/event-bus.js';
import { BusConsumer } from './bus-consumer.js';
import { BusQueue, type LeaseHolder } from './bus-queue.js';
import { groupCommitOf, type GroupCommit } from './group-commit.js';
import type { SqliteDatabase } from './database.js';

export interface SqliteEventBusOptions {
  now?: () => number;
  /** Longest sleep of an idle consumer: how late it sees a publish by another connection. */
  maxPollMs?: number;
  /** Failures consumers survive (e.g. a database locked for longer than busy_timeout). */
  onError?: (error: unknown) => void;
  /** Named on the leases this bus takes; this process start by default (tests pose as another). */
  holder?: LeaseHolder;
  /** Told how many leases of a dead process were made due at start, when there were any. */
  onReclaim?: (count: number) => void;
}

/** This process start. Buses in one process share it: none of them reclaims another's live lease. */
export const PROCESS_HOLDER: LeaseHolder = Object.freeze({ id: randomUUID(), pid: process.pid, host: os.hostname() });

/** Whether a process with this pid exists on this host (EPERM: it exists, owned by another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class SqliteEventBus implements EventBus {
  readonly #queue: BusQueue;
  readonly #now: () => number;
  readonly #group: GroupCommit;
  readonly #maxPollMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #holder: LeaseHolder;
  readonly #onReclaim: (count: number) => void;
  #reclaimed = false;
  readonly #consumers = new Set<Pick<BusConsumer<unknown>, 'subject' | 'published' | 'start' | 'stop'>>();
  #closed = false;

  constructor(db: SqliteDatabase, options: SqliteEventBusOptions = {}) {
    this.#queue = new BusQueue(db);
    this.#group = groupCommitOf(db);
    this.#now = options.now ?? Date.now;
    this.#maxPollMs = options.maxPollMs ?? 250;
    this.#onError = options.onError ?? ((error) => console.error('engram event bus:', error));
    this.#holder = options.holder ?? PROCESS_HOLDER;
    this.#onReclaim = options.onReclaim ?? (() => undefined);
  }

  async publish(subject: string, payload: unknown, options: PublishOptions = {}): Promise<void> {
    if (this.#closed) throw new EventBusClosedError('The event bus is closed');
    const now = this.#now();
    const dueAt = Math.max(now, options.notBefore ?? now);
    const json = JSON.stringify(payload) ?? 'null';
    // Committed with the other writes of this turn of the event loop (`GroupCommit`).
    const stored = await this.#group.run(() => this.#queue.publish(subject, json, options.msgId ?? null, now, dueAt, options.supersedes ?? null));
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
    this.#reclaimOnce();
    const consumer = new BusConsumer<T>(
      { queue: this.#queue, now: this.#now, maxPollMs: this.#maxPollMs, onError: this.#onError, holder: this.#holder },
      subject,
      handler,
      settings,
    );
    return subscribed(this.#consumers, consumer);
  }

  async pending(subject: string): Promise<number> {
    return this.#queue.pending(subject);
  }

  async queued(subject: string, query: QueuedQuery = {}): Promise<QueuedMessage[]> {
    return this.#queue.queued(subject, this.#now(), query.limit ?? QUEUED_LIMIT);
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

  /**
   * At the first consumer: a bus that never consumes (an API-only process, or one whose
   * bus is NATS and opens the file only for its stores) leaves the queue alone.
   */
  #reclaimOnce(): void {
    if (this.#reclaimed) return;
    this.#reclaimed = true;
    try {
      const count = this.#queue.reclaim(this.#holder, pidAlive, this.#now());
      if (count > 0) this.#onReclaim(count);
    } catch (error) {
      // The leases then expire as they would have without this.
      this.#onError(error);
    }
  }

  /** Stops every consumer (waiting for running handlers); the shared database stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    const consumers = [...this.#consumers];
    this.#consumers.clear();
    await Promise.all(consumers.map((consumer) => consumer.stop()));
  }
}
