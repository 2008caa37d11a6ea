/**
 * The RequestLog contract (DESIGN section 12): every adapter runs this same suite,
 * written only against src/ports/requests.ts. Entries appended on the harness's second
 * replica, when it has one, are listed by the first: the log is shared, not per process.
 */
import * as assert from 'uvu/assert';
import { EngramError } from '../../src/errors.js';
import type { KeptChange, NothingAdded, RequestEntry, RequestFilter, RequestLog } from '../../src/ports/index.js';
import { harnessSuite, rejects } from './helpers.js';
import type { ControlHarness } from './control-harness.js';
import { requestEntry } from '../support/request-entry.js';

const invalid = (param: string) => (error: unknown) => error instanceof EngramError && error.code === 'invalid_request' && error.param === param;

let ids = 0;
const T0 = 1_700_000_000_000;

function entry(agentId: string, overrides: Partial<RequestEntry> = {}): RequestEntry {
  const n = ++ids;
  return requestEntry({ id: `req_${n.toString().padStart(6, '0')}`, agentId, at: T0 + n * 1000, protocol: 'chat-completions', conversationId: `cnv_${n}`, outcome: 'completed', latencyMs: 12.5, upstreamMs: 10.25, ...overrides });
}

export function requestsContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`RequestLog contract: ${name}`, open);
  const store = (context: { harness?: ControlHarness }): RequestLog => harness(context).stores.requests;

  test('append then get: every field as written, each list and the rebuilt block included', async (context) => {
    const s = store(context);
    const full = entry('agt_a', {
      protocol: 'messages',
      status: 502,
      outcome: 'upstream_error',
      latencyMs: 1234.5,
      upstreamMs: 1200.75,
      injected: [
        { reflectionId: 'ref_one', relevance: 0.8123, why: 'meaning' },
        { reflectionId: 'ref_two', relevance: 0.21, why: 'named term "billing-svc"' },
        { reflectionId: 'ref_neg', relevance: -0.05, why: 'tags' },
      ],
      kept: [
        { reflectionId: 'ref_old', turn: 1 },
        { reflectionId: 'ref_older', turn: 3 },
      ],
      rebuilt: {
        blocks: ['reflections', 'index'],
        changes: [
          { reflectionId: 'ref_was', change: 'superseded', replacedBy: 'ref_now' },
          { reflectionId: 'ref_gone', change: 'deleted' },
          { reflectionId: 'ref_changed', change: 'edited' },
          { reflectionId: 'ref_moved', change: 'out_of_scope' },
        ],
      },
      bar: 0.2,
      scope: 'alpha-shop',
      user: 'alice@example.com',
    });
    const chore = entry('agt_a', { reason: 'client_chore' });
    await s.append(chore);
    assert.equal(await s.get('agt_a', chore.id), chore, 'why memory was left out');
    const underBar = entry('agt_a', {
      reason: 'under_bar',
      bar: 0.35,
      nearMisses: [
        { reflectionId: 'ref_close', relevance: 0.3499 },
        { reflectionId: 'ref_closer_not', relevance: 0.1 },
        { reflectionId: 'ref_far', relevance: -0.2 },
      ],
    });
    await s.append(underBar);
    assert.equal(await s.get('agt_a', underBar.id), underBar, 'the bar and the near misses, best first, as written');
    const bare = entry('agt_a', { conversationId: null, status: null, upstreamMs: null, outcome: 'failed', reason: 'not_reached' });
    await s.append(full);
    await s.append(bare);
    assert.equal(await s.get('agt_a', full.id), full);
    assert.equal(await s.get('agt_a', bare.id), bare, 'nulls stay null');
    assert.is(await s.get('agt_a', 'req_missing'), undefined);
    assert.is(await s.get('agt_b', full.id), undefined, "another agent's entry is not found through this agent");
  });

  test('every reason why nothing was added, and every change of a kept block, round-trips', async (context) => {
    const s = store(context);
    const reasons: NothingAdded[] = ['client_chore', 'injection_off', 'no_new_input', 'nothing_to_search', 'no_candidates', 'already_held', 'under_bar', 'over_budget', 'not_reached'];
    const written = reasons.map((reason) => entry('agt_a', { reason }));
    const changes: KeptChange[] = ['superseded', 'deleted', 'edited', 'out_of_scope'];
    written.push(
      ...changes.map((change) =>
        entry('agt_a', { injected: [{ reflectionId: 'ref_x', relevance: 0.5, why: 'meaning' }], rebuilt: { blocks: ['reflections'], changes: [{ reflectionId: 'ref_y', change }] } }),
      ),
    );
    for (const e of written) await s.append(e);
    assert.equal((await s.list('agt_a', { limit: 50 })).entries, [...written].reverse());
  });

  test('only the port\'s fields are stored: whatever else the objects carry stays out', async (context) => {
    const s = store(context);
    const extra = { content: 'the reflection text', secret: 'sk-never' };
    const written = entry('agt_a', {
      injected: [{ reflectionId: 'ref_one', relevance: 0.5, why: 'meaning', ...extra }],
      kept: [{ reflectionId: 'ref_two', turn: 2, ...extra }],
      rebuilt: { blocks: ['reflections'], changes: [{ reflectionId: 'ref_three', change: 'edited', ...extra }] },
      nearMisses: [{ reflectionId: 'ref_four', relevance: 0.1, ...extra }],
    });
    await s.append({ ...written, ...extra } as RequestEntry);
    const read = await s.get('agt_a', written.id);
    assert.not.ok(JSON.stringify(read).includes('sk-never'));
    assert.equal(read, {
      ...written,
      injected: [{ reflectionId: 'ref_one', relevance: 0.5, why: 'meaning' }],
      kept: [{ reflectionId: 'ref_two', turn: 2 }],
      rebuilt: { blocks: ['reflections'], changes: [{ reflectionId: 'ref_three', change: 'edited' }] },
      nearMisses: [{ reflectionId: 'ref_four', relevance: 0.1 }],
    });
  });

  test('a filter by conversation, by outcome, by nothing added, or all three: each page holds `limit` matches, the cursor walks them all once', async (context) => {
    const s = store(context);
    const got = [{ reflectionId: 'ref_a', relevance: 0.4, why: 'meaning' }];
    // 30 entries over two conversations, three outcomes, every third with nothing added; another agent's beside them.
    const written: RequestEntry[] = [];
    for (let i = 0; i < 30; i++) {
      const nothing = i % 3 === 0;
      written.push(
        entry('agt_a', {
          conversationId: i % 2 === 0 ? 'cnv_even' : 'cnv_odd',
          outcome: ['settled', 'upstream_error', 'interrupted'][i % 5 === 0 ? 1 : i % 7 === 0 ? 2 : 0],
          injected: nothing ? [] : got,
          reason: nothing ? 'under_bar' : null,
        }),
      );
      if (i % 4 === 0) await s.append(entry('agt_b', { conversationId: 'cnv_even', outcome: 'settled' }));
      await s.append(written[i]);
    }
    const filters: RequestFilter[] = [
      { conversationId: 'cnv_even' },
      { conversationId: 'cnv_odd' },
      { conversationId: 'cnv_none' },
      { outcome: 'settled' },
      { outcome: 'upstream_error' },
      { nothingAdded: true },
      { nothingAdded: false },
      { conversationId: 'cnv_even', outcome: 'settled', nothingAdded: false },
      { conversationId: 'cnv_odd', nothingAdded: true },
    ];
    const matching = (filter: RequestFilter): Partial<RequestEntry> => ({
      ...(filter.conversationId === undefined ? {} : { conversationId: filter.conversationId }),
      ...(filter.outcome === undefined ? {} : { outcome: filter.outcome }),
      injected: filter.nothingAdded ? [] : got,
    });
    for (const filter of filters) {
      for (const limit of [1, 4, 100]) {
        const expected = written
          .filter(
            (e) =>
              (filter.conversationId === undefined || e.conversationId === filter.conversationId) &&
              (filter.outcome === undefined || e.outcome === filter.outcome) &&
              (filter.nothingAdded === undefined || (e.injected.length === 0) === filter.nothingAdded),
          )
          .reverse()
          .map((e) => e.id);
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await s.list('agt_a', { limit, cursor, ...filter });
          if (page.cursor !== undefined) assert.is(page.entries.length, limit, `a page with an older one is full: ${JSON.stringify(filter)}`);
          seen.push(...page.entries.map((e) => e.id));
          cursor = page.cursor;
          pages++;
          if (pages === 1) {
            // A matching request ending meanwhile is not on the older pages (the next walk lists it).
            const late = entry('agt_a', matching(filter));
            written.push(late);
            await s.append(late);
          }
        } while (cursor && pages < 100);
        assert.equal(seen, expected, `${JSON.stringify(filter)}, limit ${limit}`);
        assert.is(pages, Math.max(1, Math.ceil(expected.length / limit)), 'no empty last page');
      }
    }
  });

  test('a cursor from one listing pages on under another filter, and a request of no listing is refused alike', async (context) => {
    const s = store(context);
    const written = Array.from({ length: 6 }, (_, i) => entry('agt_a', { outcome: i % 2 === 0 ? 'settled' : 'failed' }));
    for (const e of written) await s.append(e);
    const { cursor } = await s.list('agt_a', { limit: 2 });
    assert.equal((await s.list('agt_a', { limit: 10, cursor, outcome: 'settled' })).entries.map((e) => e.id), [written[2].id, written[0].id]);
    assert.ok(invalid('cursor')(await rejects(() => s.list('agt_a', { limit: 5, cursor: 'nonsense', outcome: 'settled' }))));
    assert.ok(invalid('limit')(await rejects(() => s.list('agt_a', { limit: 0, nothingAdded: true }))));
  });

  test('list: latest appended first; limit; an empty log is one empty page', async (context) => {
    const s = store(context);
    assert.equal(await s.list('agt_a', { limit: 10 }), { entries: [] });
    const written = Array.from({ length: 5 }, () => entry('agt_a'));
    for (const e of written) await s.append(e);
    await s.append(entry('agt_b'));
    const all = await s.list('agt_a', { limit: 10 });
    assert.equal(all.entries, [...written].reverse(), 'newest first, only this agent');
    assert.is(all.cursor, undefined, 'no older page');
    const two = await s.list('agt_a', { limit: 2 });
    assert.equal(two.entries.map((e) => e.id), [written[4].id, written[3].id]);
    assert.type(two.cursor, 'string');
    const exact = await s.list('agt_a', { limit: 5 });
    assert.is(exact.entries.length, 5);
    assert.is(exact.cursor, undefined, 'a page that ends with the log has no cursor');
  });

  test('the cursor walks every entry once, oldest last, however many are appended meanwhile', async (context) => {
    const s = store(context);
    const written = Array.from({ length: 7 }, () => entry('agt_a'));
    for (const e of written) await s.append(e);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await s.list('agt_a', { limit: 3, cursor });
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.cursor;
      pages++;
      // A request ending while someone pages is not on the older pages.
      if (pages === 1) await s.append(entry('agt_a'));
    } while (cursor);
    assert.is(pages, 3);
    assert.equal(seen, written.map((e) => e.id).reverse());
  });

  test('a cursor this store did not make, or a bad limit, rejects with invalid_request naming it', async (context) => {
    const s = store(context);
    await s.append(entry('agt_a'));
    for (const cursor of ['', 'nonsense', 'c0', 'c-1', 'c1.5', 'c99999999999999999999', ' c1', '*', '>']) {
      assert.ok(invalid('cursor')(await rejects(() => s.list('agt_a', { limit: 5, cursor }))), JSON.stringify(cursor));
    }
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      assert.ok(invalid('limit')(await rejects(() => s.list('agt_a', { limit }))), String(limit));
    }
  });

  test("another agent's entries are never listed, whatever their ids share", async (context) => {
    const s = store(context);
    const agents = ['agt_a', 'agt_ab', 'agt_a.b', 'agt', 'with space'];
    const byAgent = new Map(agents.map((agentId) => [agentId, entry(agentId)]));
    for (const e of byAgent.values()) await s.append(e);
    for (const agentId of agents) {
      assert.equal((await s.list(agentId, { limit: 10 })).entries, [byAgent.get(agentId)], agentId);
      assert.equal(await s.get(agentId, byAgent.get(agentId)!.id), byAgent.get(agentId));
    }
  });

  test('prune forgets every agent\'s entries from before the time, counts them, keeps the rest', async (context) => {
    const s = store(context);
    const old = [entry('agt_a', { at: T0 - 10 }), entry('agt_b', { at: T0 - 1 })];
    const kept = [entry('agt_a', { at: T0 }), entry('agt_b', { at: T0 + 5 })];
    for (const e of [...old, ...kept]) await s.append(e);
    assert.is(await s.prune(T0), 2);
    assert.equal((await s.list('agt_a', { limit: 10 })).entries, [kept[0]]);
    assert.equal((await s.list('agt_b', { limit: 10 })).entries, [kept[1]]);
    assert.is(await s.get('agt_a', old[0].id), undefined);
    assert.is(await s.prune(T0), 0, 'nothing left to prune');
  });

  test("deleteAgent forgets only that agent's entries", async (context) => {
    const s = store(context);
    const a = entry('agt_a');
    const ab = entry('agt_ab');
    await s.append(a);
    await s.append(ab);
    await s.deleteAgent('agt_a');
    await s.deleteAgent('agt_missing');
    assert.equal(await s.list('agt_a', { limit: 10 }), { entries: [] });
    assert.is(await s.get('agt_a', a.id), undefined);
    assert.equal((await s.list('agt_ab', { limit: 10 })).entries, [ab]);
  });

  test('a second replica lists what the first appended, in one order', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const peer = (await h.peer()).requests;
    const first = entry('agt_a');
    const second = entry('agt_a');
    await h.stores.requests.append(first);
    await peer.append(second);
    for (const s of [h.stores.requests, peer]) assert.equal((await s.list('agt_a', { limit: 10 })).entries, [second, first]);
  });

  test('entries survive reopening, and their cursors still page', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    const written = [entry('agt_a'), entry('agt_a'), entry('agt_a')];
    for (const e of written) await h.stores.requests.append(e);
    const { cursor } = await h.stores.requests.list('agt_a', { limit: 1 });
    const reopened = (await h.reopen()).requests;
    assert.equal((await reopened.list('agt_a', { limit: 5, cursor })).entries, [written[1], written[0]]);
  });

  test.run();
}
