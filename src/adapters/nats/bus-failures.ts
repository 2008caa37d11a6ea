/**
 * Why a NATS work-queue message's last delivery failed, kept beside it: JetStream keeps a
 * message's redelivery state in the consumer, where no one can write a reason, and a
 * stored message cannot be changed. So a failed delivery writes a record to the limits
 * stream `<stream>_FAILED` on `<prefix>.failed.<subject token>.<seq>`, one per message
 * (`max_msgs_per_subject: 1`: the next failure replaces it): its reason, the attempt, when
 * it failed and when it is due again. `queued` reads them to list a message as `retrying`
 * with its last error; the burial of a message whose deliveries ran out reads its record
 * for the dead letter. The ack or burial of a message that failed before removes it; one
 * left behind by a crash in between is never read (its message is gone) and expires.
 */
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { StoredMsg } from '@nats-io/jetstream';
import type { NatsContext } from './connection.js';
import type { ConnectionGate } from './bus-loop.js';
import { storeMessage } from './bus-streams.js';
import type { BusNames } from './bus-subjects.js';

export interface Failure {
  /** The failed delivery's reason; absent when it gave none. */
  reason?: string;
  /** The delivery that failed (1 for the first). */
  attempt: number;
  failedAt: number;
  /** When it is delivered again (the nak's delay from `failedAt`). */
  dueAt: number;
}

export interface FailureContext {
  nats: NatsContext;
  gate: ConnectionGate;
  names: BusNames;
}

export class FailureRecords {
  readonly #context: FailureContext;

  constructor(context: FailureContext) {
    this.#context = context;
  }

  /** Stores why delivery `failure.attempt` of message `seq` failed; resolves once the server has it. */
  async record(subject: string, seq: number, failure: Failure): Promise<void> {
    const { nats, gate, names } = this.#context;
    await storeMessage(nats, gate, {
      stream: names.failedStream,
      subject: names.failed(subject, seq),
      data: new TextEncoder().encode(JSON.stringify(failure)),
      headers: natsHeaders(),
      // A publish retried after a lost answer stores the record once.
      msgId: `failed:${names.stream}:${seq}:${failure.attempt}`,
    });
  }

  /** The last failure recorded for message `seq`, if any. */
  async get(subject: string, seq: number): Promise<Failure | undefined> {
    const { nats, names } = this.#context;
    const stored = await nats.jsm.direct.getMessage(names.failedStream, { last_by_subj: names.failed(subject, seq) });
    return stored ? parsed(stored) : undefined;
  }

  /** Every failure recorded for the subject's messages, by message sequence: as many as messages that failed and wait. */
  async ofSubject(subject: string): Promise<Map<number, Failure>> {
    const { nats, names } = this.#context;
    const found = new Map<number, Failure>();
    for (let seq = 1; ; ) {
      const stored = await nats.jsm.direct.getMessage(names.failedStream, { seq, next_by_subj: names.failed(subject) });
      if (!stored) break;
      const failure = parsed(stored);
      const message = Number(stored.subject.slice(stored.subject.lastIndexOf('.') + 1));
      if (failure && Number.isSafeInteger(message)) found.set(message, failure);
      seq = stored.seq + 1;
    }
    return found;
  }

  /** Removes message `seq`'s record (it was acked or buried). */
  async forget(subject: string, seq: number): Promise<void> {
    const { nats, names } = this.#context;
    await nats.jsm.streams.purge(names.failedStream, { filter: names.failed(subject, seq) });
  }
}

/** A record as written by `record`; a damaged one reads as none. */
function parsed(stored: StoredMsg): Failure | undefined {
  try {
    const value = JSON.parse(new TextDecoder().decode(stored.data)) as Partial<Failure>;
    if (typeof value.attempt !== 'number' || typeof value.failedAt !== 'number' || typeof value.dueAt !== 'number') return undefined;
    return {
      ...(typeof value.reason === 'string' ? { reason: value.reason } : {}),
      attempt: value.attempt,
      failedAt: value.failedAt,
      dueAt: value.dueAt,
    };
  } catch {
    return undefined;
  }
}
