/**
 * The activity recorder: counts summed in the process reach the store on flush and on
 * close, and a store that is down (NATS stopped) loses none of them: they are written
 * once it is back.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { sqliteControlStores } from '../../src/adapters/sqlite/index.js';
import { connectNats } from '../../src/adapters/nats/connection.js';
import { openNatsControl } from '../../src/adapters/nats/control/index.js';
import { emptyCounts } from '../../src/domain/activity.js';
import { ActivityRecorder, dayOf } from '../../src/observability/activity.js';
import { startNatsServer } from '../support/nats-server.js';
import { eventually } from '../support/engram.js';

const NOW = Date.UTC(2026, 10, 23, 12);

test('counts are summed per agent and day, written on flush and on close', async () => {
  const db = openDatabase(':memory:');
  const { activity: store } = sqliteControlStores(db);
  let now = NOW;
  const errors: unknown[] = [];
  const recorder = new ActivityRecorder({ store, now: () => now, onError: (error) => errors.push(error), flushEveryMs: 60_000 });
  try {
    for (let i = 0; i < 5; i++) recorder.record('agt_a', { requests: 1, injected: 2 });
    recorder.record('agt_b', { requests: 1 });
    recorder.record('agt_a', { extractions: 1 });
    assert.equal(await store.read('agt_a', '2026-01-01'), [], 'nothing written before a flush');
    await recorder.flush();
    assert.equal(await store.read('agt_a', '2026-01-01'), [{ day: '2026-11-23', ...emptyCounts(), requests: 5, injected: 10, extractions: 1 }]);
    assert.equal(await store.read('agt_b', '2026-01-01'), [{ day: '2026-11-23', ...emptyCounts(), requests: 1 }]);
    // Past midnight the counts go to the next day; close writes what is left.
    now = NOW + 86_400_000;
    recorder.record('agt_a', { requests: 3 });
    await recorder.close();
    assert.equal((await store.read('agt_a', '2026-11-24')).map((row) => [row.day, row.requests]), [['2026-11-24', 3]]);
    assert.equal(errors, []);
  } finally {
    db.close();
  }
});

test("tokensToday: the agent's extraction and tagging tokens of the clock's day, written or not yet; a new day starts at 0", async () => {
  const db = openDatabase(':memory:');
  const { activity: store } = sqliteControlStores(db);
  let now = NOW;
  const recorder = new ActivityRecorder({ store, now: () => now, onError: () => undefined, flushEveryMs: 60_000 });
  try {
    recorder.record('agt_a', { extractionCalls: 1, extractionInputTokens: 900, extractionOutputTokens: 60, requests: 4 });
    assert.is(await recorder.tokensToday('agt_a'), 960, 'counted before any flush');
    await recorder.flush();
    recorder.record('agt_a', { taggingCalls: 1, taggingInputTokens: 30, taggingOutputTokens: 10 });
    recorder.record('agt_b', { extractionCalls: 1, extractionInputTokens: 5000 });
    assert.is(await recorder.tokensToday('agt_a'), 1000, 'written and unwritten together, requests not counted, another agent not');
    await store.add('agt_a', dayOf(NOW), { extractionInputTokens: 7 });
    assert.is(await recorder.tokensToday('agt_a'), 1007, "another replica's written counts too");
    now = NOW + 12 * 3_600_000;
    assert.is(await recorder.tokensToday('agt_a'), 0, 'past 00:00 UTC the day starts afresh');
  } finally {
    await recorder.close();
    db.close();
  }
});

test('with NATS down the counts are kept, and written once it is back', async () => {
  const server = await startNatsServer();
  const ctx = await connectNats({ url: server.url, timeoutMs: 1_000, name: 'engram activity test' });
  const stores = await openNatsControl(ctx, { prefix: 'activity' });
  const errors: string[] = [];
  const recorder = new ActivityRecorder({
    store: stores.activity,
    now: () => NOW,
    onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
    flushEveryMs: 60_000,
  });
  try {
    recorder.record('agt_a', { requests: 2, injected: 1 });
    await server.stop();
    recorder.record('agt_a', { requests: 1 });
    await recorder.flush();
    assert.ok(errors.length >= 1, 'the failed write was reported');
    await server.restart();
    // Once the connection is back (the client reconnects by itself), the next flush writes everything.
    await eventually(() => stores.activity.read('agt_none', dayOf(NOW)).then(() => true, () => undefined), 15_000, 'NATS back');
    await recorder.close();
    assert.equal(await stores.activity.read('agt_a', dayOf(NOW)), [{ day: dayOf(NOW), ...emptyCounts(), requests: 3, injected: 1 }]);
  } finally {
    await stores.close();
    await ctx.close();
    await server.cleanup();
  }
});

test.run();
