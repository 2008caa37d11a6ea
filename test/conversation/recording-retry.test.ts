/**
 * The retry queue of turns whose recording failed, on real timers: the writes are plain
 * functions standing for the store's, failing until the test lets them land.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RecordingRetry, type RecordingObserver, type RecordingWrite, type TurnOf } from '../../src/conversation/recording-retry.js';
import { eventually } from '../support/engram.js';

const quiet = { info() {}, warn() {}, error() {} };

/** A store that refuses every write while `down`, and keeps what it took in order. */
function store() {
  const s = {
    down: true,
    landed: [] as string[],
    attempts: new Map<string, number>(),
    write(name: string): RecordingWrite {
      return {
        name,
        run: async () => {
          s.attempts.set(name, (s.attempts.get(name) ?? 0) + 1);
          if (s.down) throw new Error('database or disk is full');
          s.landed.push(name);
        },
      };
    },
  };
  return s;
}

/** A turn whose stages are all known at once. */
interface TurnRecording extends TurnOf {
  stages: RecordingWrite[][];
}

function turn(conversationId: string, stages: RecordingWrite[][], bytes = 10): TurnRecording {
  return { agentId: 'agt_1', conversationId, stages, bytes: () => bytes };
}

/** Writes the turn's stages in order through `begin`, as the machine's states do. */
async function record(queue: RecordingRetry, recording: TurnRecording): Promise<void> {
  const recorder = queue.begin(recording);
  for (const stage of recording.stages) await recorder.write(stage);
}

function counts() {
  const c = { pending: 0, deferred: 0, recorded: 0, failed: 0, lost: {} as Record<string, number> };
  const observer: RecordingObserver = {
    recordingsPending: (n) => void (c.pending = n),
    recordingDeferred: () => void c.deferred++,
    recordingRetried: (outcome) => void c[outcome]++,
    recordingsLost: (reason, n) => void (c.lost[reason] = (c.lost[reason] ?? 0) + n),
  };
  return { c, observer };
}

test('a failed turn is kept, readiness fails, and it lands once the store takes writes; later stages wait for earlier ones', async () => {
  const s = store();
  const { c, observer } = counts();
  const queue = new RecordingRetry({ log: quiet, observer, backoffMs: () => 20 });
  await record(queue, turn('c1', [[s.write('job')], [s.write('state'), s.write('session')]]));
  assert.is(queue.pending, 1);
  assert.is(c.deferred, 1);
  assert.is(c.pending, 1);
  assert.throws(() => queue.check(), /1 answered turn not yet recorded \(retrying\): database or disk is full/);
  assert.is(s.attempts.get('state'), undefined, 'the state is not written before the job that it supersedes');
  await eventually(async () => (c.failed >= 2 ? true : undefined), 5_000, 'retries while the store is down');
  s.down = false;
  await eventually(async () => (queue.pending === 0 ? true : undefined), 5_000, 'the turn recorded');
  assert.equal(s.landed, ['job', 'state', 'session']);
  assert.is(c.pending, 0);
  assert.is(c.recorded, 1);
  queue.check();
  await queue.close();
});

test('a turn recorded stage by stage: a stage after a refused one is queued behind it unrun, and they land in order', async () => {
  const s = store();
  const { c, observer } = counts();
  const queue = new RecordingRetry({ log: quiet, observer, backoffMs: () => 20 });
  const recorder = queue.begin({ agentId: 'agt_1', conversationId: 'c1', bytes: () => 10 });
  assert.is(await recorder.write([s.write('job')]), 'kept');
  assert.is(await recorder.write([s.write('state'), s.write('session')]), 'kept');
  assert.is(s.attempts.get('state'), undefined, 'the state is not written before the job that it supersedes');
  assert.is(queue.pending, 1, 'one turn waits, not one per stage');
  assert.is(c.deferred, 1);
  s.down = false;
  await eventually(async () => (queue.pending === 0 ? true : undefined), 5_000, 'the turn recorded');
  assert.equal(s.landed, ['job', 'state', 'session']);
  assert.is(c.recorded, 1);

  const next = queue.begin({ agentId: 'agt_1', conversationId: 'c2', bytes: () => 10 });
  assert.is(await next.write([s.write('job 2')]), 'written');
  assert.is(await next.write([s.write('state 2')]), 'written');
  assert.equal(s.landed.slice(3), ['job 2', 'state 2']);
  await queue.close();
});

test('a turn whose first stage was lost (the queue stopping) loses its later stages too, unrun', async () => {
  const s = store();
  const { c, observer } = counts();
  const queue = new RecordingRetry({ log: quiet, observer, backoffMs: () => 20 });
  await queue.close();
  const recorder = queue.begin({ agentId: 'agt_1', conversationId: 'c1', bytes: () => 10 });
  assert.is(await recorder.write([s.write('job')]), 'lost');
  s.down = false;
  assert.is(await recorder.write([s.write('state')]), 'lost');
  assert.equal(s.landed, [], 'no state written ahead of a job that was never published');
  assert.equal(c.lost, { shutdown: 1 });
});

test('only the writes that failed run again; within one conversation the older turn lands first', async () => {
  const s = store();
  const queue = new RecordingRetry({ log: quiet, backoffMs: () => 20 });
  const ok: RecordingWrite = { name: 'response', run: async () => void s.landed.push('response') };
  await record(queue, turn('c1', [[ok, s.write('state-1')]]));
  await record(queue, turn('c1', [[s.write('state-2')]]));
  await record(queue, turn('c2', [[s.write('other')]]));
  assert.is(queue.pending, 3);
  s.down = false;
  await eventually(async () => (queue.pending === 0 ? true : undefined), 5_000, 'all recorded');
  assert.equal(s.landed.filter((name) => name === 'response'), ['response'], 'a write that landed is not run again');
  assert.ok(s.landed.indexOf('state-1') < s.landed.indexOf('state-2'), `older turn first: ${s.landed}`);
  await queue.close();
});

test('a conversation whose older turn still fails holds its newer turns back', async () => {
  let firstLands = false;
  let firstTries = 0;
  const landed: string[] = [];
  const queue = new RecordingRetry({ log: quiet, backoffMs: () => 20 });
  const first: RecordingWrite = {
    name: 'state-1',
    run: async () => {
      firstTries++;
      if (!firstLands) throw new Error('still full');
      landed.push('state-1');
    },
  };
  let secondDown = true;
  const second: RecordingWrite = {
    name: 'state-2',
    run: async () => {
      if (secondDown) throw new Error('full');
      landed.push('state-2');
    },
  };
  await record(queue, turn('c1', [[first]]));
  await record(queue, turn('c1', [[second]]));
  secondDown = false;
  // Retry rounds run while the newer turn's write could land: it must wait for the older one.
  await eventually(async () => (firstTries >= 4 ? true : undefined), 5_000, 'retry rounds');
  assert.equal(landed, [], 'the newer turn never overtakes the older one');
  assert.is(queue.pending, 2);
  firstLands = true;
  await eventually(async () => (queue.pending === 0 ? true : undefined), 5_000, 'both recorded');
  assert.equal(landed, ['state-1', 'state-2']);
  await queue.close();
});

test('past maxTurns or maxBytes the oldest turns are dropped and counted lost', async () => {
  const s = store();
  const { c, observer } = counts();
  const queue = new RecordingRetry({ log: quiet, observer, maxTurns: 2, maxBytes: 100, backoffMs: () => 60_000 });
  await record(queue, turn('a', [[s.write('a')]]));
  await record(queue, turn('b', [[s.write('b')]]));
  await record(queue, turn('c', [[s.write('c')]]));
  assert.is(queue.pending, 2);
  assert.equal(c.lost, { overflow: 1 });
  await record(queue, turn('big', [[s.write('big')]], 95));
  assert.is(queue.pending, 1, 'bytes bound: both older turns dropped to make room');
  assert.equal(c.lost, { overflow: 3 });
  await record(queue, turn('huge', [[s.write('huge')]], 101));
  assert.is(queue.pending, 1, 'a turn larger than the bound alone is lost, the others kept');
  assert.equal(c.lost, { overflow: 4 });
  s.down = false;
  await queue.close();
  assert.equal(s.landed, ['big'], 'the last try on stop records what was kept');
  assert.is(c.pending, 0);
});

test('backoff: rounds come further apart while the store stays down, and a write that lands wakes the queue at once', async () => {
  const s = store();
  const at: number[] = [];
  const queue = new RecordingRetry({ log: quiet, backoffMs: (failures) => (failures >= 4 ? 60_000 : 40 * failures) });
  const write: RecordingWrite = {
    name: 'state',
    run: async () => {
      at.push(Date.now());
      if (s.down) throw new Error('full');
      s.landed.push('state');
    },
  };
  await record(queue, turn('c1', [[write]]));
  await eventually(async () => (at.length >= 4 ? true : undefined), 5_000, 'three failed retry rounds');
  const gaps = at.slice(1).map((time, i) => time - at[i]);
  assert.ok(gaps[0] >= 35 && gaps[1] >= 75 && gaps[2] >= 115, `gaps grow with the failures: ${gaps}`);
  s.down = false;
  // The next round is a minute away; a new turn that records fine shows the store is back.
  await record(queue, turn('c2', [[s.write('fresh')]]));
  await eventually(async () => (queue.pending === 0 ? true : undefined), 2_000, 'retried without waiting out the backoff');
  assert.equal(s.landed, ['fresh', 'state']);
  await queue.close();
});

test('close: one last try, what still fails is lost as shutdown; turns after close get one attempt', async () => {
  const s = store();
  const { c, observer } = counts();
  const queue = new RecordingRetry({ log: quiet, observer, backoffMs: () => 60_000, flushMs: 1_000 });
  await record(queue, turn('c1', [[s.write('one')]]));
  await record(queue, turn('c2', [[s.write('two')]]));
  const started = Date.now();
  await queue.close();
  assert.ok(Date.now() - started < 1_500, 'bounded by flushMs');
  assert.is(s.attempts.get('one'), 2, 'tried once more on stop');
  assert.is(s.attempts.get('two'), 2, 'every turn tried, whatever failed before it');
  assert.equal(c.lost, { shutdown: 2 });
  assert.is(queue.pending, 0);
  await record(queue, turn('c3', [[s.write('late')]]));
  assert.equal(c.lost, { shutdown: 3 });
  assert.is(queue.pending, 0);
});

test('close waits for a stalled write no longer than flushMs', async () => {
  const { c, observer } = counts();
  const queue = new RecordingRetry({ log: quiet, observer, backoffMs: () => 60_000, flushMs: 200 });
  let stall = false;
  await record(queue, turn('c1', [[{ name: 'state', run: () => (stall ? new Promise(() => {}) : Promise.reject(new Error('timeout'))) }]]));
  stall = true;
  const started = Date.now();
  await queue.close();
  const took = Date.now() - started;
  assert.ok(took >= 150 && took < 1_000, `took ${took} ms`);
  assert.equal(c.lost, { shutdown: 1 });
});

test.run();
