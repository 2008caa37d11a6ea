/**
 * The ActivityStore contract (counts per agent and day): every adapter runs this same
 * suite, written only against src/ports/activity.ts. Concurrent increments run on the
 * harness's second replica when it has one, so "atomic" means atomic across replicas,
 * not only within one process.
 */
import * as assert from 'uvu/assert';
import { EngramError } from '../../src/errors.js';
import { emptyCounts } from '../../src/domain/activity.js';
import type { ActivityStore, DailyCounts } from '../../src/ports/index.js';
import { harnessSuite, rejects } from './helpers.js';
import type { ControlHarness } from './control-harness.js';

const invalid = (error: unknown) => error instanceof EngramError && error.code === 'invalid_request';

/** A day as `read` returns it: every count present. */
const day = (date: string, counts: Partial<DailyCounts> = {}) => ({ day: date, ...emptyCounts(), ...counts });

/** One extraction call and one tagging call's spend, as the budget counts it. */
const SPEND: Partial<DailyCounts> = {
  extractionCalls: 1,
  extractionInputTokens: 1200,
  extractionOutputTokens: 80,
  taggingCalls: 1,
  taggingInputTokens: 300,
  taggingOutputTokens: 25,
};

export function activityContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`ActivityStore contract: ${name}`, open);
  const store = (context: { harness?: ControlHarness }): ActivityStore => harness(context).stores.activity;
  /** The harness's second replica, or the same store when it has none. */
  const second = async (context: { harness?: ControlHarness }): Promise<ActivityStore> =>
    (await harness(context).peer?.())?.activity ?? store(context);

  test('add then read: one day, every count', async (context) => {
    const s = store(context);
    await s.add('agt_a', '2024-03-05', { requests: 3, injected: 2, extractions: 1 });
    assert.equal(await s.read('agt_a', '2024-03-05'), [day('2024-03-05', { requests: 3, injected: 2, extractions: 1 })]);
    assert.equal(await s.read('agt_a', '2024-03-06'), [], 'nothing from the next day on');
    assert.equal(await s.read('agt_missing', '2000-01-01'), []);
  });

  test('read: several days oldest first (across a year and a month end); fromDay inclusive, earlier days excluded', async (context) => {
    const s = store(context);
    const written = ['2024-03-01', '2023-12-31', '2024-02-29', '2024-01-01', '2024-02-01', '2024-10-01', '2024-09-30'];
    for (const [i, date] of written.entries()) await s.add('agt_a', date, { requests: i + 1 });
    const all = (await s.read('agt_a', '2000-01-01')).map((d) => d.day);
    assert.equal(all, [...written].sort(), 'oldest first');
    assert.equal(all, ['2023-12-31', '2024-01-01', '2024-02-01', '2024-02-29', '2024-03-01', '2024-09-30', '2024-10-01']);
    assert.equal(await s.read('agt_a', '2024-02-29'), [
      day('2024-02-29', { requests: 3 }),
      day('2024-03-01', { requests: 1 }),
      day('2024-09-30', { requests: 7 }),
      day('2024-10-01', { requests: 6 }),
    ]);
    assert.equal((await s.read('agt_a', '2024-02-28')).map((d) => d.day), ['2024-02-29', '2024-03-01', '2024-09-30', '2024-10-01'], 'a day with nothing is no bound');
    assert.equal(await s.read('agt_a', '2025-01-01'), []);
  });

  test('absent counts count 0; an add of nothing records no day', async (context) => {
    const s = store(context);
    await s.add('agt_a', '2024-03-05', { injected: 4 });
    await s.add('agt_a', '2024-03-05', { extractions: 1, requests: undefined });
    assert.equal(await s.read('agt_a', '2024-03-01'), [day('2024-03-05', { injected: 4, extractions: 1 })]);
    await s.add('agt_a', '2024-03-06', {});
    await s.add('agt_a', '2024-03-07', { requests: 0, injected: 0, extractions: 0 });
    assert.equal((await s.read('agt_a', '2024-03-01')).map((d) => d.day), ['2024-03-05'], 'days with nothing are absent');
  });

  test("another agent's days are not returned, whatever their ids share", async (context) => {
    const s = store(context);
    const agents = ['agt_a', 'agt_ab', 'agt_a.b', 'agt_a.2024-03-05', 'agt', ''];
    for (const [i, agentId] of agents.entries()) await s.add(agentId, '2024-03-05', { requests: i + 1 });
    await s.add('agt_ab', '2024-03-06', { requests: 10 });
    for (const [i, agentId] of agents.entries()) {
      assert.equal(await s.read(agentId, '2024-01-01'), agentId === 'agt_ab' ? [day('2024-03-05', { requests: 2 }), day('2024-03-06', { requests: 10 })] : [day('2024-03-05', { requests: i + 1 })], JSON.stringify(agentId));
    }
  });

  test('increments sum, count by count', async (context) => {
    const s = store(context);
    await s.add('agt_a', '2024-03-05', { requests: 1, injected: 1 });
    await s.add('agt_a', '2024-03-05', { requests: 5, extractions: 2 });
    await s.add('agt_a', '2024-03-05', { requests: 100, injected: 7, extractions: 3 });
    await s.add('agt_a', '2024-03-06', { requests: 1 });
    assert.equal(await s.read('agt_a', '2024-03-05'), [day('2024-03-05', { requests: 106, injected: 8, extractions: 5 }), day('2024-03-06', { requests: 1 })]);
  });

  test('20 concurrent adds to one day, split across two replicas, all land', async (context) => {
    const writers = [store(context), await second(context)];
    const adds = Array.from({ length: 20 }, (_, i) => ({ requests: 1, injected: i % 3, extractions: i % 2 }));
    await Promise.all(adds.map((counts, i) => writers[i % 2].add('agt_a', '2024-03-05', counts)));
    const expected = day('2024-03-05', {
      requests: 20,
      injected: adds.reduce((sum, a) => sum + a.injected, 0),
      extractions: adds.reduce((sum, a) => sum + a.extractions, 0),
    });
    for (const w of writers) assert.equal(await w.read('agt_a', '2024-03-01'), [expected], 'exact totals, from either replica');
  });

  test('deleteAgent removes only that agent\'s days', async (context) => {
    const s = store(context);
    for (const agentId of ['agt_a', 'agt_ab', 'agt_a.b']) {
      await s.add(agentId, '2024-03-05', { requests: 1 });
      await s.add(agentId, '2024-03-06', { injected: 2 });
    }
    await s.deleteAgent('agt_a');
    assert.equal(await s.read('agt_a', '2000-01-01'), []);
    for (const agentId of ['agt_ab', 'agt_a.b']) {
      assert.equal(await s.read(agentId, '2000-01-01'), [day('2024-03-05', { requests: 1 }), day('2024-03-06', { injected: 2 })], agentId);
    }
    await s.deleteAgent('agt_a');
    await s.deleteAgent('agt_missing');
    await s.add('agt_a', '2024-03-05', { requests: 1 });
    assert.equal(await s.read('agt_a', '2000-01-01'), [day('2024-03-05', { requests: 1 })], 'counting starts again from zero');
  });

  test('prune removes the days before beforeDay for every agent, counts them, keeps beforeDay itself', async (context) => {
    const s = store(context);
    const days = ['2024-02-28', '2024-02-29', '2024-03-01', '2024-03-02'];
    for (const agentId of ['agt_a', 'agt_b']) for (const date of days) await s.add(agentId, date, { requests: 1 });
    await s.add('agt_c', '2023-12-31', { extractions: 1 });
    await s.add('agt_d', '2024-03-02', { extractions: 1 });

    assert.is(await s.prune('2024-03-01'), 5, 'two days of two agents and one of a third');
    for (const agentId of ['agt_a', 'agt_b']) {
      assert.equal(await s.read(agentId, '2000-01-01'), [day('2024-03-01', { requests: 1 }), day('2024-03-02', { requests: 1 })], agentId);
    }
    assert.equal(await s.read('agt_c', '2000-01-01'), []);
    assert.equal(await s.read('agt_d', '2000-01-01'), [day('2024-03-02', { extractions: 1 })]);
    assert.is(await s.prune('2024-03-01'), 0, 'nothing left to prune');
    await s.add('agt_a', '2024-03-01', { requests: 1 });
    assert.equal((await s.read('agt_a', '2024-03-01'))[0], day('2024-03-01', { requests: 2 }), 'a kept day still sums');
  });

  test('a negative or non-integer count rejects with invalid_request and changes nothing', async (context) => {
    const s = store(context);
    await s.add('agt_a', '2024-03-05', { requests: 2, injected: 1 });
    const before = await s.read('agt_a', '2000-01-01');
    const refused: Partial<DailyCounts>[] = [
      { requests: -1 },
      { requests: 1, injected: -3 },
      { extractions: 1.5 },
      { requests: 1, injected: 0.1 },
      { requests: Number.NaN },
      { requests: Number.POSITIVE_INFINITY },
      { requests: Number.MAX_SAFE_INTEGER + 2 },
      { requests: '3' as unknown as number },
      { requests: null as unknown as number },
    ];
    for (const counts of refused) {
      assert.ok(invalid(await rejects(() => s.add('agt_a', '2024-03-05', counts))), JSON.stringify(counts));
      assert.ok(invalid(await rejects(() => s.add('agt_a', '2024-03-06', counts))), `${JSON.stringify(counts)} on a new day`);
    }
    assert.equal(await s.read('agt_a', '2000-01-01'), before, 'nothing changed, no day created');
  });

  test('an invalid day (not YYYY-MM-DD) rejects with invalid_request, in add, read and prune, and changes nothing', async (context) => {
    const s = store(context);
    await s.add('agt_a', '2024-03-05', { requests: 1 });
    const refused = ['', '2024-3-05', '2024-03-5', '20240305', '2024/03/05', '2024-13-01', '2024-02-30', '2023-02-29', '2024-03-05T00:00:00Z', ' 2024-03-05', '2024-03-05 ', 'today', '>', '*'];
    for (const date of refused) {
      assert.ok(invalid(await rejects(() => s.add('agt_a', date, { requests: 1 }))), `add ${JSON.stringify(date)}`);
      assert.ok(invalid(await rejects(() => s.read('agt_a', date))), `read ${JSON.stringify(date)}`);
      assert.ok(invalid(await rejects(() => s.prune(date))), `prune ${JSON.stringify(date)}`);
    }
    assert.equal(await s.read('agt_a', '2000-01-01'), [day('2024-03-05', { requests: 1 })], 'nothing changed, nothing pruned');
  });

  test('a second replica sees the days and their deletion', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const s = h.stores.activity;
    const peer = (await h.peer()).activity;
    await s.add('agt_a', '2024-03-05', { requests: 1 });
    await peer.add('agt_a', '2024-03-06', { injected: 1 });
    assert.equal(await peer.read('agt_a', '2024-03-01'), [day('2024-03-05', { requests: 1 }), day('2024-03-06', { injected: 1 })]);
    assert.equal(await s.read('agt_a', '2024-03-01'), await peer.read('agt_a', '2024-03-01'));
    assert.is(await peer.prune('2024-03-06'), 1);
    await s.deleteAgent('agt_a');
    assert.equal(await peer.read('agt_a', '2024-03-01'), []);
  });

  test('upstream spend (calls, input and output tokens of extraction and tagging) sums per agent and day beside the other counts', async (context) => {
    const s = store(context);
    await s.add('agt_a', '2024-03-05', { requests: 2, ...SPEND });
    await s.add('agt_a', '2024-03-05', { extractionCalls: 1, extractionInputTokens: 1000, extractionOutputTokens: 20 });
    await s.add('agt_a', '2024-03-06', { taggingCalls: 2, taggingInputTokens: 7, taggingOutputTokens: 3 });
    await s.add('agt_b', '2024-03-05', SPEND);
    assert.equal(await s.read('agt_a', '2024-03-01'), [
      day('2024-03-05', { requests: 2, extractionCalls: 2, extractionInputTokens: 2200, extractionOutputTokens: 100, taggingCalls: 1, taggingInputTokens: 300, taggingOutputTokens: 25 }),
      day('2024-03-06', { taggingCalls: 2, taggingInputTokens: 7, taggingOutputTokens: 3 }),
    ]);
    assert.equal(await s.read('agt_b', '2024-03-01'), [day('2024-03-05', SPEND)]);
    await s.add('agt_c', '2024-03-05', { extractionOutputTokens: 1 });
    assert.equal(await s.read('agt_c', '2024-03-05'), [day('2024-03-05', { extractionOutputTokens: 1 })], 'a day with spend only is a day');
    assert.ok(invalid(await rejects(() => s.add('agt_a', '2024-03-05', { taggingInputTokens: -5 }))), 'a negative token count is refused');
    assert.ok(invalid(await rejects(() => s.add('agt_a', '2024-03-05', { extractionCalls: 0.5 }))), 'a fractional call count is refused');
  });

  test('concurrent spend from two replicas all lands', async (context) => {
    const writers = [store(context), await second(context)];
    await Promise.all(Array.from({ length: 12 }, (_, i) => writers[i % 2].add('agt_a', '2024-03-05', { extractionCalls: 1, extractionInputTokens: 100 + i, taggingOutputTokens: i })));
    const expected = day('2024-03-05', { extractionCalls: 12, extractionInputTokens: 1200 + 66, taggingOutputTokens: 66 });
    for (const w of writers) assert.equal(await w.read('agt_a', '2024-03-01'), [expected]);
  });

  test('data survives reopening', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    const s = h.stores.activity;
    await s.add('agt_a', '2024-03-05', { requests: 3, injected: 1 });
    await s.add('agt_a', '2024-03-06', { extractions: 2 });
    await s.add('agt_b', '2024-03-05', { requests: 1, ...SPEND });
    const reopened = (await h.reopen()).activity;
    assert.equal(await reopened.read('agt_a', '2024-03-01'), [day('2024-03-05', { requests: 3, injected: 1 }), day('2024-03-06', { extractions: 2 })]);
    assert.equal(await reopened.read('agt_b', '2024-03-01'), [day('2024-03-05', { requests: 1, ...SPEND })], 'spend survives too');
    await reopened.add('agt_a', '2024-03-05', { requests: 1 });
    assert.equal((await reopened.read('agt_a', '2024-03-05'))[0], day('2024-03-05', { requests: 4, injected: 1 }), 'adds to what was stored');
  });

  test.run();
}
