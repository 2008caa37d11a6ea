/**
 * The distributed event bus (DESIGN sections 2 and 9): the `EventBus` port on NATS
 * JetStream 2.9, shared by every replica on the same server.
 *
 * - `<stream>` (work queue, `<prefix>.q.<subject>`): messages ready for delivery, one
 *   durable pull consumer per port subject shared by all replicas (`bus-consumer.ts`).
 * - `<stream>_DELAY` (work queue, `<prefix>.d.<subject>`): messages waiting for their
 *   `notBefore`, moved to the work queue when due by a scheduler (`bus-scheduler.ts`).
 * - `<stream>_DEAD` (limits, `<prefix>.dead.<subject>`): dead letters (`bus-dead-letters.ts`).
 * - `<stream>_FAILED` (limits, one per subject, `<prefix>.failed.<subject>.<seq>`): why a
 *   waiting message's last delivery failed (`bus-failures.ts`).
 * - `<stream>_SETTLED` (limits, one per subject, `<prefix>.settled.<q|d>.<seq>`): the
 *   messages of the two work queues whose work is finished (`bus-settled.ts`), so the
 *   sweep can remove what a killed server brings back (`bus-acked-sweep.ts`).
 * - Object Store bucket: payloads bigger than one message (`bus-payloads.ts`).
 *
 * Port subjects are encoded into one NATS token each (`bus-subjects.ts`).
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import { nuid } from '@nats-io/transport-node';
import {
  consumerOptions,
  DEDUP_WINDOW_MS,
  EventBusClosedError,
  type BusMessage,
  type ConsumerOptions,
  type DeadLetter,
  type EventBus,
  type PublishOptions,
  type QueuedMessage,
  type QueuedQuery,
  type Subscription,
} from '../../ports/index.js';
import { QUEUED_LIMIT, subscribed } from '../../ports/event-bus.js';
import type { NatsContext } from './connection.js';
import { AckedSweep } from './bus-acked-sweep.js';
import { NatsBusConsumer, type ConsumerContext } from './bus-consumer.js';
import { DeadLetters } from './bus-dead-letters.js';
import { FailureRecords } from './bus-failures.js';
import { ConnectionGate } from './bus-loop.js';
import { BusPayloads } from './bus-payloads.js';
import { SettledRecords } from './bus-settled.js';
import { listQueued } from './bus-queued.js';
import { DelayScheduler } from './bus-scheduler.js';
import { assertServerVersion, countOnSubject, ensureBusStreams, storeMessage } from './bus-streams.js';
import { BUS_HEADERS, busNames, messageHeaders, type BusNames } from './bus-subjects.js';

export interface NatsEventBusOptions {
  /** Work-queue stream name; the delay and dead-letter streams add `_DELAY` and `_DEAD`. */
  stream?: string;
  /** Subjects of the bus's streams (dot-separated tokens). */
  subjectPrefix?: string;
  /** JetStream dedup window for msgIds; never below the port's `DEDUP_WINDOW_MS`. */
  dedupWindowMs?: number;
  /** Object Store bucket for big payloads (default: the stream name, lower case, + `_payloads`). */
  payloadBucket?: string;
  /** Failures the bus survives (a fetch during a server restart, a failed settle). */
  onError?: (error: unknown) => void;
  now?: () => number;
}

export class NatsEventBus implements EventBus {
  /** What the consumers share, and the bus itself uses. */
  readonly #context: ConsumerContext;
  readonly #scheduler: DelayScheduler;
  readonly #sweep: AckedSweep;
  readonly #consumers = new Set<NatsBusConsumer<unknown>>();
  #closed = false;

  /**
   * Checks the server and creates (or updates) the bus's streams. Safe to run from
   * several replicas at once. The connection stays the caller's.
   */
  static async open(nats: NatsContext, options: NatsEventBusOptions = {}): Promise<NatsEventBus> {
    assertServerVersion(nats.serverVersion);
    const names = busNames(options.stream ?? 'ENGRAM_BUS', options.subjectPrefix ?? 'engram.bus', options.payloadBucket);
    const dedupWindowMs = Math.max(DEDUP_WINDOW_MS, options.dedupWindowMs ?? DEDUP_WINDOW_MS);
    await ensureBusStreams(nats.jsm, names, dedupWindowMs);
    return new NatsEventBus(nats, names, options);
  }

  private constructor(nats: NatsContext, names: BusNames, options: NatsEventBusOptions) {
    const onError = options.onError ?? ((error) => console.error('engram event bus (nats):', error));
    const context = { nats, gate: new ConnectionGate(nats.nc), names, now: options.now ?? Date.now, onError };
    const payloads = new BusPayloads(nats, names.payloadBucket);
    const settled = new SettledRecords(context);
    this.#context = {
      ...context,
      payloads,
      deadLetters: new DeadLetters({ ...context, payloads }),
      failures: new FailureRecords(context),
      settled,
    };
    this.#scheduler = new DelayScheduler({ ...context, settled });
    // What the streams hold is what `pending` and `queued` report: acked messages a killed
    // server brought back are removed at start and after every reconnection.
    this.#sweep = new AckedSweep({ ...context, settled, streams: [names.stream, names.delayStream] });
    this.#sweep.run();
  }

  /** Resolves once the server has stored the message (its PubAck). */
  async publish(subject: string, payload: unknown, options: PublishOptions = {}): Promise<void> {
    if (this.#closed) throw new EventBusClosedError('The event bus is closed');
    const { nats, gate, names, payloads, onError } = this.#context;
    const now = this.#context.now();
    const delayed = options.notBefore !== undefined && options.notBefore > now;
    const headers = messageHeaders(subject, now);
    if (delayed) headers.set(BUS_HEADERS.notBefore, String(options.notBefore));
    const { data, object } = await payloads.encode(payload, headers);
    const stream = delayed ? names.delayStream : names.stream;
    let stored: Awaited<ReturnType<typeof storeMessage>>;
    try {
      stored = await storeMessage(nats, gate, {
        stream,
        subject: delayed ? names.delayed(subject) : names.work(subject),
        data,
        headers,
        // Without a caller's id, a fresh one still makes the client's own retries safe.
        msgId: options.msgId === undefined ? nuid.next() : names.msgId(subject, options.msgId),
      });
    } catch (error) {
      // The server refused the message: its object is nobody's. (After a timeout the
      // message may be stored, so the object stays.)
      if (object && error instanceof JetStreamApiError) await payloads.remove(object).catch(onError);
      throw error;
    }
    const { ack, retried } = stored;
    if (ack.duplicate && object) await this.#dropUnreferenced(stream, ack.seq, object, retried);
  }

  consume<T>(
    subject: string,
    handler: (message: BusMessage<T>) => Promise<void>,
    options: Partial<ConsumerOptions> = {},
  ): Subscription {
    if (this.#closed) throw new EventBusClosedError('The event bus is closed');
    const consumer = new NatsBusConsumer<T>(this.#context, subject, handler, consumerOptions(options));
    // A bus that consumes also moves due messages; a publish-only replica need not.
    this.#scheduler.start();
    return subscribed(this.#consumers, consumer as NatsBusConsumer<unknown>);
  }

  /**
   * Stored and unsettled on the subject, in both streams. A message being moved from the
   * delay stream to the work queue may count twice for an instant.
   */
  async pending(subject: string): Promise<number> {
    const { nats, names } = this.#context;
    const [ready, waiting] = await Promise.all([
      countOnSubject(nats.jsm, names.stream, names.work(subject)),
      countOnSubject(nats.jsm, names.delayStream, names.delayed(subject)),
    ]);
    return ready + waiting;
  }

  queued(subject: string, query: QueuedQuery = {}): Promise<QueuedMessage[]> {
    return listQueued(this.#context, subject, query.limit ?? QUEUED_LIMIT);
  }

  deadLetters(subject?: string): Promise<DeadLetter[]> {
    return this.#context.deadLetters.list(subject);
  }

  retryDeadLetter(id: string): Promise<boolean> {
    if (this.#closed) return Promise.reject(new EventBusClosedError('The event bus is closed'));
    return this.#context.deadLetters.retry(id);
  }

  /** Stops every consumer (waiting for running handlers) and the scheduler; the shared connection stays open. */
  async close(): Promise<void> {
    this.#closed = true;
    const consumers = [...this.#consumers];
    this.#consumers.clear();
    await Promise.all([...consumers.map((consumer) => consumer.stop()), this.#scheduler.stop(), this.#sweep.close()]);
    this.#context.gate.close();
  }

  /**
   * A duplicate publish stored nothing, so its object is unreferenced, unless the
   * "original" is this publish's own earlier attempt (its ack was lost and the client
   * tried again). Then the object stays if that message still exists and carries it, or
   * when in doubt: a leaked object is better than a message without its payload.
   */
  async #dropUnreferenced(stream: string, seq: number, object: string, retried: boolean): Promise<void> {
    try {
      if (retried) {
        const original = await this.#context.nats.jsm.streams.getMessage(stream, { seq });
        if (!original || original.header?.get(BUS_HEADERS.payloadObject) === object) return;
      }
      await this.#context.payloads.remove(object);
    } catch (error) {
      this.#context.onError(error);
    }
  }
}
