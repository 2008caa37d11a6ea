/**
 * The ReflectionStore contract: every adapter (SQLite, Weaviate) runs this same suite,
 * written only against the port in src/ports/reflections.ts. Hybrid
 * search is the fusion above the port (src/memory/hybrid-search.ts) over the adapter's two searches.
 */
import * as assert from 'uvu/assert';
import type { ReflectionKind } from '../../src/domain/types.js';
import type { Match, ReflectionStore, StoredReflection } from '../../src/ports/index.js';
import { hybridSearch, type HybridQuery } from '../../src/memory/hybrid-search.js';
import { reflection as baseReflection } from '../memory/fixtures.js';
import { harnessSuite, unitVector } from './helpers.js';

export interface ReflectionStoreHarness {
  store: ReflectionStore;
  cleanup: () => Promise<void>;
}

const DIMS = 8;
const A = 'agt_contract_a';
const B = 'agt_contract_b';

/** A reflection whose vector points mostly along `axis`. */
export function reflection(
  agentId: string,
  id: string,
  content: string,
  axis: number,
  extra: Partial<StoredReflection> = {},
): StoredReflection {
  return { ...baseReflection({ id, agentId, content, embedderId: 'test-embedder' }), vector: unitVector(DIMS, { [axis]: 1 }), ...extra };
}

const axis = (i: number): Float32Array => unitVector(DIMS, { [i]: 1 });
const search = (s: ReflectionStore, agentId: string, query: HybridQuery) => hybridSearch(s, agentId, query);
/** Vector search with the scores the hybrid results carry, for assertions written against both. */
const nearest = async (s: ReflectionStore, agentId: string, vector: Float32Array, limit: number) =>
  byScore(await s.nearest(agentId, { vector, limit })).map((m) => ({ reflection: m.reflection, vectorScore: m.cosine, keywordScore: 0, score: m.score }));
/** The port returns matches in any order: best first, ties by id, for assertions. */
const byScore = (matches: Match[]): Match[] => [...matches].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));

export function reflectionStoreContract(name: string, open: () => Promise<ReflectionStoreHarness>): void {
  const { test, harness } = harnessSuite(`ReflectionStore contract: ${name}`, open);
  const store = (context: { harness?: ReflectionStoreHarness }): ReflectionStore => harness(context).store;

  test('upsert, get, count; upsert is idempotent on id', async (context) => {
    const s = store(context);
    const r = reflection(A, 'r1', 'The build uses pnpm workspaces', 0, {
      kind: 'procedural',
      topic: 'build',
      tags: ['pnpm', 'monorepo'],
      source: 'mcp',
    });
    await s.upsert([r]);
    const { vector: _vector, ...plain } = r;
    assert.equal(await s.get(A, 'r1'), plain);
    assert.is(await s.count(A), 1);
    await s.upsert([r]);
    assert.is(await s.count(A), 1, 'same id twice is one reflection');
    await s.upsert([{ ...r, content: 'The build uses npm', updatedAt: 2_000 }]);
    assert.is(await s.count(A), 1);
    assert.is((await s.get(A, 'r1'))?.content, 'The build uses npm');
    assert.is(await s.get(A, 'missing'), undefined);
  });

  test('getMany: the stored records of the ids asked for, superseded ones too, missing ids and other agents left out', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'm1', 'Staging runs on db-stage-7', 0),
      reflection(A, 'm2', 'Staging moved to db-stage-9', 1),
      reflection(A, 'm3', 'Unrelated note about lunch', 2),
      reflection(B, 'm4', 'Another agent’s reflection', 3),
    ]);
    await s.update(A, 'm1', { supersededBy: 'm2', supersededAt: 5_000 });
    const found = await s.getMany(A, ['m1', 'm2', 'missing', 'm4', 'm2']);
    const byId = new Map(found.map((r) => [r.id, r]));
    assert.equal([...byId.keys()].sort(), ['m1', 'm2']);
    assert.is(found.length, 2, 'each once');
    assert.is(byId.get('m1')?.supersededBy, 'm2');
    assert.equal(byId.get('m2'), await s.get(A, 'm2'), 'the same record get gives');
    assert.equal(await s.getMany(A, []), []);

    // After a search (an engine may keep what it searched in memory) and writes since: still the stored records.
    await s.nearest(A, { vector: axis(0), limit: 5 });
    const current = await s.getMany(A, ['m3', 'm2']);
    assert.equal(new Map(current.map((r) => [r.id, r])), new Map([['m2', await s.get(A, 'm2')], ['m3', await s.get(A, 'm3')]]), 'as get gives them');
    await s.update(A, 'm3', { content: 'Lunch is at noon in the atrium' });
    assert.is((await s.getMany(A, ['m3']))[0]?.content, 'Lunch is at noon in the atrium', 'an edit since the search');
    await s.update(A, 'm2', { supersededBy: 'm3', supersededAt: 6_000 });
    assert.is((await s.getMany(A, ['m2', 'm3'])).find((r) => r.id === 'm2')?.supersededBy, 'm3', 'superseded since the search: still found, as superseded');
    await s.delete(A, 'm3');
    assert.equal((await s.getMany(A, ['m2', 'm3'])).map((r) => r.id), ['m2'], 'deleted since the search: left out');
  });

  test('origin: kept, read back by get, list and search, replaced or cleared by an upsert', async (context) => {
    const s = store(context);
    const origin = { conversation: 'conv_planted', turn: 7, role: 'tool' as const };
    await s.upsert([reflection(A, 'o1', 'Deploys go through the staging gate', 0, { origin }), reflection(A, 'o2', 'stored on purpose', 1)]);
    assert.equal((await s.get(A, 'o1'))?.origin, origin);
    assert.not.ok('origin' in ((await s.get(A, 'o2')) ?? {}), 'a reflection stored on purpose has no origin');
    assert.equal((await s.list(A)).find((r) => r.id === 'o1')?.origin, origin);
    const found = await search(s, A, { text: 'staging gate', vector: axis(0), limit: 5 });
    assert.equal(found.find((m) => m.reflection.id === 'o1')?.reflection.origin, origin);
    await s.update(A, 'o1', { content: 'Deploys go through the staging gate first' });
    assert.equal((await s.get(A, 'o1'))?.origin, origin, 'a patch keeps the origin');
    await s.upsert([reflection(A, 'o1', 'Deploys go through the staging gate', 0, { origin: { conversation: 'conv_other' } })]);
    assert.equal((await s.get(A, 'o1'))?.origin, { conversation: 'conv_other' });
    await s.upsert([reflection(A, 'o1', 'Deploys go through the staging gate', 0)]);
    assert.not.ok('origin' in ((await s.get(A, 'o1')) ?? {}), 'an upsert without origin clears it, like the content');
  });

  test('superseded: kept and listed with its fields, never searched; restoring makes it searchable at once', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'old', 'The cache lives in redis on port 6379', 0, { updatedAt: 1_000 }),
      reflection(A, 'new', 'The cache lives in redis on port 6380', 1, { updatedAt: 2_000 }),
    ]);
    // Warm whatever the adapter caches, so the supersession must reach it.
    assert.equal((await s.keywords(A, { text: 'redis', limit: 5 })).map((m) => m.id).sort(), ['new', 'old']);
    const superseded = await s.update(A, 'old', { supersededBy: 'new', supersededAt: 5_000 });
    assert.equal([superseded?.supersededBy, superseded?.supersededAt], ['new', 5_000]);
    const stored = await s.get(A, 'old');
    assert.equal([stored?.supersededBy, stored?.supersededAt, stored?.content], ['new', 5_000, 'The cache lives in redis on port 6379']);
    assert.not.ok('supersededBy' in ((await s.get(A, 'new')) ?? {}), 'a current reflection has no supersededBy');
    assert.not.ok('supersededAt' in ((await s.get(A, 'new')) ?? {}));

    assert.equal((await s.keywords(A, { text: 'redis', limit: 5 })).map((m) => m.id), ['new'], 'keywords never return it');
    assert.equal((await s.nearest(A, { vector: axis(0), limit: 5 })).map((m) => m.id), ['new'], 'nearest never returns it');
    assert.equal((await search(s, A, { text: 'redis port', vector: axis(0), limit: 5 })).map((r) => r.reflection.id), ['new']);
    assert.is(await s.count(A), 2, 'count sees it');
    assert.equal((await s.list(A)).map((r) => [r.id, r.supersededBy ?? null]).sort(), [['new', null], ['old', 'new']], 'list shows both');
    assert.equal((await s.list(A, { superseded: true })).map((r) => r.id), ['old']);
    assert.equal((await s.list(A, { superseded: false })).map((r) => r.id), ['new']);
    assert.equal(await s.list(A, { superseded: true, kind: 'procedural' }), []);

    await s.update(A, 'old', { topic: 'infra' });
    assert.is((await s.get(A, 'old'))?.supersededBy, 'new', 'a patch without supersededBy keeps it');
    assert.equal((await s.nearest(A, { vector: axis(0), limit: 5 })).map((m) => m.id), ['new'], 'still not searched');

    const restored = await s.update(A, 'old', { supersededBy: null });
    assert.ok(restored);
    assert.not.ok('supersededBy' in restored || 'supersededAt' in restored, 'restoring clears both');
    assert.not.ok('supersededBy' in ((await s.get(A, 'old')) ?? {}));
    assert.equal((await s.keywords(A, { text: 'redis', limit: 5 })).map((m) => m.id).sort(), ['new', 'old']);
    assert.equal(byScore(await s.nearest(A, { vector: axis(0), limit: 1 })).map((m) => m.id), ['old'], 'its vector is searched again');
    assert.equal(await s.list(A, { superseded: true }), []);

    const again = await s.update(A, 'new', { supersededBy: 'old' });
    assert.ok(again?.supersededAt !== undefined && again.supersededAt >= again.updatedAt - 1, 'stamped now when the patch says no time');
    assert.equal((await s.nearest(A, { vector: axis(1), limit: 5 })).map((m) => m.id), ['old']);
  });

  test('superseded by upsert: the record says it; without supersededBy an upsert makes it current again', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'h1', 'Deploys run on Fridays', 0, { supersededBy: 'h2', updatedAt: 3_000 }),
      reflection(A, 'h2', 'Deploys run on Mondays', 1),
    ]);
    const h1 = await s.get(A, 'h1');
    assert.equal([h1?.supersededBy, h1?.supersededAt], ['h2', 3_000], 'supersededAt defaults to the record’s updatedAt');
    assert.equal((await s.keywords(A, { text: 'deploys', limit: 5 })).map((m) => m.id), ['h2']);
    assert.equal((await s.nearest(A, { vector: axis(0), limit: 5 })).map((m) => m.id), ['h2']);
    await s.upsert([reflection(A, 'h2', 'Deploys run on Mondays', 1, { supersededAt: 9_000 })]);
    assert.not.ok('supersededAt' in ((await s.get(A, 'h2')) ?? {}), 'a supersededAt without supersededBy is dropped');
    await s.upsert([reflection(A, 'h1', 'Deploys run on Fridays', 0, { updatedAt: 4_000 })]);
    assert.not.ok('supersededBy' in ((await s.get(A, 'h1')) ?? {}), 'upsert replaces the supersession like the content');
    assert.equal((await s.keywords(A, { text: 'deploys', limit: 5 })).map((m) => m.id).sort(), ['h1', 'h2']);
    await s.upsert([reflection(A, 'h2', 'Deploys run on Mondays', 1, { supersededBy: 'h1', supersededAt: 6_000 })]);
    assert.equal((await s.nearest(A, { vector: axis(1), limit: 5 })).map((m) => m.id), ['h1'], 'a re-upsert can supersede a searched one');
    assert.equal((await s.list(A, { superseded: true })).map((r) => [r.id, r.supersededBy, r.supersededAt]), [['h2', 'h1', 6_000]]);
  });

  test('tagsBy: round-trips through upsert, update, get, list and search; needsTags lists current untagged ones', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 't1', 'Run the linter before pushing', 0, { tags: ['ci'], tagsBy: 'extraction', updatedAt: 4_000 }),
      reflection(A, 't2', 'The linter config is eslint.config.js', 1, { updatedAt: 3_000 }),
      reflection(A, 't3', 'The linter runs in CI too', 2, { kind: 'procedural', updatedAt: 2_000 }),
      reflection(A, 't4', 'The linter used to be tslint', 3, { supersededBy: 't2', updatedAt: 1_000 }),
    ]);
    assert.is((await s.get(A, 't1'))?.tagsBy, 'extraction');
    assert.not.ok('tagsBy' in ((await s.get(A, 't2')) ?? {}), 'absent while no one has tagged it');
    assert.equal((await s.list(A)).map((r) => [r.id, r.tagsBy ?? null]), [['t1', 'extraction'], ['t2', null], ['t3', null], ['t4', null]]);
    assert.equal((await s.list(A, { needsTags: true })).map((r) => r.id), ['t2', 't3'], 'current and untagged, never superseded');
    assert.equal((await s.list(A, { needsTags: true, limit: 1, offset: 1 })).map((r) => r.id), ['t3']);
    assert.equal((await s.list(A, { needsTags: true, kind: 'procedural' })).map((r) => r.id), ['t3']);
    assert.equal(await s.list(A, { needsTags: true, superseded: true }), []);
    assert.is((await s.list(A, { needsTags: false })).length, 4, 'false is no filter');
    assert.equal((await s.list(A, { needsTags: true, oldestFirst: true })).map((r) => r.id), ['t3', 't2'], 'the oldest end of the backlog first');
    assert.equal((await s.list(A, { needsTags: true, oldestFirst: true, limit: 1 })).map((r) => r.id), ['t3']);
    assert.equal((await s.list(A, { oldestFirst: true })).map((r) => r.id), ['t4', 't3', 't2', 't1']);
    assert.equal((await s.list(A, { oldestFirst: true, limit: 2, offset: 1 })).map((r) => r.id), ['t3', 't2']);

    const tagged = await s.update(A, 't2', { tags: ['eslint', 'lint config'], tagsBy: 'tagging' });
    assert.is(tagged?.tagsBy, 'tagging');
    assert.is((await s.get(A, 't2'))?.tagsBy, 'tagging');
    assert.equal((await s.list(A, { needsTags: true })).map((r) => r.id), ['t3']);
    const found = await s.keywords(A, { text: 'eslint', limit: 5 });
    assert.equal(found.map((m) => [m.id, m.reflection.tagsBy]), [['t2', 'tagging']], 'searches carry it');
    assert.is((await s.nearest(A, { vector: axis(0), limit: 1 }))[0].reflection.tagsBy, 'extraction');

    await s.update(A, 't2', { content: 'The linter config is eslint.config.mjs' });
    assert.is((await s.get(A, 't2'))?.tagsBy, 'tagging', 'a patch without tagsBy keeps it');
    const cleared = await s.update(A, 't1', { tagsBy: null });
    assert.not.ok(cleared && 'tagsBy' in cleared);
    assert.not.ok('tagsBy' in ((await s.get(A, 't1')) ?? {}));
    assert.equal((await s.list(A, { needsTags: true })).map((r) => r.id).sort(), ['t1', 't3']);
    await s.update(A, 't3', { tagsBy: 'person' });
    await s.upsert([reflection(A, 't3', 'The linter runs in CI too', 2, { kind: 'procedural', tags: ['ci'], tagsBy: 'agent' })]);
    assert.is((await s.get(A, 't3'))?.tagsBy, 'agent', 'upsert replaces it');
    await s.upsert([reflection(A, 't3', 'The linter runs in CI too', 2, { kind: 'procedural' })]);
    assert.not.ok('tagsBy' in ((await s.get(A, 't3')) ?? {}), 'an upsert without it leaves the reflection untagged');
  });

  test('scope and user: round-trip; searches and lists see only what the visibility allows; moving a scope', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'v-all', 'The shipping carrier is DHL', 0, { updatedAt: 5_000 }),
      reflection(A, 'v-alpha', 'Run the shipping tests with make test-alpha', 0, { scope: 'alpha', updatedAt: 4_000 }),
      reflection(A, 'v-beta', 'Run the shipping tests with ./scripts/beta.sh', 0, { scope: 'beta', updatedAt: 3_000 }),
      reflection(A, 'v-alice', 'My shipping address is 1 Alice Road', 0, { user: 'alice', updatedAt: 2_000 }),
      reflection(A, 'v-alice-alpha', 'Alice ships alpha builds on Fridays', 0, { user: 'alice', scope: 'alpha', updatedAt: 1_000 }),
    ]);
    const got = await s.get(A, 'v-alice-alpha');
    assert.is(got?.scope, 'alpha');
    assert.is(got?.user, 'alice');
    assert.not.ok('scope' in ((await s.get(A, 'v-all')) ?? {}) || 'user' in ((await s.get(A, 'v-all')) ?? {}), 'absent when none');
    const ids = (found: { id: string }[]) => found.map((r) => r.id).sort();
    const seen = async (visible: { scope?: string; user?: string }) => {
      const byVector = ids(await s.nearest(A, { vector: axis(0), limit: 10, visible }));
      const byWords = ids(await s.keywords(A, { text: 'shipping alpha', limit: 10, visible }));
      const listed = ids(await s.list(A, { visible }));
      assert.equal(byWords.filter((id) => !byVector.includes(id)), [], 'keywords see no more than nearest');
      assert.equal(listed, byVector, 'list sees what searches see');
      return byVector;
    };
    assert.equal(await seen({}), ['v-all'], 'no scope, no user: only what holds everywhere and is the agent’s own');
    assert.equal(await seen({ scope: 'alpha' }), ['v-all', 'v-alpha']);
    assert.equal(await seen({ scope: 'beta' }), ['v-all', 'v-beta'], 'never another project’s');
    assert.equal(await seen({ user: 'bob' }), ['v-all'], 'never another user’s');
    assert.equal(await seen({ user: 'alice' }), ['v-alice', 'v-all']);
    assert.equal(await seen({ user: 'alice', scope: 'alpha' }), ['v-alice', 'v-alice-alpha', 'v-all', 'v-alpha']);
    assert.equal(await seen({ user: 'bob', scope: 'alpha' }), ['v-all', 'v-alpha']);
    assert.equal(ids(await s.nearest(A, { vector: axis(0), limit: 10 })).length, 5, 'no visibility: everything (the management API)');
    // Hidden reflections never crowd visible ones out of the top k.
    const top = await s.nearest(A, { vector: axis(0), limit: 1, visible: { user: 'bob', scope: 'beta' } });
    assert.equal(ids(top), ['v-all']);
    assert.equal(ids(await s.keywords(A, { text: 'shipping', limit: 1, visible: { scope: 'beta' } })).length, 1);
    assert.ok(['v-all', 'v-beta'].includes((await s.keywords(A, { text: 'shipping', limit: 1, visible: { scope: 'beta' } }))[0].id));

    assert.equal(ids(await s.list(A, { scope: 'alpha' })), ['v-alice-alpha', 'v-alpha'], 'exact scope');
    assert.equal(ids(await s.list(A, { scope: null })), ['v-alice', 'v-all'], 'null: only those without a scope');
    assert.equal(ids(await s.list(A, { user: 'alice' })), ['v-alice', 'v-alice-alpha']);
    assert.equal(ids(await s.list(A, { user: null, scope: null })), ['v-all']);

    const moved = await s.update(A, 'v-beta', { scope: 'alpha' });
    assert.is(moved?.scope, 'alpha');
    assert.equal(await seen({ scope: 'beta' }), ['v-all'], 'moved out of beta at once');
    assert.equal(await seen({ scope: 'alpha' }), ['v-all', 'v-alpha', 'v-beta']);
    const everywhere = await s.update(A, 'v-beta', { scope: null });
    assert.not.ok(everywhere && 'scope' in everywhere);
    assert.equal(await seen({ scope: 'beta' }), ['v-all', 'v-beta'], 'null: it holds everywhere');
    await s.upsert([reflection(A, 'v-all', 'The shipping carrier is DHL', 0, { user: 'bob' })]);
    assert.equal(await seen({ user: 'alice' }), ['v-alice', 'v-beta'], 'an upsert replaces the user');
  });

  test('agents are isolated: get, list, count, search, nearest, delete', async (context) => {
    const s = store(context);
    await s.upsert([reflection(A, 'a1', 'secret alpha deployment detail', 0)]);
    await s.upsert([reflection(B, 'b1', 'bravo notes', 1)]);
    assert.is(await s.get(B, 'a1'), undefined);
    assert.is(await s.count(B), 1);
    assert.equal((await s.list(B)).map((r) => r.id), ['b1']);
    const found = await search(s, B, { text: 'secret alpha deployment', vector: axis(0), limit: 10 });
    assert.equal(found.map((r) => r.reflection.id), ['b1'], 'never returns another agent’s reflections');
    assert.ok(found.every((r) => r.reflection.agentId === B));
    assert.equal((await nearest(s, B, axis(0), 10)).map((r) => r.reflection.id), ['b1']);
    assert.is(await s.delete(B, 'a1'), false);
    assert.is(await s.update(B, 'a1', { content: 'hijack' }), undefined);
    await s.markUsed(B, ['a1'], 5_000);
    assert.is((await s.get(A, 'a1'))?.useCount, 0);
    await s.deleteAgent(B);
    assert.is(await s.count(A), 1);
  });

  test('list: most recently updated first, limit, offset, kind', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'old', 'old one', 0, { updatedAt: 1_000 }),
      reflection(A, 'new', 'new one', 1, { updatedAt: 3_000, kind: 'procedural' }),
      reflection(A, 'mid', 'mid one', 2, { updatedAt: 2_000 }),
    ]);
    assert.equal((await s.list(A)).map((r) => r.id), ['new', 'mid', 'old']);
    assert.equal((await s.list(A, { limit: 2 })).map((r) => r.id), ['new', 'mid']);
    assert.equal((await s.list(A, { limit: 2, offset: 1 })).map((r) => r.id), ['mid', 'old']);
    assert.equal((await s.list(A, { kind: 'factual' })).map((r) => r.id), ['mid', 'old']);
    assert.equal((await s.list(A, { kind: 'procedural' })).map((r) => r.id), ['new']);
  });

  test('hybrid search finds a keyword-only match and a vector-only match', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'kw', 'Deploys go through the kubernetes staging cluster first', 5, { topic: 'deploy' }),
      reflection(A, 'vec', 'Unrelated wording entirely', 0),
      reflection(A, 'noise1', 'Lunch is at noon', 3),
      reflection(A, 'noise2', 'The office has plants', 4),
    ]);
    const results = await search(s, A, { text: 'how do we handle kubernetes?', vector: axis(0), limit: 10 });
    const ids = results.map((r) => r.reflection.id);
    assert.ok(ids.includes('kw'), 'keyword match found');
    assert.ok(ids.includes('vec'), 'vector match found');
    const kw = results.find((r) => r.reflection.id === 'kw');
    const vec = results.find((r) => r.reflection.id === 'vec');
    assert.ok(kw && kw.keywordScore > 0);
    assert.ok(vec && Math.abs(vec.vectorScore - 1) < 1e-5, 'vectorScore is the raw cosine');
    assert.is(vec.keywordScore, 0, 'keyword score is 0 when the keyword search missed');
    assert.ok(ids.indexOf('kw') < 2 && ids.indexOf('vec') < 2, 'both outrank unrelated reflections');
    for (const r of results) {
      assert.ok(r.score >= 0 && r.score <= 1 + 1e-9, `score ${r.score} in [0, 1]`);
      assert.ok(r.keywordScore >= 0 && r.keywordScore <= 1 + 1e-9, `keywordScore ${r.keywordScore} in [0, 1]`);
      assert.ok(r.vectorScore >= -1 - 1e-6 && r.vectorScore <= 1 + 1e-6, `vectorScore ${r.vectorScore} in [-1, 1]`);
    }
    for (let i = 1; i < results.length; i++) assert.ok(results[i - 1].score >= results[i].score, 'best first');
  });

  test('hybrid search ranks a match on both signals first; alpha weighs them', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'both', 'pnpm: always pnpm', 0),
      reflection(A, 'kwOnly', 'The other team mentioned pnpm once during a long meeting about tooling', 6),
      reflection(A, 'vecOnly', 'Dependencies come from the registry', 0, { vector: unitVector(DIMS, { 0: 1, 1: 0.2 }) }),
      reflection(A, 'neither', 'The coffee machine is broken', 7),
    ]);
    const query = { text: 'pnpm', vector: axis(0), limit: 4 };
    const hybrid = await search(s, A, query);
    assert.is(hybrid[0].reflection.id, 'both');
    assert.is(hybrid[0].score, 1, 'best on both lists: fused score 1');

    const vectorOnly = await search(s, A, { ...query, alpha: 1 });
    assert.equal(vectorOnly.slice(0, 2).map((r) => r.reflection.id), ['both', 'vecOnly']);
    const keywordOnly = await search(s, A, { ...query, alpha: 0 });
    assert.is(keywordOnly[0].reflection.id, 'both');
    // alpha 0: the fused score is the normalised keyword score alone.
    assert.ok(keywordOnly.every((r) => Math.abs(r.score - r.keywordScore) < 1e-6));
  });

  test('search: limit, kind filter, empty store', async (context) => {
    const s = store(context);
    assert.equal(await search(s, A, { text: 'anything', vector: axis(0), limit: 5 }), []);
    await s.upsert([
      reflection(A, 'f1', 'fact about testing', 0),
      reflection(A, 'p1', 'procedure for testing', 0, { kind: 'procedural' }),
      reflection(A, 'p2', 'another procedure for testing', 1, { kind: 'procedural' }),
    ]);
    assert.is((await search(s, A, { text: 'testing', vector: axis(0), limit: 2 })).length, 2);
    const procedural = await search(s, A, { text: 'testing fact', vector: axis(0), limit: 10, kind: 'procedural' });
    assert.equal(procedural.map((r) => r.reflection.id).sort(), ['p1', 'p2']);
    const kinds = new Set<ReflectionKind>(procedural.map((r) => r.reflection.kind));
    assert.equal([...kinds], ['procedural']);
  });

  test('search text is free text: operators and quotes never throw; no words means vector only', async (context) => {
    const s = store(context);
    await s.upsert([reflection(A, 'r1', 'Quotes "inside" content (and) NEAR stars*', 0)]);
    const nasty = ['"unbalanced', 'a AND OR NOT', 'NEAR(a b, 3)', 'col:value', '*', '^start', '-- ; DROP TABLE x', '"" \'\' ()'];
    for (const text of nasty) {
      const results = await search(s, A, { text, vector: axis(0), limit: 5 });
      assert.is(results.length, 1, `text ${JSON.stringify(text)}`);
    }
    for (const text of ['', '   ', '?!.,;']) {
      const results = await search(s, A, { text, vector: axis(0), limit: 5 });
      assert.is(results.length, 1);
      assert.is(results[0].keywordScore, 0, 'no words: vector only');
    }
    const long = Array.from({ length: 500 }, (_, i) => `word${i}`).join(' ') + ' inside';
    assert.is((await search(s, A, { text: long, vector: axis(0), limit: 5 })).length, 1);
  });

  test('updates and deletes are reflected in search at once', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'r1', 'The cache lives in redis', 0),
      reflection(A, 'r2', 'Logs ship to loki', 1),
    ]);
    // Warm whatever the adapter caches.
    assert.is((await search(s, A, { text: 'redis', vector: axis(0), limit: 1 }))[0].reflection.id, 'r1');

    const updated = await s.update(A, 'r1', { content: 'The cache lives in memcached', vector: axis(4), topic: 'infra' });
    assert.ok(updated);
    assert.is(updated.content, 'The cache lives in memcached');
    assert.is(updated.topic, 'infra');
    assert.ok(updated.updatedAt >= 1_000);
    const byOldWord = await search(s, A, { text: 'redis', vector: axis(7), limit: 5 });
    assert.ok(byOldWord.every((r) => r.keywordScore === 0), 'old words are gone from the keyword index');
    const byNewWord = await search(s, A, { text: 'memcached', vector: axis(7), limit: 1 });
    assert.is(byNewWord[0].reflection.id, 'r1');
    assert.ok(byNewWord[0].keywordScore > 0);
    const near = await nearest(s, A, axis(4), 1);
    assert.is(near[0].reflection.id, 'r1', 'new vector is searched');
    assert.ok(Math.abs(near[0].vectorScore - 1) < 1e-5);

    await s.upsert([reflection(A, 'r3', 'Queues run on sqlite', 4, { updatedAt: 5_000 })]);
    assert.equal((await nearest(s, A, axis(4), 2)).map((r) => r.reflection.id).sort(), ['r1', 'r3']);

    assert.is(await s.delete(A, 'r1'), true);
    assert.is(await s.delete(A, 'r1'), false);
    const after = await search(s, A, { text: 'memcached cache', vector: axis(4), limit: 5 });
    assert.not.ok(after.some((r) => r.reflection.id === 'r1'));
    assert.is(await s.get(A, 'r1'), undefined);
    assert.is(await s.count(A), 2);
  });

  test('nearest: vector only, best first', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'x', 'x', 0),
      reflection(A, 'xy', 'xy', 0, { vector: unitVector(DIMS, { 0: 1, 1: 1 }) }),
      reflection(A, 'y', 'y', 1),
      reflection(A, 'negx', 'negx', 0, { vector: unitVector(DIMS, { 0: -1 }) }),
    ]);
    const near = await nearest(s, A, axis(0), 3);
    assert.equal(near.map((r) => r.reflection.id), ['x', 'xy', 'y']);
    assert.ok(Math.abs(near[1].vectorScore - Math.SQRT1_2) < 1e-5);
    assert.ok(near.every((r) => r.keywordScore === 0));
  });

  test('markUsed increments useCount and sets lastUsedAt', async (context) => {
    const s = store(context);
    await s.upsert([reflection(A, 'r1', 'one', 0), reflection(A, 'r2', 'two', 1)]);
    await s.markUsed(A, ['r1'], 10_000);
    await s.markUsed(A, ['r1', 'r2', 'missing'], 20_000);
    const r1 = await s.get(A, 'r1');
    assert.is(r1?.useCount, 2);
    assert.is(r1?.lastUsedAt, 20_000);
    assert.is((await s.get(A, 'r2'))?.useCount, 1);
    assert.is(r1?.updatedAt, 1_000, 'use is not an update');
    // The store that recorded the uses reads them back at once, whatever it batches.
    assert.equal((await s.list(A)).map((r) => [r.id, r.useCount, r.lastUsedAt]).sort(), [
      ['r1', 2, 20_000],
      ['r2', 1, 20_000],
    ]);
  });

  test('version, where the engine keeps one: moves with every write to the agent, never with a read or a use, nor with another agent\'s write', async (context) => {
    const s = store(context);
    // An optional member (Weaviate has no such counter): retrieval then reuses no search.
    if (!s.version) return;
    const version = s.version.bind(s);
    const seen = [await version(A)];
    const moved = async (what: string) => {
      const now = await version(A);
      assert.ok(!seen.includes(now), `${what} moves the version (${seen.join(', ')} then ${now})`);
      seen.push(now);
    };
    await s.upsert([reflection(A, 'r1', 'one', 0), reflection(A, 'r2', 'two', 1)]);
    await moved('an upsert');
    await s.update(A, 'r1', { content: 'one, changed' });
    await moved('an update');
    await s.get(A, 'r1');
    await s.list(A);
    await s.nearest(A, { vector: axis(0), limit: 2 });
    await s.markUsed(A, ['r1'], 5_000);
    await s.upsert([reflection(B, 'b1', 'other agent', 2)]);
    assert.is(await version(A), seen.at(-1), 'reads, a use, and another agent\'s write leave it');
    assert.ok(await s.delete(A, 'r2'));
    await moved('a delete');
    await s.deleteAgent(A);
    await moved('deleting the agent');
  });

  test('deleteAgent removes every reflection of the agent and only those', async (context) => {
    const s = store(context);
    await s.upsert([reflection(A, 'a1', 'alpha', 0), reflection(A, 'a2', 'alpha two', 1)]);
    await s.upsert([reflection(B, 'b1', 'alpha bravo', 0)]);
    await search(s, A, { text: 'alpha', vector: axis(0), limit: 5 });
    await s.deleteAgent(A);
    assert.is(await s.count(A), 0);
    assert.equal(await s.list(A), []);
    assert.equal(await search(s, A, { text: 'alpha', vector: axis(0), limit: 5 }), []);
    assert.equal(await nearest(s, A, axis(0), 5), []);
    assert.is(await s.count(B), 1);
    assert.is((await search(s, B, { text: 'alpha', vector: axis(0), limit: 5 })).length, 1);
  });

  test('upsert merge rule: content replaced, earliest createdAt, larger useCount, later lastUsedAt kept', async (context) => {
    const s = store(context);
    const first = reflection(A, 'r1', 'Run the linter before pushing', 0, {
      createdAt: 1_000,
      updatedAt: 1_000,
      useCount: 5,
      lastUsedAt: 9_000,
      topic: 'ci',
      tags: ['lint'],
    });
    await s.upsert([first]);
    await s.upsert([
      reflection(A, 'r1', 'Run the linter and the type check before pushing', 3, {
        kind: 'procedural',
        createdAt: 4_000,
        updatedAt: 4_000,
        useCount: 0,
        lastUsedAt: null,
        topic: 'ci-checks',
        tags: ['lint', 'tsc'],
        source: 'transcript',
        embedderId: 'other-embedder',
      }),
    ]);
    const { vector: _firstVector, ...plainFirst } = first;
    assert.equal(await s.get(A, 'r1'), {
      ...plainFirst,
      kind: 'procedural',
      content: 'Run the linter and the type check before pushing',
      topic: 'ci-checks',
      tags: ['lint', 'tsc'],
      source: 'transcript',
      embedderId: 'other-embedder',
      updatedAt: 4_000,
      createdAt: 1_000,
      useCount: 5,
      lastUsedAt: 9_000,
    });
    assert.is((await nearest(s, A, axis(3), 1))[0].reflection.id, 'r1', 'the vector is replaced');
    await s.upsert([reflection(A, 'r1', 'again', 3, { createdAt: 500, updatedAt: 5_000, useCount: 7, lastUsedAt: 2_000 })]);
    const again = await s.get(A, 'r1');
    assert.equal([again?.createdAt, again?.useCount, again?.lastUsedAt], [500, 7, 9_000]);
  });

  test('keywords: BM25 over content, topic and tags, with the cosine to a given vector', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'content', 'Redis must be started before the build', 0),
      reflection(A, 'topic', 'Start it with docker compose', 1, { topic: 'redis' }),
      reflection(A, 'tag', 'Caches are flushed nightly', 2, { tags: ['redis', 'ops'] }),
      reflection(A, 'none', 'Lunch is at noon', 3),
      reflection(A, 'proc', 'Restart redis after upgrades', 4, { kind: 'procedural' }),
    ]);
    const found = await s.keywords(A, { text: 'redis', limit: 10, vector: axis(0) });
    assert.equal(found.map((m) => m.reflection.id).sort(), ['content', 'proc', 'tag', 'topic']);
    assert.ok(found.every((m) => m.score > 0 && m.id === m.reflection.id));
    const top = byScore(await s.keywords(A, { text: 'redis nightly flushed caches', limit: 1 }));
    assert.equal(top.map((m) => m.id), ['tag'], 'limit keeps the most relevant');
    assert.ok(Math.abs(found.find((m) => m.reflection.id === 'content')!.cosine - 1) < 1e-5, 'cosine to the given vector');
    assert.ok(Math.abs(found.find((m) => m.reflection.id === 'tag')!.cosine) < 1e-5);
    assert.equal((await s.keywords(A, { text: 'redis', limit: 10, kind: 'procedural' })).map((m) => m.reflection.id), ['proc']);
    assert.is((await s.keywords(A, { text: 'redis', limit: 2 })).length, 2);
    assert.equal(await s.keywords(A, { text: 'nothing matches this', limit: 10 }), []);
    assert.equal(await s.keywords(A, { text: '', limit: 10 }), []);
    assert.equal(await s.keywords(B, { text: 'redis', limit: 10 }), [], 'another agent');
  });

  test('vectors: the stored vectors, exactly, per agent', async (context) => {
    const s = store(context);
    const exact = unitVector(DIMS, { 0: 0.3, 3: -0.7, 7: 0.1 });
    await s.upsert([reflection(A, 'r1', 'one', 0, { vector: exact }), reflection(A, 'r2', 'two', 1)]);
    await s.upsert([reflection(B, 'b1', 'three', 2)]);
    const vectors = await s.vectors(A, ['r1', 'r2', 'missing', 'b1']);
    assert.equal([...vectors.keys()].sort(), ['r1', 'r2']);
    assert.equal([...vectors.get('r1')!], [...exact]);
    assert.equal([...vectors.get('r2')!], [...axis(1)]);
    assert.equal(await s.vectors(A, []), new Map());
  });

  test('nearest: kind filter, score is the cosine', async (context) => {
    const s = store(context);
    await s.upsert([
      reflection(A, 'f', 'fact', 0),
      reflection(A, 'p', 'procedure', 0, { kind: 'procedural', vector: unitVector(DIMS, { 0: 1, 1: 1 }) }),
    ]);
    const all = byScore(await s.nearest(A, { vector: axis(0), limit: 5 }));
    assert.equal(all.map((m) => m.reflection.id), ['f', 'p']);
    assert.equal((await s.nearest(A, { vector: axis(0), limit: 1 })).map((m) => m.id), ['f'], 'limit keeps the nearest');
    assert.ok(all.every((m) => Math.abs(m.score - m.cosine) < 1e-6));
    const procedural = await s.nearest(A, { vector: axis(0), limit: 5, kind: 'procedural' });
    assert.equal(procedural.map((m) => m.reflection.id), ['p']);
    assert.ok(Math.abs(procedural[0].cosine - Math.SQRT1_2) < 1e-5);
  });

  test.run();
}
