/**
 * Delayed delivery (`notBefore`) for the NATS event bus. JetStream 2.9 has no scheduled
 * messages, so a message that is not yet due is published to the delay stream instead,
 * and every bus that consumes runs this scheduler: nats.js's `consume()` on one durable
 * pull consumer of the delay stream, shared by all replicas. The library keeps a pull
 * request open, pulls again as messages arrive, after a reconnection and after missed
 * heartbeats; what it cannot do is create again a consumer that is gone (an operator
 * deleted it), which it reports by ending (`abort_on_missing_resource`): then the
 * scheduler creates the consumer and consumes anew. Unlike the work slots
 * (`bus-consumer.ts`), the scheduler may take messages ahead: its callback only naks or
 * sets a timer, so nothing waits behind a long handler.
 *
 * A message due later than `HOLD_MS` is nak'ed with a delay that brings it back a little
 * before it is due (the server keeps it; nothing is held in memory for minutes). One due
 * within `HOLD_MS` is held here on a timer and, at its due time, published to the work
 * queue under its msg id, recorded as finished (`bus-settled.ts`), then acked: a crash
 * in between republishes it under the same id, which the work queue's dedup window
 * discards. Its first real delivery is attempt 1, because it is a new message in the work
 * queue.
 *
 * A scheduler that stops releases what it holds itself, at the due times (so `stop` takes
 * up to `HOLD_MS`), rather than nak it back: nats-server 2.9 gives a redelivery to the
 * oldest waiting pull request without checking that anyone still listens on it (its
 * `nextWaiting` leaves that to `processWaiting`, which runs only once the consumer is
 * idle), so a nak right after this consume ended could go to its own dead request and
 * come back only after the whole ack wait, 10 s late.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { DurableConsumer, type DurableContext } from './bus-durable.js';
import { confirmSent, PULL } from './bus-loop.js';
import { storeMessage } from './bus-streams.js';
import type { SettledRecords } from './bus-settled.js';
import { BUS_HEADERS, decodeTime, MSG_ID_HEADER, type BusNames } from './bus-subjects.js';

/**
 * Messages due within this are held in memory until due. The server's redelivery after a
 * nak delay is accurate to a few ms on 2.9, but coming back half of this early absorbs a
 * busy server, and the local timer then releases the message on the dot.
 */
const HOLD_MS = 1_000;
/** Longer than any hold plus a republish: a held message is not redelivered meanwhile. */
const ACK_WAIT_MS = 10_000;
const BATCH = 100;
/** After a failed republish (the server away), try again this much later. */
const RETRY_MS = 1_000;

export interface SchedulerContext extends DurableContext {
  names: BusNames;
  settled: SettledRecords;
  now: () => number;
}

export class DelayScheduler {
  readonly #context: SchedulerContext;
  readonly #durable: DurableConsumer;
  /** Messages due soon, each until released. */
  readonly #held = new Set<Promise<void>>();
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  #messages: ConsumerMessages | undefined;
  #unlisten: () => void = () => undefined;

  constructor(context: SchedulerContext) {
    this.#context = context;
    this.#durable = new DurableConsumer(context, {
      stream: context.names.delayStream,
      name: context.names.scheduler,
      filterSubject: context.names.delayAll,
      ackWaitMs: ACK_WAIT_MS,
      // Every waiting message is "ack pending" here (nak'ed with a delay): no cap, or a
      // backlog of far-off messages would block one that is due now.
      maxAckPending: -1,
    });
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    // The library pulls again after a reconnection by itself, and says nothing of a server
    // that shut down under its pull request (a fetch failed with it): reported here.
    this.#unlisten = this.#context.gate.onReconnect(() => {
      this.#context.onError(new Error('NATS event bus: the delay scheduler lost its pull request with the connection; pulling again'));
    });
    this.#loop = this.#durable.loop(() => this.#running, 'NATS event bus: the delay scheduler stopped consuming', (consumer, alive) => this.#consume(consumer, alive));
  }

  /** Stops pulling, and returns once the messages it held are released (within `HOLD_MS`). */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unlisten();
    this.#messages?.stop();
    this.#durable.wake();
    await this.#loop;
    await Promise.allSettled([...this.#held]);
    await confirmSent(this.#context.nats).catch(this.#context.onError);
  }

  /**
   * Consumes until the library gives up, and throws why. A message or a heartbeat is
   * `alive()`: it proves the server has the pull request.
   */
  async #consume(consumer: Consumer, alive: () => void): Promise<never> {
    const messages = await consumer.consume({
      callback: (message) => {
        alive();
        this.#schedule(message);
      },
      max_messages: BATCH,
      ...PULL,
      abort_on_missing_resource: true,
    });
    this.#messages = messages;
    if (!this.#running) messages.stop();
    void this.#watch(messages, alive);
    throw (await messages.closed()) ?? new Error('the consume ended');
  }

  /** The consume's status events: missed heartbeats are reported once. */
  async #watch(messages: ConsumerMessages, alive: () => void): Promise<void> {
    for await (const status of messages.status()) {
      if (status.type === 'heartbeat') alive();
      // The library then asks for the consumer's info and pulls again, or ends the consume if it is gone.
      else if (status.type === 'heartbeats_missed' && status.count === 2) {
        this.#context.onError(new Error('NATS event bus: the delay scheduler\'s pull request went unanswered', { cause: new Error('heartbeats missed') }));
      }
    }
  }

  /** The consume's callback: synchronous, and never throws (a throw would end the consume). */
  #schedule(message: JsMsg): void {
    try {
      if (!this.#running) {
        message.nak();
        return;
      }
      // A message without a due time (damaged) is simply due now.
      const due = decodeTime(message.headers?.get(BUS_HEADERS.notBefore)) ?? 0;
      const wait = due - this.#context.now();
      if (wait > HOLD_MS) message.nak(Math.round(wait - HOLD_MS / 2));
      else this.#hold(message, due);
    } catch (error) {
      // A nak lost with the connection: the ack wait brings the message back.
      this.#context.onError(new Error('NATS event bus: the delay scheduler could not schedule a message', { cause: error }));
    }
  }

  #hold(message: JsMsg, due: number): void {
    const held = this.#untilDue(due)
      .then(() => this.#release(message))
      .finally(() => this.#held.delete(held));
    this.#held.add(held);
  }

  async #untilDue(due: number): Promise<void> {
    // Timers may fire a millisecond early against the wall clock: never deliver early.
    for (let wait = due - this.#context.now(); wait > 0; wait = due - this.#context.now()) await sleep(wait);
  }

  async #release(message: JsMsg): Promise<void> {
    const { nats, gate, names, settled, onError } = this.#context;
    try {
      // Only the bus's own headers move: the stored ones include the publish's stream
      // expectation, which names the delay stream.
      const headers = natsHeaders();
      for (const key of message.headers?.keys() ?? []) {
        if (key.startsWith('Engram-') && key !== BUS_HEADERS.notBefore) headers.set(key, message.headers?.get(key) ?? '');
      }
      await storeMessage(nats, gate, {
        stream: names.stream,
        subject: names.workForDelayed(message.subject),
        data: message.data,
        headers,
        msgId: message.headers?.get(MSG_ID_HEADER) || `delayed:${names.delayStream}:${message.seq}`,
      });
      // The work queue has it: a killed server that brings it back here cannot make it
      // wait again. Without the record it would only wait for the sweep's ack floor.
      await settled.record(names.delayStream, message.seq, message.headers?.get(MSG_ID_HEADER)).catch(onError);
      await message.ackAck();
    } catch (error) {
      onError(new Error('NATS event bus: moving a due message to the work queue failed', { cause: error }));
      message.nak(RETRY_MS);
    }
  }
}
