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
 * its ack floor: every one of them is acked, so none is work. A message at a time
 * (`STREAM.MSG.DELETE`), never a purge: a purge also clears the consumer's pending acks,
 * which would strand the messages the scheduler holds nak'ed and the jobs being run.
 */
import type { ConsumerInfo, JetStreamManager, MsgRequest, StoredMsg } from '@nats-io/jetstream';
import type { NatsContext } from './connection.js';
import { Pause, recover, type ConnectionGate } from './bus-loop.js';
import { isNoMessage } from './bus-streams.js';

/** What one pass over a stream did. */
export interface SweepPass {
  deleted: number;
  /**
   * Every consumer's ack floor has reached what it had delivered when the sweep began
   * (`targets`): nothing acked out of order can still wait above a floor to come back.
   */
  settled: boolean;
}

/**
 * Deletes the acked messages `stream` still holds. A message acked out of order (the
 * scheduler acks a due message while an earlier one waits, nak'ed) sits above its
 * consumer's ack floor, where no one can tell it from one still being worked on: it can
 * only be deleted once the floor has passed it. So each consumer's delivered sequence at
 * the first pass is kept in `targets`, and the pass is `settled` once every floor reached it.
 */
export async function deleteAckedMessages(jsm: JetStreamManager, stream: string, targets: Map<string, number> = new Map()): Promise<SweepPass> {
  const consumers: ConsumerInfo[] = [];
  for await (const consumer of jsm.consumers.list(stream)) consumers.push(consumer);
  // Read after the consumers: the last sequence then includes everything they delivered.
  const { state } = await jsm.streams.info(stream);
  let deleted = 0;
  let settled = true;
  for (const consumer of consumers) {
    const floor = consumer.ack_floor.stream_seq;
    const filter = consumer.config.filter_subject;
    const target = targets.get(consumer.name) ?? consumer.delivered.stream_seq;
    targets.set(consumer.name, target);
    if (floor < target) settled = false;
    if (!filter || floor < state.first_seq) continue;
    // A server that lost the stream's tail as well hands its sequences out again: a
    // message at or below the floor may then be new. Leave such a stream alone.
    if (state.last_seq < consumer.delivered.stream_seq) continue;
    for (let seq = state.first_seq; seq <= floor; ) {
      const stored = await nextOnSubject(jsm, stream, filter, seq);
      if (!stored || stored.seq > floor) break;
      if (await jsm.streams.deleteMessage(stream, stored.seq, false).catch(ignoreGone)) deleted++;
      seq = stored.seq + 1;
    }
  }
  return { deleted, settled };
}

async function nextOnSubject(jsm: JetStreamManager, stream: string, filter: string, seq: number): Promise<StoredMsg | null> {
  try {
    // The client types `next_by_subj` for direct gets only; the server's MSG.GET takes it too.
    return await jsm.streams.getMessage(stream, { seq, next_by_subj: filter } as unknown as MsgRequest);
  } catch (error) {
    if (isNoMessage(error)) return null;
    throw error;
  }
}

/** Removed meanwhile by someone else (another replica's sweep): as good as deleted here. */
function ignoreGone(error: unknown): false {
  if (isNoMessage(error)) return false;
  throw error;
}

/**
 * The first wait before sweeping again for messages acked above a floor, doubling to the
 * most. Kept short: a pass is a few requests, and a longer wait leaves done jobs counted as
 * waiting (in `/jobs`, in the queue gauge) that long after the floors passed them.
 */
const SETTLE_FIRST_MS = 250;
const SETTLE_MAX_WAIT_MS = 4_000;
/** How long after a reconnection the sweep keeps going round for them: longer than any job runs. */
const SETTLE_WITHIN_MS = 30 * 60 * 1000;

export interface SweepContext {
  nats: NatsContext;
  gate: ConnectionGate;
  /** The bus's work-queue streams. */
  streams: readonly string[];
  onError: (error: unknown) => void;
}

/**
 * Runs the sweep over the bus's streams when the bus opens (a crash may have happened
 * while no Engram was connected) and after every reconnection, retrying with backoff
 * until it succeeds once for that occasion. Safe on every replica at once.
 */
export class AckedSweep {
  readonly #context: SweepContext;
  readonly #pause = new Pause();
  readonly #unsubscribe: () => void;
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(context: SweepContext) {
    this.#context = context;
    this.#unsubscribe = context.gate.onReconnect(() => this.run());
  }

  /** Starts a sweep, or asks the running one to go round once more. */
  run(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#loop().finally(() => (this.#running = undefined));
  }

  /** Resolves once the sweep running now, if any, has finished or given up. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    this.#pause.wake();
    await this.#running;
  }

  async #loop(): Promise<void> {
    const { nats, gate, streams, onError } = this.#context;
    let failures = 0;
    // Per stream, what its consumers had delivered when this occasion's sweep began.
    let targets = new Map(streams.map((stream) => [stream, new Map<string, number>()]));
    let began = Date.now();
    let wait = SETTLE_FIRST_MS;
    while (!this.#closed) {
      this.#again = false;
      try {
        let settled = true;
        for (const stream of streams) settled = (await deleteAckedMessages(nats.jsm, stream, targets.get(stream))).settled && settled;
        if (this.#again) {
          // Another reconnection: another crash may lie behind it, sweep for what it brought back.
          targets = new Map(streams.map((stream) => [stream, new Map<string, number>()]));
          began = Date.now();
          wait = SETTLE_FIRST_MS;
          continue;
        }
        // Messages acked out of order lie above a floor still: again once the floors move on.
        if (settled || Date.now() - began > SETTLE_WITHIN_MS) return;
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
