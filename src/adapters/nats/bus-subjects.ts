/**
 * How the NATS event bus names things on the server: its streams, the NATS subject
 * of each port subject in each of them, the durable consumers, the payload bucket, and
 * the headers a stored message carries.
 *
 * Port subjects are free text (`extraction`, `contract.lz9.1`, anything), but a NATS
 * subject token may not hold `.`, `*`, `>` or whitespace, and consumer names become
 * file names on the server. So every port subject is encoded into one token of
 * `[A-Za-z0-9_-]`: one port subject is exactly one NATS token, and no port subject's
 * filter can match another's (`a.b` must not be delivered to a consumer of `a`).
 */
import { createHash } from 'node:crypto';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/** Headers on the bus's stored messages (the port subject and times survive republishing). */
export const BUS_HEADERS = {
  /** The port subject, JSON-encoded (NATS header values cannot hold CR/LF). */
  subject: 'Engram-Subject',
  /** Epoch ms of the original publish. */
  publishedAt: 'Engram-Published-At',
  /** Epoch ms before which the message must not be delivered (delay stream only). */
  notBefore: 'Engram-Not-Before',
  /** Name of the Object Store object holding a payload too big for one message. */
  payloadObject: 'Engram-Payload-Object',
  /** Dead letters: the reason (JSON-encoded), the deliveries made, the failure time (epoch ms). */
  deadReason: 'Engram-Dead-Reason',
  /** Dead letters: the last failed delivery's own reason (JSON-encoded), when one was given. */
  deadLastError: 'Engram-Dead-Last-Error',
  deadAttempts: 'Engram-Dead-Attempts',
  deadFailedAt: 'Engram-Dead-Failed-At',
} as const;

/** The headers every stored bus message starts with: its port subject, publish time, and payload object if any. */
export function messageHeaders(subject: string, publishedAt: number, object?: string): MsgHdrs {
  const headers = natsHeaders();
  headers.set(BUS_HEADERS.subject, encodeText(subject));
  headers.set(BUS_HEADERS.publishedAt, String(publishedAt));
  if (object) headers.set(BUS_HEADERS.payloadObject, object);
  return headers;
}

/** JetStream's own deduplication header. */
export const MSG_ID_HEADER = 'Nats-Msg-Id';

/** Encoded tokens longer than this are hashed, so names stay short enough for file names. */
const MAX_TOKEN_LENGTH = 100;

/**
 * One NATS subject token for a port subject, injective: letters, digits and `-` stay,
 * `_` becomes `__`, every other UTF-8 byte becomes `_XX` (upper-case hex). A long subject
 * becomes `_H` + a SHA-256 prefix (`H` is not a hex digit, so no encoding collides).
 */
export function subjectToken(subject: string): string {
  let token = '';
  for (const byte of Buffer.from(subject, 'utf8')) {
    const isPlain =
      (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x2d;
    if (isPlain) token += String.fromCharCode(byte);
    else if (byte === 0x5f) token += '__';
    else token += `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  // The empty subject: a lone `_` is not the encoding of anything else.
  if (token === '') return '_';
  if (token.length > MAX_TOKEN_LENGTH) return `_H${createHash('sha256').update(subject).digest('hex').slice(0, 40)}`;
  return token;
}

export interface BusNames {
  /** Work-queue stream: messages ready for delivery. */
  readonly stream: string;
  /** Work-queue stream: messages waiting for their `notBefore`. */
  readonly delayStream: string;
  /** Limits stream: dead letters. */
  readonly deadStream: string;
  /** Limits stream, one message per subject: why a work-queue message's last delivery failed. */
  readonly failedStream: string;
  /** Limits stream, one message per subject: work-queue messages whose work is finished (`bus-settled.ts`). */
  readonly settledStream: string;
  /** Object Store bucket for payloads bigger than one message. */
  readonly payloadBucket: string;
  readonly workAll: string;
  readonly delayAll: string;
  readonly deadAll: string;
  readonly failedAll: string;
  readonly settledAll: string;
  /** Durable consumer of the delay stream, shared by every replica's scheduler. */
  readonly scheduler: string;
  work(subject: string): string;
  delayed(subject: string): string;
  dead(subject: string): string;
  /** The failure record of the work-queue message `seq` of a port subject; `seq` absent: all of the subject's. */
  failed(subject: string, seq?: number): string;
  /** The record that message `seq` of the work-queue stream `stream` (the work or the delay stream) is finished. */
  settled(stream: string, seq: number): string;
  /** The work subject a delayed message moves to when due. */
  workForDelayed(delayedSubject: string): string;
  /** Durable consumer of one port subject, shared by every replica. */
  consumer(subject: string): string;
  /**
   * The stored `Nats-Msg-Id` for a port msgId: JetStream deduplicates per stream, the port
   * per subject, so the id is qualified by the subject.
   */
  msgId(subject: string, msgId: string): string;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export function busNames(stream: string, subjectPrefix: string, payloadBucket?: string): BusNames {
  if (!PREFIX_PATTERN.test(subjectPrefix)) {
    throw new Error(`NATS event bus: subject prefix ${JSON.stringify(subjectPrefix)} must be dot-separated tokens of [A-Za-z0-9_-]`);
  }
  const work = `${subjectPrefix}.q`;
  const delayed = `${subjectPrefix}.d`;
  const dead = `${subjectPrefix}.dead`;
  const failed = `${subjectPrefix}.failed`;
  const settled = `${subjectPrefix}.settled`;
  const delayStream = `${stream}_DELAY`;
  return {
    stream,
    delayStream,
    deadStream: `${stream}_DEAD`,
    failedStream: `${stream}_FAILED`,
    settledStream: `${stream}_SETTLED`,
    payloadBucket: payloadBucket ?? `${stream.toLowerCase()}_payloads`,
    workAll: `${work}.>`,
    delayAll: `${delayed}.>`,
    deadAll: `${dead}.>`,
    failedAll: `${failed}.>`,
    settledAll: `${settled}.>`,
    scheduler: 'scheduler',
    work: (subject) => `${work}.${subjectToken(subject)}`,
    delayed: (subject) => `${delayed}.${subjectToken(subject)}`,
    dead: (subject) => `${dead}.${subjectToken(subject)}`,
    failed: (subject, seq) => `${failed}.${subjectToken(subject)}.${seq === undefined ? '>' : seq}`,
    settled: (of, seq) => {
      if (of !== stream && of !== delayStream) throw new Error(`not a work-queue stream of the bus: ${of}`);
      return `${settled}.${of === stream ? 'q' : 'd'}.${seq}`;
    },
    workForDelayed: (delayedSubject) => {
      if (!delayedSubject.startsWith(`${delayed}.`)) throw new Error(`not a delayed subject: ${delayedSubject}`);
      return `${work}.${delayedSubject.slice(delayed.length + 1)}`;
    },
    consumer: (subject) => `q_${subjectToken(subject)}`,
    msgId: (subject, msgId) =>
      // Header values cannot hold CR/LF; such an id is hashed rather than rejected.
      `${subjectToken(subject)}:${/[\r\n]/.test(msgId) ? `sha256:${createHash('sha256').update(msgId).digest('hex')}` : msgId}`,
  };
}

/** A JSON-encoded header value: any text survives, CR/LF included. */
export function encodeText(text: string): string {
  return JSON.stringify(text);
}

export function decodeText(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'string' ? parsed : undefined;
  } catch {
    return value;
  }
}

/** An epoch-ms header, or undefined when absent or damaged. */
export function decodeTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** NATS subject matching: `*` one token, a final `>` one or more. */
export function subjectMatches(filter: string, subject: string): boolean {
  const want = filter.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length || (want[i] !== '*' && want[i] !== have[i])) return false;
  }
  return want.length === have.length;
}
