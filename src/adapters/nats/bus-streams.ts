/**
 * The server side of the NATS event bus: its streams, created idempotently (several
 * replicas start at once, and a restart must not fail on what the previous run created),
 * plus the few stream-level calls the bus makes. Their durable consumers: `bus-durable.ts`.
 *
 * Nothing here needs a server newer than 2.9: no per-message TTL, no scheduled delivery,
 * no priority groups, no multi-filter consumers, no pull consumers without acks.
 */
import {
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type PubAck,
  type StreamConfig,
} from '@nats-io/jetstream';
import { errors, nanos, type MsgHdrs } from '@nats-io/transport-node';
import type { NatsContext } from './connection.js';
import { retryDelayMs, type ConnectionGate } from './bus-loop.js';
import type { BusNames } from './bus-subjects.js';

/**
 * Oldest server the bus runs on: 2.9 has direct get and the consumer-create API with a
 * filter subject; the client's pull-consumer API (`js.consumers`) needs 2.9.4.
 */
export const MIN_SERVER_VERSION = [2, 9, 4] as const;

const STREAM_NAME_IN_USE = 10058;
/** What nats-server 2.9 answers, instead of "name in use", to a replica that adds a stream another is adding at that moment. */
const STREAM_SUBJECT_OVERLAP = 10065;
const NO_MESSAGE_FOUND = 10037;
const STREAM_STORE_EOF = 10057;

export function assertServerVersion(version: string): void {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  const [major, minor, patch] = parts ? parts.slice(1).map(Number) : [0, 0, 0];
  const [minMajor, minMinor, minPatch] = MIN_SERVER_VERSION;
  const tooOld =
    !parts || major < minMajor || (major === minMajor && (minor < minMinor || (minor === minMinor && patch < minPatch)));
  if (tooOld) {
    throw new Error(
      `NATS event bus: nats-server ${version} is too old; Engram needs ${MIN_SERVER_VERSION.join('.')} or newer with JetStream enabled`,
    );
  }
}

/** Creates the bus's streams, or brings existing ones to this configuration. */
export async function ensureBusStreams(jsm: JetStreamManager, names: BusNames, dedupWindowMs: number): Promise<void> {
  const queue = (name: string, subject: string): Partial<StreamConfig> & { name: string } => ({
    name,
    subjects: [subject],
    // Work queue: an acked (or terminated) message is removed, so the stream holds
    // exactly what is pending, and each message goes to one consumer.
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(dedupWindowMs),
  });
  await Promise.all([
    ensureStream(jsm, queue(names.stream, names.workAll)),
    ensureStream(jsm, queue(names.delayStream, names.delayAll)),
    ensureStream(jsm, {
      name: names.deadStream,
      subjects: [names.deadAll],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      // A message buried twice (its term lost, redelivered, buried again) is stored once.
      duplicate_window: nanos(dedupWindowMs),
      // Listing reads with direct get, which skips the API layer and needs this flag.
      allow_direct: true,
    }),
    // One record per work-queue message, its last failure: a newer one replaces it. A
    // record whose message is gone (its ack came, the record's removal did not) is never
    // read again; it goes after a week rather than stay forever.
    ensureStream(jsm, recordStream(names.failedStream, names.failedAll, FAILED_RECORD_MAX_AGE_MS, dedupWindowMs)),
    // One record per finished work-queue message (`bus-settled.ts`), needed only while a
    // killed server can still bring its message back: it outlives by far the seconds 2.9
    // takes to write a removal down.
    ensureStream(jsm, recordStream(names.settledStream, names.settledAll, SETTLED_RECORD_MAX_AGE_MS, dedupWindowMs)),
  ]);
}

/** How long a failure record outlives the failure, at most (see `bus-failures.ts`). */
const FAILED_RECORD_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a record that a message is finished is kept (see `bus-settled.ts`). */
const SETTLED_RECORD_MAX_AGE_MS = 24 * 60 * 60 * 1000;

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    // Adding an existing stream with the same configuration succeeds: two replicas
    // starting together both get here without an error.
    await jsm.streams.add(config);
  } catch (error) {
    const code = error instanceof JetStreamApiError ? error.code : undefined;
    if (code === STREAM_SUBJECT_OVERLAP && !(await streamExists(jsm, config.name))) throw error;
    if (code !== STREAM_NAME_IN_USE && code !== STREAM_SUBJECT_OVERLAP) throw error;
    // It exists with another configuration (say a new dedup window), or another replica
    // has just created it: update it. A change the server refuses (retention, storage)
    // surfaces as its error.
    const { name, ...changes } = config;
    await jsm.streams.update(name, changes);
  }
}

/** Whether the stream exists, allowing a replica that is creating it a moment to finish. */
async function streamExists(jsm: JetStreamManager, name: string): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await jsm.streams.info(name).then(() => true, () => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

export interface StoreRequest {
  stream: string;
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs;
  msgId: string;
}

/** Attempts of a publish that timed out or found JetStream not (yet) answering. */
const PUBLISH_ATTEMPTS = 3;

/**
 * Publishes into one of the bus's streams and resolves with the PubAck (the message is
 * stored). A request sent just as the connection drops can go unanswered, so a timed-out
 * publish is tried again; every bus message carries a msg id,
 * so a retry of a publish that was in fact stored is deduplicated. `retried` tells the
 * caller that a duplicate may be its own earlier attempt.
 */
export async function storeMessage(
  nats: NatsContext,
  gate: ConnectionGate,
  request: StoreRequest,
): Promise<{ ack: PubAck; retried: boolean }> {
  for (let attempt = 1; ; attempt++) {
    // Sent while the client re-establishes the connection, a request may be dropped and
    // cost a whole timeout: wait for the connection first (as long as a request would).
    await gate.upWithin(nats.timeoutMs);
    try {
      const ack = await nats.js.publish(request.subject, request.data, {
        msgID: request.msgId,
        headers: request.headers,
        // A stray stream listening on the same subjects must not take the message.
        expect: { streamName: request.stream },
      });
      return { ack, retried: attempt > 1 };
    } catch (error) {
      const transient = error instanceof errors.TimeoutError || (error instanceof Error && error.name === 'JetStreamNotEnabled');
      if (!transient || attempt >= PUBLISH_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt)));
    }
  }
}

/** Stored messages on one exact subject of a stream. */
export async function countOnSubject(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

/** True for the API errors that mean "no message with that sequence". */
export function isNoMessage(error: unknown): boolean {
  return error instanceof JetStreamApiError && (error.code === NO_MESSAGE_FOUND || error.code === STREAM_STORE_EOF);
}

/** A stream of records about work-queue messages: one per message subject, read by direct get, kept `maxAgeMs`. */
function recordStream(name: string, subjects: string, maxAgeMs: number, dedupWindowMs: number): Partial<StreamConfig> & { name: string } {
  return {
    name,
    subjects: [subjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_msgs_per_subject: 1,
    max_age: nanos(maxAgeMs),
    duplicate_window: nanos(Math.min(dedupWindowMs, maxAgeMs)),
    allow_direct: true,
  };
}
