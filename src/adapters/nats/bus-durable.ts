/**
 * A durable pull consumer of the NATS event bus, shared by every replica, and the loop
 * that pulls from it (each slot of a consume(), `bus-consumer.ts`; the delay scheduler,
 * `bus-scheduler.ts`): the consumer is created (or updated) with its configuration on
 * first use, and again after a failed pull (an operator may have deleted it, the server
 * lost its state), which is reported and backed off.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiError, type Consumer, type ConsumerConfig, type ConsumerInfo } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { NatsContext } from './connection.js';
import { Pause, recover, type ConnectionGate } from './bus-loop.js';

const CONSUMER_NAME_IN_USE = 10013;
const CONSUMER_ALREADY_EXISTS = 10148;

export interface DurableConfig {
  stream: string;
  name: string;
  filterSubject: string;
  ackWaitMs: number;
  maxAckPending: number;
}

export interface DurableContext {
  nats: NatsContext;
  gate: ConnectionGate;
  onError: (error: unknown) => void;
}

export class DurableConsumer {
  readonly #context: DurableContext;
  readonly #config: DurableConfig;
  /** Backoffs, which `wake()` ends at once (on stop). */
  readonly #pause = new Pause();
  /** Created (or updated) once, and again after a failed pull. */
  #consumer: Promise<Consumer> | undefined;

  constructor(context: DurableContext, config: DurableConfig) {
    this.#context = context;
    this.#config = config;
  }

  /**
   * Calls `pull` with the consumer until `running()` is false. A pull resolves true when
   * it got a message or its request expired; false when it ended at once, empty (a server
   * that keeps doing so must not make the loop spin), which backs off; it throws when it
   * failed: reported as `what`, backed off, and the consumer is created again. `alive()`
   * tells the loop the pull works (the backoff starts again from its first step).
   */
  async loop(running: () => boolean, what: string, pull: (consumer: Consumer, alive: () => void) => Promise<boolean>): Promise<void> {
    const { nats, gate, onError } = this.#context;
    let failures = 0;
    const alive = (): void => void (failures = 0);
    while (running()) {
      try {
        this.#consumer ??= ensureDurableConsumer(nats, this.#config).then((info) => nats.js.consumers.getConsumerFromInfo(info));
        const consumer = await this.#consumer;
        if (!running()) break;
        if (await pull(consumer, alive)) alive();
        else if (running()) await recover(this.#pause, gate, ++failures, undefined);
      } catch (error) {
        if (!running()) break;
        this.#consumer = undefined;
        onError(new Error(what, { cause: error }));
        await recover(this.#pause, gate, ++failures, error);
      }
    }
  }

  wake(): void {
    this.#pause.wake();
  }
}

/**
 * Creates a durable pull consumer, or updates its ack wait: every replica shares it (the
 * last replica to start sets the ack wait when they differ).
 */
async function ensureDurableConsumer({ jsm }: NatsContext, consumer: DurableConfig): Promise<ConsumerInfo> {
  const config: Partial<ConsumerConfig> = {
    durable_name: consumer.name,
    filter_subject: consumer.filterSubject,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(consumer.ackWaitMs),
    // Unlimited on the server; the adapter bounds deliveries and dead-letters
    // (`bus-consumer.ts`). In a work-queue stream a message past the server's max_deliver
    // stays stored forever (nats-server#5564, and #4998 for interest streams), announced
    // only by one MAX_DELIVERIES advisory on core NATS, lost when no replica listens at
    // that instant (and not sent again, #7148): it would still count as pending and could
    // hold the ack floor the sweep waits on. A backstop of maxDeliver + 1 is no better: a
    // crash before that delivery's burial leaves the message undelivered for good.
    // No server `backoff` either: it spaces only redeliveries after the ack wait, never a
    // nak (nats-server#4726), and replaces the ack wait with its first step, which the
    // port's `backoffMs` (after a nak or throw) and `working()` do not mean.
    max_deliver: -1,
    max_ack_pending: consumer.maxAckPending,
  };
  try {
    // 2.9 treats a create of an existing durable as an update; newer servers refuse a
    // differing configuration, then it is updated explicitly.
    return await jsm.consumers.add(consumer.stream, config);
  } catch (error) {
    const exists = error instanceof JetStreamApiError && [CONSUMER_NAME_IN_USE, CONSUMER_ALREADY_EXISTS].includes(error.code);
    if (!exists) throw error;
    return jsm.consumers.update(consumer.stream, consumer.name, {
      ack_wait: config.ack_wait,
      max_deliver: config.max_deliver,
      max_ack_pending: config.max_ack_pending,
    });
  }
}
