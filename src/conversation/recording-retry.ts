/**
 * Turns whose recording the store did not take (state, extraction job, Responses record),
 * kept in this process's memory and written again, with backoff, until it does. The
 * client already has the whole answer with a 200: failing the response would only make
 * it resend a turn the upstream answered. While anything waits, `/readyz` says not ready
 * (`check`), so a load balancer stops sending turns that cannot be recorded.
 *
 * Bounded (`maxTurns`, `maxBytes`): past either, the oldest turn is dropped, logged and
 * counted as lost. A crash loses what waits; a graceful stop tries each once more.
 * Writes must be idempotent and must not undo what a newer turn wrote (`steps/settlement.ts`):
 * a retry may land after later turns of the conversation. Within one, retries go oldest first.
 */
import type { Log } from '../log.js';

/**
 * One write of a turn's recording. Running it again after it landed changes nothing, and
 * running it after a newer turn's writes undoes none of them.
 */
export interface RecordingWrite {
  /** What it writes, for logs: `response`, `job`, `state`, `session`. */
  readonly name: string;
  /** `retry`: a later attempt, run from the retry queue (not with the request). */
  run(retry: boolean): Promise<unknown>;
}

/** Whose turn it is, and what keeping it in memory costs. */
export interface TurnOf {
  agentId: string;
  conversationId: string;
  /** What keeping it costs in memory, in bytes (its job, state and response), asked only when it is kept. */
  bytes(): number;
}

/**
 * One turn's recording, written stage by stage as the conversation machine reaches each
 * step (publishing, then recording): the stages keep their order whatever fails.
 */
export interface TurnRecorder {
  /**
   * Runs `stage` now, unless an earlier stage of this turn is still waiting in the queue:
   * then it is queued behind it, unrun. `kept`: it (or what it waits behind) failed and is
   * retried; `lost`: the turn could not be kept (see `RecordingLoss`). Never rejects.
   */
  write(stage: RecordingWrite[]): Promise<'written' | 'kept' | 'lost'>;
}

/** Why a turn was never recorded. */
export type RecordingLoss = 'overflow' | 'shutdown';

/** Told what the queue does: the app's metrics. */
export interface RecordingObserver {
  /** Turns waiting now. */
  recordingsPending(count: number): void;
  /** A turn's recording failed with its request and was kept to be retried. */
  recordingDeferred(): void;
  /** One retry of one turn: all its writes landed (`recorded`) or one failed again. */
  recordingRetried(outcome: 'recorded' | 'failed'): void;
  recordingsLost(reason: RecordingLoss, count: number): void;
}

export interface RecordingRetryOptions {
  log: Log;
  observer?: RecordingObserver;
  /** Turns held at most (default `MAX_TURNS`). */
  maxTurns?: number;
  /** Bytes held at most (default `MAX_BYTES`). */
  maxBytes?: number;
  /** Wait before the next retry round after `failures` rounds in a row wrote nothing (default: 250 ms doubling to 5 s, jittered). */
  backoffMs?: (failures: number) => number;
  /** How long a graceful stop spends on its last try (default 5 s). */
  flushMs?: number;
}

/** Turns held at most by default: a minute or more of a busy replica's final answers. */
export const MAX_TURNS = 1_000;
/** Bytes held at most by default: two whole requests at the default body limit. */
export const MAX_BYTES = 64 * 1024 * 1024;
const FLUSH_MS = 5_000;
/** Turns named in one log line about losses; the rest are counted. */
const NAMED_IN_LOG = 20;

function defaultBackoff(failures: number): number {
  const base = Math.min(250 * 2 ** Math.max(0, failures - 1), 5_000);
  return base / 2 + Math.random() * (base / 2);
}

interface Waiting {
  recording: TurnOf;
  /** The stages left, in place (`runStages`): the first holds only the writes that failed. */
  remaining: RecordingWrite[][];
  bytes: number;
  attempts: number;
  error: unknown;
  /** Set once it leaves the queue: every write landed, or it was given up. */
  fate?: 'recorded' | 'lost';
}

/**
 * Runs `stages` in order, in place: each stage leaves the array once all its writes
 * landed; a failed stage is left holding only its failed writes. Returns the first
 * error, or undefined when every write landed. A stage pushed while it runs (a turn's
 * next stage, `TurnRecorder`) is run in turn.
 */
async function runStages(stages: RecordingWrite[][], retry: boolean): Promise<{ error: unknown } | undefined> {
  while (stages.length > 0) {
    const stage = stages[0];
    const results = await Promise.allSettled(stage.map((write) => write.run(retry)));
    const failed = stage.filter((_, at) => results[at].status === 'rejected');
    if (failed.length > 0) {
      stages[0] = failed;
      return { error: (results.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason };
    }
    stages.shift();
  }
  return undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class RecordingRetry {
  readonly #log: Log;
  readonly #observer: RecordingObserver | undefined;
  readonly #maxTurns: number;
  readonly #maxBytes: number;
  readonly #backoffMs: (failures: number) => number;
  readonly #flushMs: number;
  /** Oldest first. */
  #waiting: Waiting[] = [];
  #bytes = 0;
  /** Rounds in a row that wrote nothing. */
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;
  #dueAt = 0;
  #round: Promise<void> | undefined;
  #closed = false;
  #lastError: unknown;

  constructor(options: RecordingRetryOptions) {
    this.#log = options.log;
    this.#observer = options.observer;
    this.#maxTurns = Math.max(1, options.maxTurns ?? MAX_TURNS);
    this.#maxBytes = Math.max(1, options.maxBytes ?? MAX_BYTES);
    this.#backoffMs = options.backoffMs ?? defaultBackoff;
    this.#flushMs = options.flushMs ?? FLUSH_MS;
  }

  get pending(): number {
    return this.#waiting.length;
  }

  /**
   * Starts recording a turn whose stages come one at a time (`TurnRecorder`): each is
   * written now; whatever does not land is kept and retried, and the stages after it wait
   * behind it.
   */
  begin(turn: TurnOf): TurnRecorder {
    let waiting: Waiting | undefined;
    return {
      write: async (stage) => {
        if (waiting?.fate === 'lost') return 'lost';
        if (waiting && waiting.fate === undefined) {
          // Behind the stage that failed: runs once it lands, in the same retry.
          waiting.remaining.push(stage);
          return 'kept';
        }
        const remaining = [stage];
        const failed = await runStages(remaining, false);
        if (!failed) {
          this.#landed();
          return 'written';
        }
        waiting = this.#defer(turn, remaining, failed.error);
        return waiting?.fate === undefined ? 'kept' : 'lost';
      },
    };
  }

  /** Every write of a first attempt landed: the store takes writes again, so what waits is retried now rather than after the backoff. */
  #landed(): void {
    if (this.#waiting.length > 0 && this.#failures > 0) this.#schedule(0);
  }

  /** Keeps a turn whose first attempt failed, to be retried; returns its entry (`fate` lost when it could not be kept). */
  #defer(turn: TurnOf, remaining: RecordingWrite[][], error: unknown): Waiting {
    this.#lastError = error;
    const { agentId, conversationId } = turn;
    const writes = remaining.flat().map((write) => write.name);
    const entry: Waiting = { recording: turn, remaining, bytes: 0, attempts: 1, error };
    if (this.#closed) {
      this.#log.error({ agentId, conversationId, writes, err: error }, 'recording a turn failed while stopping: the turn is lost');
      this.#observer?.recordingsLost('shutdown', 1);
      entry.fate = 'lost';
      return entry;
    }
    this.#observer?.recordingDeferred();
    entry.bytes = turn.bytes();
    const kept = this.#keep(entry);
    this.#log.warn(
      { agentId, conversationId, writes, pending: this.#waiting.length, err: error },
      kept ? 'recording a turn failed: it is kept in memory and retried until the store takes it' : 'recording a turn failed',
    );
    this.#failures = Math.max(this.#failures, 1);
    this.#schedule(this.#backoffMs(this.#failures));
    return entry;
  }

  /**
   * Throws while turns wait to be recorded (the readiness check `recording`), saying how
   * many and the last error.
   */
  check(): void {
    const count = this.#waiting.length;
    if (count === 0) return;
    throw new Error(`${count} answered turn${count === 1 ? '' : 's'} not yet recorded (retrying): ${errorText(this.#lastError)}`);
  }

  /**
   * Stops retrying after one last try of every turn that waits, within `flushMs`; what
   * still fails is logged and counted as lost. Later turns get one attempt each.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#round;
    if (this.#waiting.length === 0) return;
    const deadline = Date.now() + this.#flushMs;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#flushMs)));
    await Promise.race([this.#retryRound(deadline), late]);
    clearTimeout(timer);
    // A write still running past the deadline may yet land: it is counted lost all the same.
    const lost = this.#waiting.splice(0);
    this.#bytes = 0;
    this.#observer?.recordingsPending(0);
    if (lost.length > 0) this.#lose(lost, 'shutdown', 'turns not yet recorded when Engram stopped: they are lost');
  }

  /** Keeps `entry` within the bounds, dropping the oldest first; false when it alone exceeds them. */
  #keep(entry: Waiting): boolean {
    if (entry.bytes > this.#maxBytes) {
      this.#lose([entry], 'overflow', 'a turn not recorded is larger than the retry queue holds: it is lost');
      return false;
    }
    const dropped: Waiting[] = [];
    while (this.#waiting.length >= this.#maxTurns || this.#bytes + entry.bytes > this.#maxBytes) {
      const oldest = this.#waiting.shift()!;
      this.#bytes -= oldest.bytes;
      dropped.push(oldest);
    }
    this.#waiting.push(entry);
    this.#bytes += entry.bytes;
    this.#observer?.recordingsPending(this.#waiting.length);
    if (dropped.length > 0) this.#lose(dropped, 'overflow', 'the retry queue of turns not recorded is full: the oldest are lost');
    return true;
  }

  #lose(lost: Waiting[], reason: RecordingLoss, message: string): void {
    for (const entry of lost) entry.fate = 'lost';
    this.#observer?.recordingsLost(reason, lost.length);
    this.#log.error(
      {
        lost: lost.length,
        turns: lost.slice(0, NAMED_IN_LOG).map(({ recording, attempts }) => ({ agentId: recording.agentId, conversationId: recording.conversationId, attempts })),
        err: lost.at(-1)?.error,
      },
      message,
    );
  }

  /** Plans the next round in `delayMs`, unless one is planned sooner (failing turns keep coming) or running. */
  #schedule(delayMs: number): void {
    if (this.#closed || this.#round) return;
    const dueAt = Date.now() + delayMs;
    if (this.#timer && this.#dueAt <= dueAt) return;
    clearTimeout(this.#timer);
    this.#dueAt = dueAt;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#round = this.#retryRound().finally(() => {
        this.#round = undefined;
        if (this.#waiting.length > 0) this.#schedule(this.#failures === 0 ? 0 : this.#backoffMs(this.#failures));
      });
    }, delayMs);
    // Nothing to wait for once the process is stopping for good: `close` makes the last try.
    this.#timer.unref();
  }

  /**
   * One pass over what waits, oldest first. A turn whose conversation had an older turn
   * fail in this pass waits for the next one (a conversation's turns land in order); two
   * failures in a row end the pass, as the store is then likely still away (each failure
   * may have cost a timeout). With a `deadline` (the last try), every turn is tried
   * whatever fails, until then.
   */
  async #retryRound(deadline?: number): Promise<void> {
    const blocked = new Set<string>();
    let inARow = 0;
    let wrote = false;
    for (const entry of [...this.#waiting]) {
      const key = `${entry.recording.agentId}\n${entry.recording.conversationId}`;
      if (blocked.has(key)) continue;
      if (deadline !== undefined && Date.now() >= deadline) break;
      entry.attempts++;
      const failed = await runStages(entry.remaining, true).catch((error: unknown) => ({ error }));
      // A stage queued behind the turn's last one since it landed waits for the next round.
      if (!failed && entry.remaining.length > 0) continue;
      if (!failed) {
        this.#remove(entry);
        this.#observer?.recordingRetried('recorded');
        wrote = true;
        inARow = 0;
        continue;
      }
      entry.error = failed.error;
      this.#lastError = failed.error;
      this.#observer?.recordingRetried('failed');
      blocked.add(key);
      if (++inARow >= 2 && deadline === undefined) break;
    }
    if (wrote) {
      if (this.#failures > 0 && this.#waiting.length === 0) this.#log.info({}, 'turns whose recording had failed are all recorded now');
      this.#failures = 0;
    } else if (this.#waiting.length > 0) {
      // Once per outage, then every tenth round: a full disk must not flood the log.
      if (this.#failures % 10 === 0) {
        this.#log.warn({ pending: this.#waiting.length, rounds: this.#failures + 1, err: this.#lastError }, 'recording turns still fails; retrying');
      }
      this.#failures++;
    }
  }

  #remove(entry: Waiting): void {
    const at = this.#waiting.indexOf(entry);
    if (at === -1) return;
    this.#waiting.splice(at, 1);
    entry.fate = 'recorded';
    this.#bytes -= entry.bytes;
    this.#observer?.recordingsPending(this.#waiting.length);
  }
}
