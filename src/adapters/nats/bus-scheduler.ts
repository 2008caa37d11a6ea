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
 */
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { NatsContext } from './connection.js';
import { confirmSent, Pause, PULL, recover, type ConnectionGate } from './bus-loop.js';
import { ensureDurableConsumer, storeMessage } from './bus-streams.js';
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

export interface SchedulerContext {
  nats: NatsContext;
  gate: ConnectionGate;
  names: BusNames;
  settled: SettledRecords;
  now: () => number;
  onError: (error: unknown) => void;
}

export class DelayScheduler {
  readonly #context: SchedulerContext;
  readonly #pause = new Pause();
  /** Messages due soon, with the timer that releases each. */
  readonly #held = new Map<JsMsg, { due: number; timer: NodeJS.Timeout }>();
  readonly #releasing = new Set<Promise<void>>();
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  #messages: ConsumerMessages | undefined;
  #unlisten: () => void = () => undefined;
  /** Consecutive ends of the consume (reset by a message or a heartbeat): the backoff before the next. */
  #failures = 0;

  constructor(context: SchedulerContext) {
    this.#context = context;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    // The library pulls again after a reconnection by itself, and says nothing of a server
    // that shut down under its pull request (a fetch failed with it): reported here.
    this.#unlisten = this.#context.gate.onReconnect(() => {
      this.#context.onError(new Error('NATS event bus: the delay scheduler lost its pull request with the connection; pulling again'));
    });
    this.#loop = this.#run();
  }

  /** Stops pulling; held messages go back to the server at once, for another replica. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unlisten();
    this.#messages?.stop();
    this.#pause.wake();
    await this.#loop;
    for (const [message, { due, timer }] of this.#held) {
      clearTimeout(timer);
      message.nak(Math.max(0, Math.round(due - this.#context.now())) || undefined);
    }
    this.#held.clear();
    await Promise.allSettled([...this.#releasing]);
    await confirmSent(this.#context.nats).catch(this.#context.onError);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let error: unknown;
      try {
        error = await this.#consume();
      } catch (failure) {
        error = failure;
      }
      if (!this.#running) break;
      this.#context.onError(new Error('NATS event bus: the delay scheduler stopped consuming', { cause: error }));
      await recover(this.#pause, this.#context.gate, ++this.#failures, error);
    }
  }

  /** Creates (or updates) the durable consumer and consumes it until the library gives up; resolves with why. */
  async #consume(): Promise<unknown> {
    const { nats, names } = this.#context;
    const info = await ensureDurableConsumer(nats.jsm, {
      stream: names.delayStream,
      name: names.scheduler,
      filterSubject: names.delayAll,
      ackWaitMs: ACK_WAIT_MS,
      // Every waiting message is "ack pending" here (nak'ed with a delay): no cap, or a
      // backlog of far-off messages would block one that is due now.
      maxAckPending: -1,
    });
    if (!this.#running) return undefined;
    const consumer: Consumer = nats.js.consumers.getConsumerFromInfo(info);
    const messages = await consumer.consume({
      callback: (message) => this.#schedule(message),
      max_messages: BATCH,
      ...PULL,
      abort_on_missing_resource: true,
    });
    this.#messages = messages;
    if (!this.#running) messages.stop();
    void this.#watch(messages);
    return (await messages.closed()) ?? new Error('the consume ended');
  }

  /** The consume's status events: a heartbeat proves the server has the pull request; missed ones are reported once. */
  async #watch(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      if (status.type === 'heartbeat') this.#failures = 0;
      // The library then asks for the consumer's info and pulls again, or ends the consume if it is gone.
      else if (status.type === 'heartbeats_missed' && status.count === 2) {
        this.#context.onError(new Error('NATS event bus: the delay scheduler\'s pull request went unanswered', { cause: new Error('heartbeats missed') }));
      }
    }
  }

  /** The consume's callback: synchronous, and never throws (a throw would end the consume). */
  #schedule(message: JsMsg): void {
    this.#failures = 0;
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
    const timer = setTimeout(
      () => {
        this.#held.delete(message);
        // Timers may fire a millisecond early against the wall clock: never deliver early.
        if (this.#context.now() < due) {
          this.#hold(message, due);
          return;
        }
        const release = this.#release(message).finally(() => this.#releasing.delete(release));
        this.#releasing.add(release);
      },
      Math.max(0, due - this.#context.now()),
    );
    this.#held.set(message, { due, timer });
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
