/**
 * Acked messages that a crashed nats-server brings back, removed again.
 *
 * In a work-queue stream an ack removes the message, so the bus counts and lists what a
 * stream holds (`pending`, `queued`). nats-server 2.9's file store records the removal of
 * a message from the middle of a block only in memory and an index file written later;
 * a server killed (`kill -9`, an OOM kill, a lost machine) before that comes back with
 * those messages stored again, while its consumers' state, kept apart, still has them
 * acked. Nothing ever delivers them: the delay stream's scheduler acks out of order (a
 * message nak'ed to wait stays below the ones acked after it), and its acked messages
 * came back as "waiting" jobs long done, in `/jobs` and `engram_extraction_jobs_queued`,
 * for good. (Newer servers write tombstones; 2.9 is what the bus must run on.)
 *
 * The sweep deletes, per durable consumer, the stored messages of its filter at or below
 * its ack floor: every one of them is acked, so none is work. Above the floor (a message
 * nak'ed to wait keeps it down: a job deferred by the daily budget, for up to a day) it
 * deletes the messages recorded as finished (`bus-settled.ts`), whatever holds the floor.
 * A message at a time (`STREAM.MSG.DELETE`), never a purge: a purge also clears the
 * consumer's pending acks, which would strand the messages the scheduler holds nak'ed and
 * the jobs being run.
 */
import type { ConsumerInfo, JetStreamManager, StoredMsg, StreamState } from '@nats-io/jetstream';
import type { NatsContext } from './connection.js';
import { Pause, recover, type ConnectionGate } from './bus-loop.js';
import type { SettledRecords } from './bus-settled.js';
import { isNoMessage } from './bus-streams.js';
import { subjectMatches } from './bus-subjects.js';

/** What one pass over a stream did. */
export interface SweepPass {
  deleted: number;
  /**
   * Every consumer's ack floor has reached what it had delivered when the sweep began
   * (`targets`): nothing acked out of order can still wait above a floor to come back.
   */
  floorsReached: boolean;
}

export interface SweepPassOptions {
  /** Per consumer, its delivered sequence at the occasion's first pass (filled in by that pass). */
  targets?: Map<string, number>;
  /** Given: messages above the floors are read too, and those recorded as finished deleted. */
  settled?: SettledRecords;
}

/**
 * Deletes the acked messages `stream` still holds. A message acked out of order (the
 * scheduler acks a due message while an earlier one waits, nak'ed) sits above its
 * consumer's ack floor, where only its record tells it from one still being worked on:
 * with `settled`, those recorded are deleted at once. One acked without a record (by an
 * Engram from before records, or a record that failed) can only be deleted once the floor
 * has passed it. So each consumer's delivered sequence at the first pass is kept in
 * `targets`, and the pass has `floorsReached` once every floor reached it.
 */
export async function deleteAckedMessages(jsm: JetStreamManager, stream: string, options: SweepPassOptions = {}): Promise<SweepPass> {
  const { targets = new Map<string, number>(), settled } = options;
  const consumers: ConsumerInfo[] = [];
  for await (const consumer of jsm.consumers.list(stream)) consumers.push(consumer);
  // Read after the consumers: the last sequence then includes everything they delivered.
  const { state } = await jsm.streams.info(stream, { deleted_details: true });
  let floorsReached = true;
  const rules = consumers.flatMap((consumer) => {
    const floor = consumer.ack_floor.stream_seq;
    const target = targets.get(consumer.name) ?? consumer.delivered.stream_seq;
    targets.set(consumer.name, target);
    if (floor < target) floorsReached = false;
    const filter = consumer.config.filter_subject;
    // A server that lost the stream's tail as well hands its sequences out again: a
    // message at or below the floor may then be new. Leave the floor's side alone then
    // (a record names its message's id, so it cannot be mistaken so).
    const byFloor = state.last_seq >= consumer.delivered.stream_seq;
    return filter ? [{ filter, floor: byFloor ? floor : 0 }] : [];
  });
  if (rules.length === 0) return { deleted: 0, floorsReached };
  let deleted = 0;
  // With records, up to what the stream held when the pass began: messages a consumer
  // forgot it delivered (its state is written apart, and may be older) included. Without,
  // only up to the highest floor (a pass repeated for as long as a deferred job holds one).
  const last = settled ? state.last_seq : Math.max(0, ...rules.map((rule) => rule.floor));
  for await (const stored of storedMessages(jsm, stream, state, last)) {
    const rule = rules.find(({ filter }) => subjectMatches(filter, stored.subject));
    if (!rule) continue;
    // At or below the floor every message is acked; above it only a record tells.
    const acked = stored.seq <= rule.floor || (settled !== undefined && (await settled.has(stream, stored)));
    if (acked && (await jsm.streams.deleteMessage(stream, stored.seq, false).catch(ignoreGone))) deleted++;
  }
  return { deleted, floorsReached };
}

/**
 * The messages `stream` held at `state`, up to `last`, read a sequence at a time. Not by
 * `next_by_subj`: after a `kill -9`, nats-server 2.9 answers it "no message" for a message
 * stored in a block it recovered (seen: sequence 11 of 15 stood readable, and deletable, by
 * its own sequence while `next_by_subj` from 11 found nothing), which left acked jobs
 * listed as waiting. The deleted sequences come with `state`, so only stored ones are read.
 */
async function* storedMessages(jsm: JetStreamManager, stream: string, state: StreamState, last: number): AsyncGenerator<StoredMsg> {
  if (state.messages === 0) return;
  const deleted = new Set(state.deleted ?? []);
  for (let seq = Math.max(1, state.first_seq); seq <= Math.min(last, state.last_seq); seq++) {
    if (deleted.has(seq)) continue;
    const stored = await jsm.streams.getMessage(stream, { seq }).catch((error: unknown) => {
      if (isNoMessage(error)) return null;
      throw error;
    });
    if (stored) yield stored;
  }
}

/** Removed meanwhile by someone else (another replica's sweep): as good as deleted here. */
function ignoreGone(error: unknown): false {
  if (isNoMessage(error)) return false;
  throw error;
}

/**
 * The first wait before sweeping again for messages acked above a floor without a record,
 * doubling to the most. Each pass is a few requests, repeated until the floors pass what
 * they had delivered: for a day when a deferred job holds one.
 */
const SETTLE_FIRST_MS = 250;
const SETTLE_MAX_WAIT_MS = 30_000;

export interface SweepContext {
  nats: NatsContext;
  gate: ConnectionGate;
  /** The bus's work-queue streams. */
  streams: readonly string[];
  settled: SettledRecords;
  onError: (error: unknown) => void;
}

/**
 * Runs the sweep over the bus's streams when the bus opens (a crash may have happened
 * while no Engram was connected) and after every reconnection. An occasion's first pass
 * reads every stored message and deletes those recorded as finished: each record is
 * written before its ack, so that one pass finds all a killed server brought back. Then
 * it goes round, with backoff, until every ack floor has passed what its consumer had
 * delivered, for what was acked without a record; it never gives up while one has not.
 * A failed pass is retried with backoff. Safe on every replica at once.
 */
export class AckedSweep {
  readonly #context: SweepContext;
  readonly #pause = new Pause();
  readonly #unsubscribe: () => void;
  #running: Promise<void> | undefined;
  /** An occasion (the open, a reconnection) the running loop has not started over for. */
  #again = false;
  #closed = false;

  constructor(context: SweepContext) {
    this.#context = context;
    this.#unsubscribe = context.gate.onReconnect(() => this.run());
  }

  /** Starts a sweep, or has the running one start over (another crash may lie behind this). */
  run(): void {
    if (this.#closed) return;
    this.#again = true;
    if (this.#running) {
      this.#pause.wake();
      return;
    }
    this.#running = this.#loop().finally(() => (this.#running = undefined));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    this.#pause.wake();
    await this.#running;
  }

  async #loop(): Promise<void> {
    const { nats, gate, streams, settled, onError } = this.#context;
    let failures = 0;
    // Per stream, what its consumers had delivered when this occasion's sweep began.
    let targets = new Map<string, Map<string, number>>();
    let byRecord = true;
    let wait = SETTLE_FIRST_MS;
    while (!this.#closed) {
      if (this.#again) {
        this.#again = false;
        targets = new Map(streams.map((stream) => [stream, new Map<string, number>()]));
        byRecord = true;
        wait = SETTLE_FIRST_MS;
      }
      try {
        let floorsReached = true;
        for (const stream of streams) {
          const pass = await deleteAckedMessages(nats.jsm, stream, { targets: targets.get(stream), ...(byRecord ? { settled } : {}) });
          floorsReached = pass.floorsReached && floorsReached;
        }
        failures = 0;
        // Another reconnection meanwhile: another crash may lie behind it, start over.
        if (this.#again) continue;
        byRecord = false;
        if (floorsReached) return;
        await this.#pause.sleep(wait);
        wait = Math.min(wait * 2, SETTLE_MAX_WAIT_MS);
      } catch (error) {
        if (this.#closed) return;
        onError(new Error('NATS event bus: removing acked messages a server restart brought back failed', { cause: error }));
        await recover(this.#pause, gate, ++failures, error);
      }
    }
  }
}
