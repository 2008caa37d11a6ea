/**
 * One `consume()` of the NATS event bus: `concurrency` slots, each a loop that pulls one
 * message from the subject's durable consumer, runs the handler, and pulls again. A slot
 * asks for a message only when it is free, so nothing waits in this process's buffer
 * with its ack wait running while another replica is idle; every replica's slots pull
 * from the same durable consumer, so each delivery goes to one of them.
 *
 * Each pull is nats.js's `fetch()` of one message, which brings the library's heartbeats,
 * status handling and reconnection for that request. Not its `consume()`: that keeps
 * messages requested ahead of the handler, and while a handler runs longer than two
 * heartbeats (extraction's do) its heartbeat monitor pulls again on every tick, so
 * messages pile up here, redelivered elsewhere once their ack wait runs out. The test
 * "a replica asks for a message only when a slot is free" measures it (a consume() of one
 * message had two delivered to a busy slot).
 *
 * The adapter, not the server, bounds deliveries (the consumer's max_deliver is
 * unlimited): a delivery past `maxDeliver` (a handler that never settled, a crashed
 * worker) is dead-lettered without reaching the handler, and a nak on the last allowed
 * delivery dead-letters at once, as the SQLite bus does. A failed delivery's reason is
 * recorded beside the message (`bus-failures.ts`) before the nak, and a finished one
 * (acked, or dead-lettered) is recorded as such (`bus-settled.ts`) before its ack or term.
 */
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { boundedReason, exhaustedReason, runHandler, type BusMessage, type ConsumerOptions, type NakOptions } from '../../ports/event-bus.js';
import type { DeadLetters } from './bus-dead-letters.js';
import type { FailureRecords } from './bus-failures.js';
import { DurableConsumer, type DurableContext } from './bus-durable.js';
import { confirmSent, PULL, SUSPICIOUSLY_FAST_MS } from './bus-loop.js';
import { objectOf, type BusPayloads, type ReadPayload } from './bus-payloads.js';
import type { SettledRecords } from './bus-settled.js';
import { BUS_HEADERS, decodeTime, MSG_ID_HEADER, type BusNames } from './bus-subjects.js';

/** Deliveries unacked at once across all replicas; concurrency is bounded per consume() instead. */
const MAX_ACK_PENDING = 10_000;

export interface ConsumerContext extends DurableContext {
  names: BusNames;
  payloads: BusPayloads;
  deadLetters: DeadLetters;
  failures: FailureRecords;
  settled: SettledRecords;
  now: () => number;
}

export class NatsBusConsumer<T> {
  readonly subject: string;
  readonly #context: ConsumerContext;
  readonly #handler: (message: BusMessage<T>) => Promise<void>;
  readonly #options: ConsumerOptions;
  /** The open fetches, which stop() cancels: the server no longer delivers to them. */
  readonly #fetches = new Set<ConsumerMessages>();
  readonly #durable: DurableConsumer;
  readonly #slots: Promise<void>[] = [];
  #running = false;

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
    this.#durable = new DurableConsumer(context, {
      stream: context.names.stream,
      name: context.names.consumer(subject),
      filterSubject: context.names.work(subject),
      ackWaitMs: options.ackWaitMs,
      maxAckPending: MAX_ACK_PENDING,
    });
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    const what = `NATS event bus: fetching ${JSON.stringify(this.subject)} failed`;
    for (let i = 0; i < this.#options.concurrency; i++) {
      this.#slots.push(this.#durable.loop(() => this.#running, what, (consumer) => this.#pullOne(consumer)));
    }
  }

  /** Cancels the pull requests and waits for the handlers already running. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const batch of this.#fetches) batch.stop();
    this.#durable.wake();
    await Promise.all(this.#slots);
  }

  /** A slot's pull: fetches one message and handles it; false when the fetch ended at once, empty. */
  async #pullOne(consumer: Consumer): Promise<boolean> {
    const started = Date.now();
    const batch = await consumer.fetch({ max_messages: 1, ...PULL });
    let message: JsMsg | undefined;
    this.#fetches.add(batch);
    try {
      if (this.#running) for await (message of batch) break;
    } finally {
      this.#fetches.delete(batch);
      batch.stop();
    }
    if (!message) return Date.now() - started >= SUSPICIOUSLY_FAST_MS;
    if (this.#running) await this.#deliver(message);
    // Arrived as we stopped: hand it straight back rather than start new work.
    else message.nak();
    return true;
  }

  /** Runs the handler on one delivery; never throws (failures are reported). */
  async #deliver(delivery: JsMsg): Promise<void> {
    const { payloads, onError } = this.#context;
    const attempt = delivery.info.deliveryCount;
    const publishedAt =
      decodeTime(delivery.headers?.get(BUS_HEADERS.publishedAt)) ?? Math.round(delivery.info.timestampNanos / 1e6);
    if (attempt > this.#options.maxDeliver) {
      // The previous delivery was never settled (handler hung, worker crashed).
      await this.#exhausted(delivery, attempt - 1, publishedAt).catch(onError);
      return;
    }
    let read: ReadPayload;
    try {
      read = await payloads.read(delivery.headers, delivery.data);
    } catch (error) {
      // The Object Store is unreachable: not the message's fault, try again later.
      onError(error);
      delivery.nak(this.#backoff(attempt));
      return;
    }
    if (!read.ok) {
      await this.#unreadable(delivery, read.reason, attempt, publishedAt).catch(onError);
      return;
    }
    let settled = false;
    const once = async (settle: () => Promise<void>): Promise<void> => {
      // The first settle counts, as in the SQLite bus (a nak after an ack is ignored).
      if (settled) return;
      settled = true;
      await settle();
    };
    const object = objectOf(delivery.headers);
    const message: BusMessage<T> = {
      id: String(delivery.seq),
      subject: this.subject,
      payload: read.payload as T,
      attempt,
      publishedAt,
      ack: () =>
        once(async () => {
          await this.#settledRecord(delivery);
          await this.#connected();
          // Acknowledged by the server before the object goes: a failed ack leaves both.
          await delivery.ackAck();
          if (object) await payloads.remove(object).catch(onError);
          if (attempt > 1) await this.#forget(delivery);
        }),
      nak: (options?: NakOptions) => once(() => this.#retry(delivery, attempt, options, publishedAt)),
      term: (reason: string) => once(() => this.#bury(delivery, { reason: boundedReason(reason), lastError: boundedReason(reason) }, attempt, publishedAt)),
      working: async () => {
        if (settled) return;
        await this.#connected();
        delivery.working();
        await confirmSent(this.#context.nats);
      },
    };
    await runHandler(this.#handler, message, onError);
  }

  async #retry(delivery: JsMsg, attempt: number, { delayMs, reason }: NakOptions = {}, publishedAt: number): Promise<void> {
    const error = reason === undefined ? undefined : boundedReason(reason);
    // The last allowed delivery failed: dead-letter now instead of after a pointless wait.
    if (attempt >= this.#options.maxDeliver) {
      return this.#bury(delivery, { reason: exhaustedReason(attempt, error), lastError: error ?? (await this.#recorded(delivery))?.reason }, attempt, publishedAt);
    }
    const delay = delayMs === undefined ? this.#backoff(attempt) : clampDelay(delayMs);
    const failedAt = this.#context.now();
    // Recorded before the nak: the redelivery, here or on another replica, finds it.
    await this.#context.failures.record(this.subject, delivery.seq, { ...(error === undefined ? {} : { reason: error }), attempt, failedAt, dueAt: failedAt + (delay ?? 0) });
    await this.#connected();
    delivery.nak(delay);
    await confirmSent(this.#context.nats);
  }

  /** A message whose last allowed delivery (`attempts`) never settled: dead-lettered with what earlier ones said. */
  async #exhausted(delivery: JsMsg, attempts: number, publishedAt: number): Promise<void> {
    const earlier = (await this.#recorded(delivery))?.reason;
    await this.#bury(delivery, { reason: exhaustedReason(attempts, earlier, true), lastError: earlier }, attempts, publishedAt);
  }

  /** The failure recorded for the message, if a delivery failed before this one (none did on attempt 1). */
  async #recorded(delivery: JsMsg) {
    return delivery.info.deliveryCount > 1 ? this.#context.failures.get(this.subject, delivery.seq) : undefined;
  }

  /** Removes the message's failure record once it is settled for good; a record left behind expires. */
  async #forget(delivery: JsMsg): Promise<void> {
    await this.#context.failures.forget(this.subject, delivery.seq).catch(this.#context.onError);
  }

  #backoff(attempt: number): number | undefined {
    return clampDelay(this.#options.backoffMs(attempt));
  }

  /** Dead letter first, then terminate: a crash in between redelivers, never loses. */
  async #bury(delivery: JsMsg, why: { reason: string; lastError?: string }, attempts: number, publishedAt: number): Promise<void> {
    await this.#context.deadLetters.bury({
      seq: delivery.seq,
      subject: this.subject,
      headers: delivery.headers,
      data: delivery.data,
      attempts,
      ...why,
      publishedAt,
    });
    await this.#settledRecord(delivery);
    await this.#connected();
    delivery.term();
    await confirmSent(this.#context.nats);
    if (delivery.info.deliveryCount > 1) await this.#forget(delivery);
  }

  /**
   * The message is finished (its handler acked, or its dead letter is stored): recorded
   * so, a server killed after the settle cannot bring it back as work. A failed record
   * costs only that; the settle goes ahead.
   */
  async #settledRecord(delivery: JsMsg): Promise<void> {
    const { names, settled, onError } = this.#context;
    await settled.record(names.stream, delivery.seq, delivery.headers?.get(MSG_ID_HEADER)).catch(onError);
  }

  /**
   * Settles are sent only on a live connection: one written while the client
   * re-establishes it can be dropped, and then the message waits out its ack wait.
   */
  #connected(): Promise<void> {
    return this.#context.gate.upWithin(this.#context.nats.timeoutMs);
  }

  async #unreadable(delivery: JsMsg, reason: string, attempt: number, publishedAt: number): Promise<void> {
    if (objectOf(delivery.headers)) {
      // A missing object usually means another replica acked this message (and deleted
      // the object) after its ack wait ran out and it was redelivered here: gone from the
      // stream means done, not dead.
      const stored = await this.#context.nats.jsm.streams.getMessage(this.#context.names.stream, { seq: delivery.seq });
      if (!stored) return;
    }
    await this.#bury(delivery, { reason, lastError: reason }, attempt, publishedAt);
  }
}

/** A nak delay in whole ms; zero or nonsense means "redeliver now" (a plain nak). */
function clampDelay(delayMs: number): number | undefined {
  return Number.isFinite(delayMs) && delayMs >= 1 ? Math.round(delayMs) : undefined;
}
