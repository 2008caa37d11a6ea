/**
 * Reflections written by hand over the management API: added through the same writer as
 * MCP `remember`, edited (PATCH, PUT) and exported, on the real SQLite file.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startManagementServer, type ManagementServer } from './management-server.js';

interface Context {
  server: ManagementServer;
  agent: any;
  base: string;
}

const test = suite<Context>('management reflections: add, edit, export');

test.before(async (context) => {
  context.server = await startManagementServer({ 'max-reflections': '1300' });
  context.agent = await context.server.createAgent('write-org', 'writer');
  context.base = `/v0/orgs/${context.agent.org_id}/agents/${context.agent.id}`;
});

test.after(async ({ server }) => server.close());

test('POST adds one by hand: redacted, embedded, tagged, indexed', async ({ server, agent, base }) => {
  const reply = await server.call('POST', `${base}/reflections`, {
    body: { content: 'Deploys use the key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 on the staging cluster', kind: 'procedural', topic: 'Deploy', tags: ['ops'] },
  });
  assert.is(reply.status, 201, JSON.stringify(reply.json));
  const added = reply.json;
  assert.match(added.id, /^ref_/);
  assert.not.match(added.content, /sk-proj-abcdef/, 'the writer redacts secrets');
  assert.match(added.content, /\[REDACTED:/);
  assert.is(added.kind, 'procedural');
  assert.is(added.topic, 'deploy');
  assert.equal(added.tags, ['ops', 'added-by-hand']);
  assert.is(added.source, 'mcp');
  assert.is(added.origin, null);
  assert.is(added.embedder_id, server.deps.embedder.id);
  assert.is(added.tags_by, 'person', 'the tags a person gives are theirs');

  const found = await server.call('GET', `${base}/reflections?q=${encodeURIComponent('how do we deploy to staging')}`);
  assert.is(found.json.data[0].id, added.id, 'embedded and searchable');
  assert.ok(found.json.data[0].vector_score > 0.2);
  assert.ok((await server.deps.control.indexes.get(agent.id))?.includes('deploy'), 'root index rebuilt');
});

test('POST: a restatement is a conflict naming the stored one; bad bodies are 400 with the field', async ({ server, base }) => {
  const first = await server.call('POST', `${base}/reflections`, { body: { content: 'The API listens on port 8080', kind: 'factual' } });
  assert.is(first.status, 201);
  assert.is(first.json.topic, 'general');
  assert.is(first.json.tags_by, null, 'no tags given: no one has tagged it');
  const again = await server.call('POST', `${base}/reflections`, { body: { content: 'the API listens on port 8080.', kind: 'factual' } });
  assert.is(again.status, 409);
  assert.is(again.json.error.code, 'conflict');
  assert.match(again.json.error.message, first.json.id);

  const cases: Array<[unknown, string | null]> = [
    [{ kind: 'factual' }, 'content'],
    [{ content: 'x y', kind: 'opinion' }, 'kind'],
    [{ content: '   ', kind: 'factual' }, 'content'],
    [{ content: 'x'.repeat(1001), kind: 'factual' }, 'content'],
    [{ content: 'ok', kind: 'factual', origin: 'x' }, 'origin'],
    [{ content: 'ok', kind: 'factual', tags: [1] }, 'tags'],
  ];
  for (const [body, param] of cases) {
    const reply = await server.call('POST', `${base}/reflections`, { body });
    assert.is(reply.status, 400, JSON.stringify(body));
    assert.is(reply.json.error.code, 'invalid_request');
    assert.is(reply.json.error.param, param, JSON.stringify(body));
  }
  const secretOnly = await server.call('POST', `${base}/reflections`, { body: { content: 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789', kind: 'factual' } });
  assert.equal([secretOnly.status, secretOnly.json.error.param], [400, 'content']);
});

test('POST with scope and user: stored in that project and for that end user; a restatement is judged on what they see; bad names are 400 naming the field', async ({ server, base }) => {
  const add = (body: Record<string, unknown>) => server.call('POST', `${base}/reflections`, { body: { kind: 'procedural', ...body } });
  const alpha = await add({ content: 'Run the suite with make check', scope: ' alpha-shop ' });
  assert.is(alpha.status, 201, JSON.stringify(alpha.json));
  assert.equal([alpha.json.scope, alpha.json.user], ['alpha-shop', null], 'the name is trimmed; no user: the agent’s own');
  assert.equal(alpha.json.tags, ['added-by-hand']);

  const beta = await add({ content: 'Run the suite with make check', scope: 'beta-crm' });
  assert.is(beta.status, 201, 'the same words in another project are another reflection');
  assert.is.not(beta.json.id, alpha.json.id);
  const alices = await add({ content: 'Run the suite with make check', scope: 'gamma', user: 'alice' });
  assert.is(alices.status, 201);
  assert.equal([alices.json.scope, alices.json.user], ['gamma', 'alice']);
  const bobs = await add({ content: 'Run the suite with make check', scope: 'gamma', user: 'bob' });
  assert.is(bobs.status, 201, 'nor are they for another user');
  assert.is(bobs.json.user, 'bob');
  const shared = await add({ content: 'Run the suite with make check', scope: 'alpha-shop', user: 'alice' });
  assert.is(shared.status, 409, 'Alice in alpha-shop already sees the agent’s own reflection of alpha-shop');
  assert.match(shared.json.error.message, alpha.json.id);

  const again = await add({ content: 'run the suite with make check.', scope: 'alpha-shop' });
  assert.is(again.status, 409, 'the same words in the same project are a restatement');
  assert.match(again.json.error.message, alpha.json.id);
  const everywhere = await add({ content: 'Format the code with prettier before committing', scope: null, user: null });
  assert.equal([everywhere.status, everywhere.json.scope, everywhere.json.user], [201, null, null], 'null: everywhere, the agent’s own');
  const seen = await add({ content: 'Format the code with prettier before committing', scope: 'alpha-shop', user: 'bob' });
  assert.is(seen.status, 409, 'a conversation of alpha-shop and bob already sees the one that holds everywhere');
  assert.match(seen.json.error.message, everywhere.json.id);

  for (const [body, param] of [
    [{ content: 'a b', scope: '' }, 'scope'],
    [{ content: 'a b', scope: '   ' }, 'scope'],
    [{ content: 'a b', scope: 'x'.repeat(201) }, 'scope'],
    [{ content: 'a b', user: 'line\nbreak' }, 'user'],
    [{ content: 'a b', user: 7 }, 'user'],
  ] as Array<[Record<string, unknown>, string]>) {
    const reply = await add(body);
    assert.equal([reply.status, reply.json.error.code, reply.json.error.param], [400, 'invalid_request', param], JSON.stringify(body));
  }
  const listed = await server.call('GET', `${base}/reflections?scope=gamma&user=alice`);
  assert.equal(listed.json.data.map((r: any) => r.id), [alices.json.id]);
});

test('POST: the reflection cap holds for memories added by hand', async () => {
  const small = await startManagementServer({ 'max-reflections': '1' });
  try {
    const agent = await small.createAgent('cap-org', 'capped');
    const base = `/v0/orgs/${agent.org_id}/agents/${agent.id}`;
    assert.is((await small.call('POST', `${base}/reflections`, { body: { content: 'The first memory fits', kind: 'factual' } })).status, 201);
    const over = await small.call('POST', `${base}/reflections`, { body: { content: 'A second, different memory does not', kind: 'procedural' } });
    assert.is(over.status, 409);
    assert.match(over.json.error.message, /ENGRAM_MAX_REFLECTIONS/);
    assert.is(await small.deps.reflections.count(agent.id), 1);
  } finally {
    await small.close();
  }
});

test('PUT replaces content, kind and topic: same id and origin, re-embedded, redacted, marked as edited', async ({ server, agent, base }) => {
  const [learnt] = await server.seed(agent.id, [
    { kind: 'factual', content: 'The frontend is written in Svelte', topic: 'frontend', tags: ['ui'], origin: { conversation: 'conv_1', turn: 2, role: 'assistant' } },
  ]);
  const reply = await server.call('PUT', `${base}/reflections/${learnt.id}`, {
    body: { content: 'The frontend is written in React; its token is ghp_abcdefghijklmnopqrstuvwxyz0123456789', kind: 'procedural', topic: 'web ui' },
  });
  assert.is(reply.status, 200, JSON.stringify(reply.json));
  assert.is(reply.json.id, learnt.id);
  assert.equal(reply.json.origin, { conversation_id: 'conv_1', turn: 2, role: 'assistant' });
  assert.equal([reply.json.kind, reply.json.topic], ['procedural', 'web ui']);
  assert.not.match(reply.json.content, /ghp_abcdef/);
  assert.equal(reply.json.tags, ['edited-by-hand'], 'PUT replaces the tags too');
  assert.is(reply.json.tags_by, null, 'no subject tags left: no author');
  const search = await server.call('GET', `${base}/reflections?q=react`);
  assert.is(search.json.data[0].id, learnt.id, 'the new content is what is found');
  assert.ok(search.json.data[0].vector_score > 0.2);

  const partial = await server.call('PUT', `${base}/reflections/${learnt.id}`, { body: { content: 'Only content' } });
  assert.equal([partial.status, partial.json.error.param], [400, 'kind']);
  assert.is((await server.call('PUT', `${base}/reflections/ref_nope`, { body: { content: 'a b', kind: 'factual', topic: 't' } })).status, 404);
});

test('new tags keep the markers Engram set, and a marker given among them is not taken', async ({ server, base }) => {
  const added = await server.call('POST', `${base}/reflections`, { body: { content: 'Backups run nightly at 02:00 UTC', kind: 'factual', topic: 'ops', tags: ['backups'] } });
  assert.equal(added.json.tags, ['backups', 'added-by-hand']);
  const retagged = await server.call('PATCH', `${base}/reflections/${added.json.id}`, { body: { tags: ['cron', 'edited-by-hand'] } });
  assert.is(retagged.status, 200, JSON.stringify(retagged.json));
  assert.equal(retagged.json.tags, ['cron', 'added-by-hand', 'edited-by-hand'], 'still added by hand; edited by Engram, not by the typed tag');
  const seeded = await server.call('PATCH', `${base}/reflections/${added.json.id}`, { body: { tags: ['added-by-hand'] } });
  assert.equal([seeded.json.tags, seeded.json.tags_by], [['added-by-hand', 'edited-by-hand'], null], 'a marker typed alone is no subject tag');
});

test('PATCH of one field keeps the rest and the tags, adding the edit mark once', async ({ server, agent, base }) => {
  const [seeded] = await server.seed(agent.id, [{ kind: 'factual', content: 'Logs go to Loki', topic: 'ops', tags: ['logs'] }]);
  const once = await server.call('PATCH', `${base}/reflections/${seeded.id}`, { body: { topic: 'Observability' } });
  assert.is(once.status, 200);
  assert.equal([once.json.content, once.json.topic, once.json.tags], ['Logs go to Loki', 'observability', ['logs', 'edited-by-hand']]);
  const twice = await server.call('PATCH', `${base}/reflections/${seeded.id}`, { body: { kind: 'procedural' } });
  assert.equal(twice.json.tags, ['logs', 'edited-by-hand']);
});

test('tags_by: a person who gives tags writes them; an edit without tags keeps the author', async ({ server, agent, base }) => {
  const [learnt] = await server.seed(agent.id, [{ kind: 'factual', content: 'Metrics go to Prometheus', topic: 'ops', tags: ['metrics'], tagsBy: 'extraction' }]);
  const topicOnly = await server.call('PATCH', `${base}/reflections/${learnt.id}`, { body: { topic: 'monitoring' } });
  assert.is(topicOnly.json.tags_by, 'extraction', 'tags not given: unchanged');
  const retagged = await server.call('PATCH', `${base}/reflections/${learnt.id}`, { body: { tags: ['metrics', 'dashboards'] } });
  assert.is(retagged.json.tags_by, 'person');
  const cleared = await server.call('PATCH', `${base}/reflections/${learnt.id}`, { body: { tags: [] } });
  assert.equal([cleared.json.tags, cleared.json.tags_by], [['edited-by-hand'], null]);
  const untagged = await server.call('GET', `${base}/reflections/${learnt.id}`);
  assert.is(untagged.json.tags_by, null);
});

test('export streams every reflection as JSON lines or one JSON document; the agent token may export', async ({ server, agent, base }) => {
  // More than one page of the export's reads.
  const many = Array.from({ length: 1203 - (await server.deps.reflections.count(agent.id)) }, (_, i) => ({
    kind: 'factual' as const,
    content: `Bulk fact number ${i} about service ${i % 17}`,
    topic: `bulk ${i % 5}`,
  }));
  await server.seed(agent.id, many);
  const total = await server.deps.reflections.count(agent.id);
  assert.is(total, 1203);

  const response = await fetch(`${server.url}${base}/reflections/export`, { headers: { authorization: `Bearer ${agent.token}` } });
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /application\/x-ndjson/);
  assert.is(response.headers.get('content-length'), null, 'streamed, not buffered whole');
  const lines = (await response.text()).trimEnd().split('\n').map((line) => JSON.parse(line));
  assert.is(lines.length, total);
  assert.is(new Set(lines.map((r) => r.id)).size, total, 'each once');
  assert.ok(lines.every((r) => r.agent_id === agent.id && typeof r.content === 'string'));

  const json = await server.call('GET', `${base}/reflections/export?format=json`);
  assert.is(json.status, 200);
  assert.is(json.json.agent_id, agent.id);
  assert.equal(json.json.data.map((r: any) => r.id), lines.map((r) => r.id));

  const bad = await server.call('GET', `${base}/reflections/export?format=csv`);
  assert.equal([bad.status, bad.json.error.param], [400, 'format']);
  const other = await server.createAgent('write-org', 'other');
  assert.is((await server.call('GET', `${base}/reflections/export`, { token: other.token })).status, 401, "another agent's token");
  assert.is((await server.call('POST', `${base}/reflections`, { token: agent.token, body: { content: 'x y', kind: 'factual' } })).status, 403, 'an agent token only reads');
});

test.run();
