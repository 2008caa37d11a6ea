/**
 * Dead letters of the NATS event bus: a limits stream (`<stream>_DEAD`) holding each
 * buried message's body with headers for its port subject, the reason, the deliveries
 * made, and when it was published and when it failed. A dead letter's id is its
 * sequence in that stream. A payload kept in the Object Store stays there: the dead
 * letter carries the same object reference.
 */
import type { MsgHdrs } from '@nats-io/transport-node';
import type { DeadLetter } from '../../ports/index.js';
import type { NatsContext } from './connection.js';
import type { ConnectionGate } from './bus-loop.js';
import type { BusPayloads } from './bus-payloads.js';
import { isNoMessage, storeMessage } from './bus-streams.js';
import { BUS_HEADERS, decodeText, decodeTime, encodeText, messageHeaders, type BusNames } from './bus-subjects.js';

/** A reason is a header; an error message with a stack trace must not crowd out the payload. */
const MAX_REASON_LENGTH = 1000;

export interface BurialRequest {
  /** The buried message's sequence in the work-queue stream (makes a repeated burial a no-op). */
  seq: number;
  subject: string;
  headers: MsgHdrs | undefined;
  data: Uint8Array;
  attempts: number;
  reason: string;
  /** The last failed delivery's own reason, when one was given. */
  lastError?: string;
  publishedAt: number;
}

export interface DeadLetterContext {
  nats: NatsContext;
  gate: ConnectionGate;
  names: BusNames;
  payloads: BusPayloads;
  now: () => number;
  onError: (error: unknown) => void;
}

export class DeadLetters {
  readonly #context: DeadLetterContext;

  constructor(context: DeadLetterContext) {
    this.#context = context;
  }

  /** Stores the dead letter; resolves once the server has it (the caller terminates the original after). */
  async bury(request: BurialRequest): Promise<void> {
    const { nats, gate, names, now } = this.#context;
    const headers = messageHeaders(request.subject, request.publishedAt, request.headers?.get(BUS_HEADERS.payloadObject));
    const reason =
      request.reason.length > MAX_REASON_LENGTH ? `${request.reason.slice(0, MAX_REASON_LENGTH)}… (truncated)` : request.reason;
    headers.set(BUS_HEADERS.deadReason, encodeText(reason));
    if (request.lastError !== undefined) headers.set(BUS_HEADERS.deadLastError, encodeText(request.lastError.slice(0, MAX_REASON_LENGTH)));
    headers.set(BUS_HEADERS.deadAttempts, String(request.attempts));
    headers.set(BUS_HEADERS.deadFailedAt, String(now()));
    await storeMessage(nats, gate, {
      stream: names.deadStream,
      subject: names.dead(request.subject),
      data: request.data,
      headers,
      msgId: `dead:${names.stream}:${request.seq}`,
    });
  }

  /**
   * Dead letters, oldest failure first. Read one direct get per dead letter (the
   * `next_by_subj` walk 2.9 supports): dead letters are few, and 2.9 has neither batch
   * direct get nor pull consumers without acks (the client's ordered consumer).
   */
  async list(subject?: string): Promise<DeadLetter[]> {
    const { nats, names } = this.#context;
    const filter = subject === undefined ? names.deadAll : names.dead(subject);
    const letters: DeadLetter[] = [];
    let seq = 1;
    for (;;) {
      const stored = await nats.jsm.direct.getMessage(names.deadStream, { seq, next_by_subj: filter });
      if (!stored) break;
      letters.push(await this.#toDeadLetter(stored.seq, stored.header, stored.data));
      seq = stored.seq + 1;
    }
    // Stream order is write order; failure times come from each replica's clock.
    return letters.sort((a, b) => a.failedAt - b.failedAt || Number(a.id) - Number(b.id));
  }

  /**
   * Publishes the dead letter's payload as a fresh message on its subject and deletes the
   * dead letter; false when there is none with that id (or a concurrent retry took it).
   */
  async retry(id: string): Promise<boolean> {
    const { nats, gate, names, now } = this.#context;
    const seq = Number(id);
    if (!Number.isSafeInteger(seq) || seq <= 0) return false;
    const stored = await nats.jsm.streams.getMessage(names.deadStream, { seq });
    const subject = stored ? decodeText(stored.header?.get(BUS_HEADERS.subject)) : undefined;
    if (!stored || subject === undefined) return false;
    // The object (if any) now belongs to the fresh message, whose ack deletes it.
    const headers = messageHeaders(subject, now(), stored.header?.get(BUS_HEADERS.payloadObject));
    await storeMessage(nats, gate, {
      stream: names.stream,
      subject: names.work(subject),
      data: stored.data,
      headers,
      // A retry that crashed before the delete can be repeated without a second copy.
      msgId: `retry:${names.deadStream}:${seq}`,
    });
    try {
      return await nats.jsm.streams.deleteMessage(names.deadStream, seq, false);
    } catch (error) {
      if (isNoMessage(error)) return false;
      throw error;
    }
  }

  async #toDeadLetter(seq: number, headers: MsgHdrs | undefined, data: Uint8Array): Promise<DeadLetter> {
    const lastError = decodeText(headers?.get(BUS_HEADERS.deadLastError));
    return {
      id: String(seq),
      subject: decodeText(headers?.get(BUS_HEADERS.subject)) ?? '',
      payload: await this.#context.payloads.listed(headers, data, this.#context.onError),
      attempts: Number(headers?.get(BUS_HEADERS.deadAttempts)) || 0,
      reason: decodeText(headers?.get(BUS_HEADERS.deadReason)) ?? '',
      ...(lastError === undefined ? {} : { lastError }),
      publishedAt: decodeTime(headers?.get(BUS_HEADERS.publishedAt)) ?? 0,
      failedAt: decodeTime(headers?.get(BUS_HEADERS.deadFailedAt)) ?? 0,
    };
  }
}
