/**
 * Nothing without content is stored, whichever way it comes: an extraction that proposes
 * a fragment ("The s") stores the rest and counts the fragment dropped; MCP `remember`
 * answers a tool error saying what is wrong; the management API (and so the CLI and the
 * dashboard, which write through it) answers 400 in its error envelope, for an addition
 * and for an edit. A real Engram on its SQLite file, the MCP SDK's client, the CLI.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN_TOKEN, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

const FRAGMENT = 'The s';
const WHY = /a reflection needs at least 3 words, 2 of them content words .*: it has 2 words, no content words/;

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('reflections without content');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

const reflectionsPath = (agent: TestAgent) => `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`;

async function droppedNoContent(engram: TestEngram): Promise<number> {
  const text = await (await fetch(`${engram.url}/metrics`)).text();
  const line = text.split('\n').find((sample) => sample.startsWith('engram_reflections_dropped_total{reason="no_content"}'));
  assert.ok(line, 'the series exists from the start');
  return Number(line.split(' ').at(-1));
}

test('extraction stores what says something and drops, and counts, a fragment', async ({ upstream, engram, agent }) => {
  assert.is(await droppedNoContent(engram), 0);
  upstream.setExtractor(() => [
    { kind: 'factual', content: FRAGMENT, topic: 'cut' },
    { kind: 'factual', content: 'Staging runs on port 8443.', topic: 'staging', tags: ['staging port'] },
  ]);
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Remember: staging runs on port 8443.' }] }),
  });
  await answered.text();
  await engram.waitForReflections(agent, 1);
  // Idle: the job is done, so nothing more can be stored.
  await idle(engram);
  assert.equal((await engram.reflections(agent)).map((r: { content: string }) => r.content), ['Staging runs on port 8443.']);
  assert.is(await droppedNoContent(engram), 1);
});

test('MCP remember: a fragment is a tool error saying what is wrong, and nothing is stored', async ({ engram, agent }) => {
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  try {
    const before = (await engram.reflections(agent)).length;
    const refused = await client.callTool({ name: 'remember', arguments: { content: FRAGMENT, kind: 'factual' } });
    assert.is(refused.isError, true);
    const [text] = refused.content as Array<{ type: string; text: string }>;
    assert.match(text.text, /^Not remembered: /);
    assert.match(text.text, WHY);
    assert.equal((refused.structuredContent as { stored: boolean }).stored, false);
    assert.is((await engram.reflections(agent)).length, before);

    const kept = await client.callTool({ name: 'remember', arguments: { content: 'Releases are cut on Thursdays.', kind: 'procedural' } });
    assert.not.ok(kept.isError, JSON.stringify(kept));
  } finally {
    await client.close();
  }
});

test('management API: adding or editing to a fragment is a 400 naming content and why; the CLI says it too', async ({ engram, agent }) => {
  const path = reflectionsPath(agent);
  const added = await engram.api('POST', path, { content: FRAGMENT, kind: 'factual' });
  assert.is(added.status, 400);
  assert.equal([added.json.error.code, added.json.error.type, added.json.error.param], ['invalid_request', 'invalid_request_error', 'content']);
  assert.match(added.json.error.message, /^`content` says too little to keep: /);
  assert.match(added.json.error.message, WHY);

  const stored = await engram.api('POST', path, { content: 'The nightly backup runs at 02:00 UTC.', kind: 'factual' });
  assert.is(stored.status, 201);
  for (const method of ['PATCH', 'PUT']) {
    const edited = await engram.api(method, `${path}/${stored.json.id}`, { content: FRAGMENT, kind: 'factual', topic: 'backup' });
    assert.equal([edited.status, edited.json.error.param], [400, 'content'], method);
    assert.match(edited.json.error.message, WHY);
  }
  assert.is((await engram.api('GET', `${path}/${stored.json.id}`)).json.content, 'The nightly backup runs at 02:00 UTC.', 'left as it was');

  const cli = await runCli(['reflections', 'add', FRAGMENT, '--kind', 'factual', '--org', agent.orgId, '--agent', agent.agentId, '--url', engram.url], {
    env: cleanEnv({ ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN }),
  });
  assert.is.not(cli.code, 0);
  assert.match(cli.stderr, 'says too little to keep');
});

test.run();
