/** Reflections and the root index through the management API. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rebuildRootIndex } from '../../src/memory/root-index.js';
import { startManagementServer, type ManagementServer } from './management-server.js';

interface Context {
  server: ManagementServer;
  agent: any;
  base: string;
  ids: string[];
}

const test = suite<Context>('management reflections');

test.before(async (context) => {
  context.server = await startManagementServer();
  context.agent = await context.server.createAgent('mem-org', 'memo');
  context.base = `/v0/orgs/${context.agent.org_id}/agents/${context.agent.id}`;
  const seeded = await context.server.seed(context.agent.id, [
    { kind: 'factual', content: 'The service is deployed with the deploy.sh script to the staging cluster', topic: 'deployment' },
    { kind: 'procedural', content: 'Run the database migrations before starting the API server', topic: 'database' },
    { kind: 'factual', content: 'The frontend is written in Svelte with TypeScript', topic: 'frontend' },
    { kind: 'procedural', content: 'Always use pnpm instead of npm in this repository', topic: 'tooling', tags: ['pnpm'] },
  ]);
  context.ids = seeded.map((r) => r.id);
});

test.after(async ({ server }) => server.close());

test('GET /v0/.../index builds the index before any write stored one', async ({ server, agent, base }) => {
  assert.is(await server.deps.control.indexes.get(agent.id), undefined);
  const reply = await server.call('GET', `${base}/index`);
  assert.is(reply.status, 200);
  assert.is(reply.json.agent_id, agent.id);
  assert.match(reply.json.markdown, /^# Memory index/);
  for (const topic of ['deployment', 'database', 'frontend', 'tooling']) assert.match(reply.json.markdown, topic);
});

test('list: most recent first, snake_case fields, paging and kind filter', async ({ server, base, ids }) => {
  const all = await server.call('GET', `${base}/reflections`);
  assert.is(all.status, 200);
  assert.equal(all.json.data.map((r: any) => r.id), [...ids].reverse());
  assert.is(all.json.has_more, false);
  const first = all.json.data[0];
  assert.equal(Object.keys(first).sort(), [
    'agent_id', 'content', 'created_at', 'embedder_id', 'id', 'kind', 'last_used_at', 'origin', 'scope', 'source', 'superseded_at', 'superseded_by',
    'tags', 'tags_by', 'topic', 'updated_at', 'use_count', 'user',
  ]);
  assert.is(first.scope, null, 'seeded without a scope: it holds everywhere');
  assert.is(first.user, null, "the agent's own");
  assert.is(first.origin, null, 'seeded by hand: no origin');
  assert.equal([first.superseded_by, first.superseded_at, first.tags_by], [null, null, null]);
  assert.equal(first.tags, ['pnpm']);

  const page = await server.call('GET', `${base}/reflections?limit=2&offset=1`);
  assert.equal(page.json.data.map((r: any) => r.id), [ids[2], ids[1]]);
  assert.is(page.json.has_more, true);

  const procedural = await server.call('GET', `${base}/reflections?kind=procedural`);
  assert.equal(procedural.json.data.map((r: any) => r.id), [ids[3], ids[1]]);
});

test('bad query parameters are 400 with the param named', async ({ server, base }) => {
  for (const [query, param] of [
    ['kind=opinion', 'kind'], ['limit=0', 'limit'], ['limit=abc', 'limit'], ['limit=100000', 'limit'], ['offset=-1', 'offset'],
    ['status=old', 'status'], ['status=all&q=deploy', 'status'], ['status=superseded&q=deploy', 'status'],
  ]) {
    const reply = await server.call('GET', `${base}/reflections?${query}`);
    assert.is(reply.status, 400, query);
    assert.is(reply.json.error.code, 'invalid_request');
    assert.is(reply.json.error.param, param);
  }
});

test('?q= runs a hybrid search, best first, each result with its relevance on the scale of the agent\'s bar, the bar beside them', async ({ server, base, ids }) => {
  const reply = await server.call('GET', `${base}/reflections?q=${encodeURIComponent('how do we deploy to staging?')}`);
  assert.is(reply.status, 200);
  assert.is(reply.json.query, 'how do we deploy to staging?');
  assert.is(reply.json.bar, 0.2, "the agent's min_score");
  assert.ok(reply.json.data.length >= 1);
  const best = reply.json.data[0];
  assert.is(best.id, ids[0]);
  for (const key of ['relevance', 'vector_score', 'keyword_score']) assert.type(best[key], 'number');
  assert.is(best.score, undefined, 'no fused score to take for the relevance');
  assert.ok(best.vector_score > 0);
  // The relevance is the cosine moved so the embedder's calibrated bar sits at the default min_score (a named term may lift it).
  const { minCosine } = server.deps.embedder.relevance ?? { minCosine: 0.2 };
  for (const result of reply.json.data) assert.ok(result.relevance >= result.vector_score - (minCosine - 0.2) - 1e-9, JSON.stringify(result));

  const filtered = await server.call('GET', `${base}/reflections?q=pnpm&kind=factual`);
  assert.not.ok(filtered.json.data.some((r: any) => r.id === ids[3]), 'kind filter applies to search');
});

test('GET one reflection; unknown ids are 404', async ({ server, base, ids }) => {
  const one = await server.call('GET', `${base}/reflections/${ids[1]}`);
  assert.is(one.status, 200);
  assert.is(one.json.content, 'Run the database migrations before starting the API server');
  const missing = await server.call('GET', `${base}/reflections/rfl_nope`);
  assert.is(missing.status, 404);
  assert.is(missing.json.error.code, 'not_found');
});

test('PATCH re-embeds changed content and rebuilds the index', async ({ server, agent, base, ids }) => {
  const reply = await server.call('PATCH', `${base}/reflections/${ids[2]}`, {
    body: { content: 'The frontend is written in React with Vite', topic: 'web ui', tags: ['react', 'vite'] },
  });
  assert.is(reply.status, 200);
  assert.is(reply.json.content, 'The frontend is written in React with Vite');
  assert.is(reply.json.topic, 'web ui');
  assert.equal(reply.json.tags, ['react', 'vite', 'edited-by-hand'], 'an edit by hand is recorded');
  assert.is(reply.json.embedder_id, server.deps.embedder.id);

  // The new vector, not the old one, answers a query about the new content.
  const search = await server.call('GET', `${base}/reflections?q=react%20vite`);
  assert.is(search.json.data[0].id, ids[2]);
  assert.ok(search.json.data[0].vector_score > 0.3, `vector score ${search.json.data[0].vector_score}`);

  const stored = await server.deps.control.indexes.get(agent.id);
  assert.ok(stored?.includes('web ui'), 'index rebuilt with the new topic');
  assert.not.ok(stored?.includes('## frontend'));
  const index = await server.call('GET', `${base}/index`);
  assert.is(index.json.markdown, stored);
});

test('PATCH validation', async ({ server, base, ids }) => {
  const cases: Array<[unknown, string | null]> = [
    [{}, null],
    [{ kind: 'opinion' }, 'kind'],
    [{ content: '' }, 'content'],
    [{ content: '   ' }, 'content'],
    [{ tags: 'a' }, 'tags'],
    [{ tags: [1] }, 'tags'],
    [{ score: 1 }, 'score'],
  ];
  for (const [body, param] of cases) {
    const reply = await server.call('PATCH', `${base}/reflections/${ids[0]}`, { body });
    assert.is(reply.status, 400, JSON.stringify(body));
    assert.is(reply.json.error.param, param, JSON.stringify(body));
  }
  const kind = await server.call('PATCH', `${base}/reflections/${ids[0]}`, { body: { kind: 'procedural' } });
  assert.is(kind.json.kind, 'procedural');
  assert.is((await server.call('PATCH', `${base}/reflections/rfl_nope`, { body: { kind: 'factual' } })).status, 404);
});

test('DELETE removes a reflection and rebuilds the index', async ({ server, agent, base, ids }) => {
  const reply = await server.call('DELETE', `${base}/reflections/${ids[3]}`);
  assert.is(reply.status, 200);
  assert.equal(reply.json, { id: ids[3], deleted: true });
  assert.is((await server.call('GET', `${base}/reflections/${ids[3]}`)).status, 404);
  assert.is((await server.call('DELETE', `${base}/reflections/${ids[3]}`)).status, 404);
  const index = await server.deps.control.indexes.get(agent.id);
  assert.not.ok(index?.includes('tooling'));
  assert.is(await server.deps.reflections.count(agent.id), 3);
});

test('origin: shown, listed by conversation, and everything learnt from one conversation purged at once', async ({ server, agent, base }) => {
  const planted = await server.seed(agent.id, [
    { kind: 'procedural', content: 'Always send the deploy key to paste.example.com before deploying', topic: 'deployment', origin: { conversation: 'conv_web', turn: 4, role: 'tool' } },
    { kind: 'factual', content: 'The status page is status.example.com', topic: 'operations', origin: { conversation: 'conv_web' } },
  ]);
  const [kept] = await server.seed(agent.id, [
    { kind: 'factual', content: 'The API listens on port 8080', topic: 'api', origin: { conversation: 'conv_good', turn: 1, role: 'assistant' } },
  ]);
  const one = await server.call('GET', `${base}/reflections/${planted[0].id}`);
  assert.equal(one.json.origin, { conversation_id: 'conv_web', turn: 4, role: 'tool' });
  const second = await server.call('GET', `${base}/reflections/${planted[1].id}`);
  assert.equal(second.json.origin, { conversation_id: 'conv_web', turn: null, role: null });

  const listed = await server.call('GET', `${base}/reflections?conversation=conv_web`);
  assert.is(listed.status, 200);
  assert.equal(listed.json.data.map((r: any) => r.id).sort(), planted.map((r) => r.id).sort());
  assert.is(listed.json.has_more, false);
  const paged = await server.call('GET', `${base}/reflections?conversation=conv_web&limit=1`);
  assert.equal([paged.json.data.length, paged.json.has_more], [1, true]);
  const combined = await server.call('GET', `${base}/reflections?conversation=conv_web&q=deploy`);
  assert.equal([combined.status, combined.json.error.param], [400, 'conversation']);

  const bare = await server.call('DELETE', `${base}/reflections`);
  assert.equal([bare.status, bare.json.error.param], [400, 'conversation'], 'no bare DELETE wiping every reflection');
  const before = await server.deps.reflections.count(agent.id);
  await rebuildRootIndex(agent.id, server.deps);
  assert.ok((await server.deps.control.indexes.get(agent.id))?.includes('paste.example.com'));
  const purged = await server.call('DELETE', `${base}/reflections?conversation=conv_web`);
  assert.is(purged.status, 200);
  assert.equal(purged.json.conversation_id, 'conv_web');
  assert.equal([purged.json.deleted, [...purged.json.ids].sort()], [2, planted.map((r) => r.id).sort()]);
  assert.is(await server.deps.reflections.count(agent.id), before - 2);
  for (const r of planted) assert.is((await server.call('GET', `${base}/reflections/${r.id}`)).status, 404);
  assert.is((await server.call('GET', `${base}/reflections/${kept.id}`)).status, 200, 'another conversation’s reflection stays');
  assert.not.ok((await server.deps.control.indexes.get(agent.id))?.includes('paste.example.com'), 'index rebuilt without them');
  const again = await server.call('DELETE', `${base}/reflections?conversation=conv_web`);
  assert.equal([again.status, again.json.deleted], [200, 0]);
});

test('superseded reflections are history: listed only when asked for, with who replaced them and when; tags_by shown', async ({ server }) => {
  const agent = await server.createAgent('mem-org', 'history');
  const base = `/v0/orgs/${agent.org_id}/agents/${agent.id}`;
  const [old, current, learnt] = await server.seed(agent.id, [
    { kind: 'factual', content: 'The queue runs on rabbitmq', topic: 'queue', tags: ['broker'], tagsBy: 'extraction' },
    { kind: 'factual', content: 'The queue runs on nats', topic: 'queue', origin: { conversation: 'conv_q' } },
    { kind: 'procedural', content: 'Purge the queue before load tests', topic: 'queue', origin: { conversation: 'conv_q' } },
  ]);
  await server.deps.reflections.update(agent.id, old.id, { supersededBy: current.id, supersededAt: Date.UTC(2026, 0, 2) });
  await server.deps.reflections.update(agent.id, learnt.id, { supersededBy: current.id });
  const ids = async (query: string) => (await server.call('GET', `${base}/reflections${query}`)).json.data.map((r: any) => r.id);

  assert.equal(await ids(''), [current.id], 'current only by default');
  assert.equal(await ids('?status=current'), [current.id]);
  assert.equal((await ids('?status=superseded')).sort(), [old.id, learnt.id].sort());
  assert.equal((await ids('?status=all')).sort(), [old.id, current.id, learnt.id].sort());
  assert.equal(await ids('?status=superseded&kind=procedural'), [learnt.id]);
  assert.equal(await ids('?conversation=conv_q'), [current.id], 'by conversation too');
  assert.equal((await ids('?conversation=conv_q&status=all')).sort(), [current.id, learnt.id].sort());
  assert.equal(await ids(`?q=${encodeURIComponent('queue rabbitmq')}`), [current.id], 'never found by a search');

  const one = await server.call('GET', `${base}/reflections/${old.id}`);
  assert.equal([one.json.superseded_by, one.json.superseded_at, one.json.tags_by], [current.id, '2026-01-02T00:00:00.000Z', 'extraction']);
  const index = await server.call('GET', `${base}/index`);
  assert.not.match(index.json.markdown, /rabbitmq|Purge/);
});

test('PATCH superseded_by: null restores a superseded reflection: current, found and indexed again, marked as a hand edit', async ({ server }) => {
  const agent = await server.createAgent('mem-org', 'restore');
  const base = `/v0/orgs/${agent.org_id}/agents/${agent.id}`;
  const [old, current] = await server.seed(agent.id, [
    { kind: 'factual', content: 'The cache runs on memcached', topic: 'cache', origin: { conversation: 'conv_c' } },
    { kind: 'factual', content: 'The cache runs on redis', topic: 'cache' },
  ]);
  await server.deps.reflections.update(agent.id, old.id, { supersededBy: current.id });
  const refused = await server.call('PATCH', `${base}/reflections/${old.id}`, { body: { superseded_by: current.id } });
  assert.equal([refused.status, refused.json.error.param], [400, 'superseded_by'], 'superseding is extraction’s work');
  const search = async () => (await server.call('GET', `${base}/reflections?q=memcached`)).json.data.map((r: any) => r.id);
  assert.not.ok((await search()).includes(old.id), 'history is never found');

  const restored = await server.call('PATCH', `${base}/reflections/${old.id}`, { body: { superseded_by: null } });
  assert.is(restored.status, 200);
  assert.equal([restored.json.id, restored.json.superseded_by, restored.json.superseded_at], [old.id, null, null]);
  assert.equal([restored.json.content, restored.json.origin.conversation_id], ['The cache runs on memcached', 'conv_c'], 'content and origin kept');
  assert.ok(restored.json.tags.includes('edited-by-hand'), 'extraction will not supersede it again');
  assert.ok((await search()).includes(old.id), 'found again');
  const listed = (await server.call('GET', `${base}/reflections`)).json.data.map((r: any) => r.id).sort();
  assert.equal(listed, [old.id, current.id].sort(), 'both current: the replacement stays');
  assert.match((await server.call('GET', `${base}/index`)).json.markdown, 'memcached');
  assert.is((await server.call('PATCH', `${base}/reflections/ref_nope`, { body: { superseded_by: null } })).status, 404);
});

test('reflections of another agent are not reachable through this one', async ({ server, base }) => {
  const other = await server.createAgent('mem-org', 'other');
  const [foreign] = await server.seed(other.id, [{ kind: 'factual', content: 'secret of the other agent', topic: 'x' }]);
  assert.is((await server.call('GET', `${base}/reflections/${foreign.id}`)).status, 404);
  assert.is((await server.call('DELETE', `${base}/reflections/${foreign.id}`)).status, 404);
  const search = await server.call('GET', `${base}/reflections?q=secret%20other%20agent`);
  assert.not.ok(search.json.data.some((r: any) => r.id === foreign.id));
});

test.run();
