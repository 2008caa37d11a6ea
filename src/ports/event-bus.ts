/**
 * The extraction pipeline's bus (DESIGN section 2), with JetStream's semantics so the
 * embedded SQLite queue and a NATS JetStream work-queue stream both implement it:
 * at-least-once delivery, explicit ack, redelivery after the ack wait, a bounded number
 * of deliveries, then a dead letter. Every adapter passes `test/contracts/event-bus.contract.ts`.
 */

export interface PublishOptions {
  /** Do not deliver before this epoch-ms instant (used to wait for a conversation to settle). */
  notBefore?: number;
  /**
   * Deduplication id (JetStream's `Nats-Msg-Id`): a second publish with the same id on
   * the same subject within the bus's dedup window is a no-op. The window is at least
   * `DEDUP_WINDOW_MS` (and at least the settle time the deployment uses); after it, or
   * once the first message was consumed, the same id may be stored again. Ids that must
   * never be stored twice are the handler's job (handlers are idempotent).
   */
  msgId?: string;
  /**
   * Supersession key: an earlier message of the same subject published with the same key
   * that is still waiting for its `notBefore` (never delivered) may be removed, this one
   * waiting in its place. A conversation's newer extraction job replaces the one still
   * waiting for the conversation to settle, so the bus holds one job per conversation,
   * not one per turn. Messages already due, delivered or redelivered are never affected,
   * and every message not superseded is delivered as usual; a superseded one may still be
   * delivered, so handlers skip what a newer message covers.
   *
   * The SQLite queue removes it, in the publish's transaction. The NATS bus keeps every
   * message: JetStream's one way to replace a stored message, a rollup (`Nats-Rollup: sub`)
   * on the delay stream, moves a work-queue consumer past other subjects' messages on
   * nats-server before 2.9.12 (nats-io/nats-server#3838, Debian ships 2.9.10) and still
   * skips messages under multi-filter consumers (#8571).
   */
  supersedes?: string;
}

/** Shortest deduplication window an adapter may offer (JetStream's default is 2 minutes). */
export const DEDUP_WINDOW_MS = 2 * 60 * 1000;

export interface BusMessage<T = unknown> {
  /** Stable id of the stored message (its sequence number, as a string). */
  readonly id: string;
  readonly subject: string;
  readonly payload: T;
  /** 1 on first delivery, incremented on every redelivery. */
  readonly attempt: number;
  readonly publishedAt: number;
  /** Done: the message is removed and never delivered again. */
  ack(): Promise<void>;
  /**
   * Failed this time: redelivered after the delay, or, on the last allowed delivery, a
   * dead letter (`exhaustedReason`). The reason is kept with the message until it is acked.
   */
  nak(options?: NakOptions): Promise<void>;
  /** Give up now: the message becomes a dead letter with this reason (its `lastError` too). */
  term(reason: string): Promise<void>;
  /**
   * Still working on it: restarts the ack wait (JetStream's `+WPI`), so a short ack wait
   * detects a crashed worker quickly without redelivering a long-running one.
   */
  working(): Promise<void>;
}

export interface NakOptions {
  /** Redeliver no sooner than this (default: the consumer's `backoffMs` for the attempt). */
  delayMs?: number;
  /**
   * Why this delivery failed, in a person's words ("upstream answered 503 Service
   * Unavailable"): listed with the waiting message (`QueuedMessage.lastError`) and, should
   * no later delivery succeed, in its dead letter. It is shown to whoever may read the
   * jobs: never a secret or the payload's text. Cut to `MAX_REASON_LENGTH`.
   */
  reason?: string;
}

/** Longest failure reason a bus keeps: a sentence for a person, not a stack trace. */
export const MAX_REASON_LENGTH = 300;

/** `reason` as a bus keeps it: one line, at most `MAX_REASON_LENGTH` characters. */
export function boundedReason(reason: string): string {
  const line = reason.replace(/\s+/g, ' ').trim();
  return line.length > MAX_REASON_LENGTH ? `${line.slice(0, MAX_REASON_LENGTH - 1)}…` : line;
}

/**
 * Runs a consumer's handler on one delivery, the same on every bus. A handler that threw
 * is a nak whose reason is the error's message; the error itself is the handler's to
 * report. Handlers whose errors may quote their input (a parser's message quotes the
 * text it choked on) catch them and `nak` with a reason of their own instead.
 */
export async function runHandler<T>(handler: (message: BusMessage<T>) => Promise<void>, message: BusMessage<T>, onError: (error: unknown) => void): Promise<void> {
  try {
    await handler(message);
  } catch (error) {
    const text = error instanceof Error ? error.message : (error as { message?: unknown } | null)?.message;
    await message.nak({ reason: boundedReason(typeof text === 'string' && text.trim() !== '' ? text : 'the handler failed') }).catch(onError);
  }
}

/**
 * The dead letter's reason for a message whose deliveries ran out, the same on every
 * engine: how many were made and the last failure in words. `unfinished`: the last
 * delivery was never settled (a handler stuck past the ack wait, a worker that stopped),
 * so its failure is that, and `lastError` is an earlier delivery's.
 */
export function exhaustedReason(attempts: number, lastError: string | undefined, unfinished = false): string {
  const gaveUp = `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  if (unfinished) {
    return `${gaveUp}: the last one never finished (no ack within the ack wait: a stuck handler or a stopped worker)${lastError ? `; before it: ${lastError}` : ''}`;
  }
  return lastError ? `${gaveUp}: ${lastError}` : `${gaveUp} (max deliveries exceeded; no reason given)`;
}

export interface ConsumerOptions {
  /** Unacked messages are redelivered this long after delivery (or after the last `working()`). */
  ackWaitMs: number;
  /** After this many deliveries without ack the message becomes a dead letter. */
  maxDeliver: number;
  /** Messages handled at once by this consumer. */
  concurrency: number;
  /** Delay before redelivery after a `nak()` without a delay or a thrown handler, by attempt. */
  backoffMs: (attempt: number) => number;
}

/** What a consumer gets for options it leaves out; the same on every engine. */
export const DEFAULT_CONSUMER_OPTIONS: Readonly<ConsumerOptions> = {
  ackWaitMs: 30_000,
  maxDeliver: 5,
  concurrency: 1,
  backoffMs: (attempt) => Math.min(1000 * 2 ** (attempt - 1), 60_000),
};

/** `options` completed with the defaults and brought into range (ack waits in whole ms, counts of at least 1). */
export function consumerOptions(options: Partial<ConsumerOptions>): ConsumerOptions {
  return {
    ackWaitMs: Math.max(1, Math.round(options.ackWaitMs ?? DEFAULT_CONSUMER_OPTIONS.ackWaitMs)),
    maxDeliver: Math.max(1, options.maxDeliver ?? DEFAULT_CONSUMER_OPTIONS.maxDeliver),
    concurrency: Math.max(1, options.concurrency ?? DEFAULT_CONSUMER_OPTIONS.concurrency),
    backoffMs: options.backoffMs ?? DEFAULT_CONSUMER_OPTIONS.backoffMs,
  };
}

/** What `publish`, `consume` and `retryDeadLetter` reject with once the bus is closed. */
export class EventBusClosedError extends Error {
  override name = 'EventBusClosedError';
}

export interface DeadLetter {
  id: string;
  subject: string;
  payload: unknown;
  attempts: number;
  /**
   * Why it was given up, in words: a `term`'s reason, or `exhaustedReason` (the
   * deliveries made and the last failure) when its deliveries ran out.
   */
  reason: string;
  /**
   * The reason the last failed delivery that gave one failed with (a `nak`'s, a thrown
   * handler's, the `term`'s); absent when none was given.
   */
  lastError?: string;
  publishedAt: number;
  failedAt: number;
}

/**
 * What became of a stored message so far:
 * - `waiting`: published with a `notBefore` still ahead (`dueAt`);
 * - `ready`: deliverable, not delivered yet;
 * - `delivered`: delivered and not settled: a handler has it (or had it, and its ack wait
 *   has not run out);
 * - `retrying`: a delivery failed (`nak`, a throwing handler) and it waits for `dueAt` to
 *   be delivered again. An engine that cannot tell this apart per message reports it as
 *   `delivered`.
 */
export type QueuedState = 'waiting' | 'ready' | 'delivered' | 'retrying';

export interface QueuedMessage {
  id: string;
  subject: string;
  payload: unknown;
  publishedAt: number;
  state: QueuedState;
  /** When a `waiting` or `retrying` message becomes deliverable. */
  dueAt?: number;
  /** Deliveries so far, where the engine records them per message (at least for `retrying` ones). */
  attempts?: number;
  /**
   * Why its last failed delivery failed (the `nak`'s reason, or a thrown handler's), once
   * one has failed: kept until the message is acked or dead-lettered.
   */
  lastError?: string;
}

export interface QueuedQuery {
  /** At most this many, oldest publish first (default `QUEUED_LIMIT`). */
  limit?: number;
}

/** Messages `queued` lists when the caller sets no limit: enough for an operator's view, bounded. */
export const QUEUED_LIMIT = 1000;

export interface Subscription {
  /** Stops fetching; resolves once in-flight handlers have finished. */
  stop(): Promise<void>;
}

/** Starts a bus's consumer, one of the bus's `consumers` until its subscription stops it. */
export function subscribed<C extends Subscription & { start(): void }>(consumers: Set<C>, consumer: C): Subscription {
  consumers.add(consumer);
  consumer.start();
  return {
    stop: async () => {
      await consumer.stop();
      consumers.delete(consumer);
    },
  };
}

/**
 * Durable work queue. Published messages survive a process crash (a publish resolves
 * once the message is stored). All consumers of a subject, in this process or any
 * other on the same storage, share its messages: each delivery goes to one of them. A
 * handler that throws is treated as a `nak` with its error's message (`runHandler`). Handlers must
 * be idempotent.
 */
export interface EventBus {
  publish(subject: string, payload: unknown, options?: PublishOptions): Promise<void>;
  consume<T>(
    subject: string,
    handler: (message: BusMessage<T>) => Promise<void>,
    options?: Partial<ConsumerOptions>,
  ): Subscription;
  /** Messages stored and not yet acked or dead-lettered, for a subject (waiting ones included). */
  pending(subject: string): Promise<number>;
  /**
   * The messages counted by `pending` (stored, not acked, not dead-lettered), oldest
   * publish first, with their payloads and what became of each so far. A snapshot for
   * people watching the queue: a message may settle or move on while it is read.
   */
  queued(subject: string, query?: QueuedQuery): Promise<QueuedMessage[]>;
  /** Dead letters, oldest failure first. */
  deadLetters(subject?: string): Promise<DeadLetter[]>;
  /**
   * Publishes a dead letter's payload again on its subject (a fresh message, attempt 1)
   * and removes the dead letter. False when no dead letter has that id.
   */
  retryDeadLetter(id: string): Promise<boolean>;
  close(): Promise<void>;
}
