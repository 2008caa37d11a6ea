/**
 * `engram export` / `engram import`: an embedded deployment moved onto NATS (control
 * plane and bus) with everything a user cannot rebuild: its agents keep their ids and
 * sealed upstream keys, tokens keep working, reflections keep their vectors. Real CLI
 * processes, a real nats-server, the real SQLite files.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { startEngram, type TestAgent } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';

interface Context {
  nats: NatsServer;
  upstream: ScriptedUpstream;
  dir: string;
}
const test = suite<Context>('export and import');

test.before(async (context) => {
  context.nats = await startNatsServer();
  context.upstream = await startScriptedUpstream();
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-archive-'));
});
test.after(async ({ nats, upstream, dir }) => {
  await upstream?.close();
  await nats?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const mcp = async (agent: TestAgent) => {
  const client = new Client({ name: 'archive-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  return client;
};

test('an embedded deployment moves onto NATS: ids, sealed keys, tokens and vectors survive; a re-import changes nothing', async ({ nats, upstream, dir }) => {
  const embedded = path.join(dir, 'embedded');
  const engram = await startEngram({}, embedded);
  const agent = await engram.createAgent(upstream.url, { name: 'mover', upstreamKey: 'sk-upstream-moved-with-the-archive-0000' });
  const client = await mcp(agent);
  const facts = ['The staging database is pg-stage-3 on port 6543.', 'Run npm run migrate before the integration tests.'];
  for (const content of facts) assert.not.ok((await client.callTool({ name: 'remember', arguments: { content, kind: 'factual', topic: 'ops' } })).isError);
  await client.close();
  const before = await engram.reflections(agent);
  // Who set the upstream travels with the agent (a dashboard user's stays under the users' address policy).
  await engram.running.deps.control.directory.updateAgent(agent.orgId, agent.agentId, (current) => ({
    ...current,
    agent: { ...current.agent, upstream: { ...current.agent.upstream, setBy: 'user' } },
  }));
  await engram.close();

  const archive = path.join(dir, 'engram.jsonl');
  const exported = await runCli(['export', '--data-dir', embedded, '--out', archive]);
  assert.is(exported.code, 0, exported.stderr);
  assert.match(exported.stderr, /Exported 1 organisations, 1 agents, 1 tokens, 2 reflections/);
  const text = readFileSync(archive, 'utf8');
  assert.not.match(text, 'sk-upstream-moved-with-the-archive', 'the upstream key stays sealed');
  assert.not.match(text, agent.token, 'tokens are hashes');
  assert.match(text.split('\n')[0], /"format":"engram-archive","version":4/);

  const secretKey = readFileSync(path.join(embedded, 'secret-key'), 'utf8').trim();
  const distributed = path.join(dir, 'distributed');
  const settings = ['--data-dir', distributed, '--nats-url', nats.url, '--nats-prefix', 'moved', '--secret-key', secretKey];
  const imported = await runCli(['import', archive, ...settings, '--json']);
  assert.is(imported.code, 0, imported.stderr);
  const result = JSON.parse(imported.stdout);
  assert.equal(result.imported, { orgs: 1, agents: 1, tokens: 1, reflections: 2, users: 0, clients: 0 });

  const again = await runCli(['import', archive, ...settings, '--json']);
  assert.is(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).skipped, { orgs: 1, agents: 1, tokens: 1, reflections: 0, users: 0, clients: 0 }, 'present records are skipped');

  // The agent is a dashboard user's now, at the loopback scripted upstream: this operator allows that.
  const moved = await startEngram({ 'nats-url': nats.url, 'nats-prefix': 'moved', 'secret-key': secretKey, 'dashboard-upstream-allow-private': 'true' }, distributed);
  try {
    assert.match(moved.running.engines.control, /^nats /);
    assert.is((await moved.running.deps.control.directory.getAgent(agent.orgId, agent.agentId))?.upstream.setBy, 'user', 'who set the upstream came along');
    const there: TestAgent = { ...agent, baseUrl: `${moved.url}/v0/orgs/${agent.orgId}/agents/${agent.agentId}` };
    const after = await moved.reflections(there);
    assert.equal(after.map((r: any) => [r.id, r.content, r.created_at]).sort(), before.map((r: any) => [r.id, r.content, r.created_at]).sort());

    // The old token still works, and the upstream gets the agent's own (unsealed) key.
    upstream.enqueue({ type: 'text', text: 'pg-stage-3, port 6543.' });
    const answered = await fetch(`${there.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Which port does the staging database listen on?' }] }),
    });
    assert.is(answered.status, 200);
    assert.is(answered.headers.get('x-engram-injected'), '1', 'the imported vectors are searched');
    await answered.text();
    assert.is(upstream.conversationRequests().at(-1)!.headers.authorization, 'Bearer sk-upstream-moved-with-the-archive-0000');
  } finally {
    await moved.close();
  }
});

test('an import with another secret key is refused before anything is written; not an archive is refused', async ({ nats, dir }) => {
  const source = path.join(dir, 'source');
  const engram = await startEngram({}, source);
  await engram.createAgent('http://127.0.0.1:9', { name: 'keyed' });
  await engram.close();
  const archive = path.join(dir, 'keyed.jsonl');
  assert.is((await runCli(['export', '--data-dir', source, '--out', archive])).code, 0);

  const target = path.join(dir, 'wrong-key');
  const refused = await runCli(['import', archive, '--data-dir', target, '--nats-url', nats.url, '--nats-prefix', 'wrongkey', '--secret-key', 'ef'.repeat(32)]);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /secret key does not open agent "keyed"/);
  const empty = await startEngram({ 'nats-url': nats.url, 'nats-prefix': 'wrongkey', 'secret-key': 'ef'.repeat(32) }, target);
  try {
    assert.equal((await empty.api('GET', '/v0/orgs')).json.data, [], 'nothing written');
  } finally {
    await empty.close();
  }

  const notArchive = path.join(dir, 'not.jsonl');
  writeFileSync(notArchive, '{"hello":"world"}\n');
  const wrong = await runCli(['import', notArchive, '--data-dir', target], { env: cleanEnv() });
  assert.is(wrong.code, 1);
  assert.match(wrong.stderr, /not an Engram archive/);
});

test.run();
