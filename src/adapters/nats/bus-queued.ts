/**
 * `EventBus.queued` on NATS: what the two work-queue streams hold for one port subject.
 * A work-queue stream keeps exactly the unsettled messages, so the delay stream's are
 * `waiting` (until their `notBefore` header) and the work stream's are `ready` or, up to
 * the durable consumer's last delivered sequence, `delivered` (consumers deliver in
 * stream order, and an acked message is gone). JetStream counts deliveries per consumer,
 * not per stored message: what the bus knows of a message's failures is its failure
 * record (`bus-failures.ts`). A delivered message whose last delivery failed and whose
 * redelivery is still ahead is `retrying`, with that attempt and its reason; one already
 * redelivered shows the reason (`lastError`) of the delivery before. `attempts` is left
 * out where no delivery failed.
 *
 * Read with `STREAM.MSG.GET` and `next_by_subj` (2.9 has it; the work streams are not
 * created with `allow_direct`), one request per message: this is a view for people,
 * bounded by the caller's limit.
 */
import { JetStreamApiError, type JetStreamManager, type MsgRequest, type StoredMsg } from '@nats-io/jetstream';
import type { QueuedMessage } from '../../ports/index.js';
import type { Failure, FailureRecords } from './bus-failures.js';
import type { NatsContext } from './connection.js';
import type { BusPayloads } from './bus-payloads.js';
import { isNoMessage } from './bus-streams.js';
import { BUS_HEADERS, decodeTime, type BusNames } from './bus-subjects.js';

const CONSUMER_NOT_FOUND = 10014;

export interface QueuedContext {
  nats: NatsContext;
  names: BusNames;
  payloads: BusPayloads;
  failures: FailureRecords;
  now: () => number;
  onError: (error: unknown) => void;
}

export async function listQueued(context: QueuedContext, subject: string, limit: number): Promise<QueuedMessage[]> {
  const { nats, names } = context;
  const [deliveredUpTo, ready, waiting, failures] = await Promise.all([
    lastDelivered(nats.jsm, names.stream, names.consumer(subject)),
    walk(nats.jsm, names.stream, names.work(subject), limit),
    walk(nats.jsm, names.delayStream, names.delayed(subject), limit),
    context.failures.ofSubject(subject),
  ]);
  const now = context.now();
  const listed = await Promise.all([
    ...ready.map((stored) =>
      toQueued(context, subject, stored, stored.seq <= deliveredUpTo ? deliveredState(failures.get(stored.seq), now) : { state: 'ready' }),
    ),
    ...waiting.map((stored) =>
      toQueued(context, subject, stored, { state: 'waiting', dueAt: decodeTime(stored.header?.get(BUS_HEADERS.notBefore)) }),
    ),
  ]);
  // Ids are sequences of two streams: order by publish time instead, as the port promises.
  return listed.sort((a, b) => a.publishedAt - b.publishedAt).slice(0, limit);
}

/** A delivered message's state, by its failure record: waiting for its redelivery, or delivered (again). */
function deliveredState(failure: Failure | undefined, now: number): Pick<QueuedMessage, 'state' | 'dueAt' | 'attempts' | 'lastError'> {
  if (!failure) return { state: 'delivered' };
  const lastError = failure.reason === undefined ? {} : { lastError: failure.reason };
  return failure.dueAt > now ? { state: 'retrying', dueAt: failure.dueAt, attempts: failure.attempt, ...lastError } : { state: 'delivered', ...lastError };
}

/** The last stream sequence the subject's durable consumer delivered (0 when none exists yet). */
async function lastDelivered(jsm: JetStreamManager, stream: string, consumer: string): Promise<number> {
  try {
    return (await jsm.consumers.info(stream, consumer)).delivered.stream_seq;
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND) return 0;
    throw error;
  }
}

async function walk(jsm: JetStreamManager, stream: string, filter: string, limit: number): Promise<StoredMsg[]> {
  const found: StoredMsg[] = [];
  let seq = 1;
  while (found.length < limit) {
    let stored: StoredMsg | null;
    try {
      // The client types `next_by_subj` for direct gets only; the server's MSG.GET takes it too.
      stored = await jsm.streams.getMessage(stream, { seq, next_by_subj: filter } as unknown as MsgRequest);
    } catch (error) {
      if (isNoMessage(error)) break;
      throw error;
    }
    if (!stored) break;
    found.push(stored);
    seq = stored.seq + 1;
  }
  return found;
}

async function toQueued(
  context: QueuedContext,
  subject: string,
  stored: StoredMsg,
  state: Pick<QueuedMessage, 'state' | 'dueAt' | 'attempts' | 'lastError'>,
): Promise<QueuedMessage> {
  return {
    id: String(stored.seq),
    subject,
    payload: await context.payloads.listed(stored.header, stored.data, context.onError),
    publishedAt: decodeTime(stored.header?.get(BUS_HEADERS.publishedAt)) ?? stored.time.getTime(),
    ...state,
  };
}
