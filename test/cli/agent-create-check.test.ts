/**
 * `engram agent create` asks the upstream before creating anything, as the dashboard's
 * "Test connection" does (`POST /v0/upstream-check`): a real CLI process, a real server,
 * a scripted provider that wants one key, and a port nothing listens on.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../support/cli.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN, startManagementServer, type ManagementServer } from '../http/management-server.js';

const KEY = 'sk-check-good-0123456789';

interface Context {
  server: ManagementServer;
  upstream: ScriptedUpstream;
  remote: string[];
  closedPort: number;
}

const test = suite<Context>('agent create checks the upstream');

test.before(async (context) => {
  context.server = await startManagementServer();
  context.upstream = await startScriptedUpstream({ apiKey: KEY });
  context.remote = ['--url', context.server.url, '--admin-token', ADMIN];
  const closed = http.createServer();
  await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
  context.closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((done) => closed.close(() => done()));
});

test.after(async ({ server, upstream }) => {
  await upstream.close();
  await server.close();
});

/** The org `name` and its agents as the admin sees them: nothing, when creation was refused. */
async function orgExists(server: ManagementServer, name: string): Promise<boolean> {
  return (await server.call('GET', `/v0/orgs/${name}`)).status === 200;
}

test('an upstream that answers with the key: created, the short base URL printed with the per-agent fields', async ({ server, upstream, remote }) => {
  upstream.reset();
  const run = await runCli(['agent', 'create', '--org', 'good', '--name', 'bot', '--upstream', upstream.url, '--upstream-key', KEY, '--json', ...remote]);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stderr, /Upstream check: Connected: http:\/\/127\.0\.0\.1:\d+ answered 200 OK and lists \d+ models?\./);
  const json = JSON.parse(run.stdout);
  assert.equal(Object.keys(json).sort(), ['agent_id', 'base_url', 'mcp_url', 'org_id', 'short_base_url', 'token'].sort());
  assert.is(json.short_base_url, `${server.url}/v1`);
  assert.is(json.base_url, `${server.url}/v0/orgs/${json.org_id}/agents/${json.agent_id}`);
  // The check asked the provider's model list with the key given.
  const asked = upstream.requests.find((request) => request.method === 'GET' && request.path === '/v1/models');
  assert.ok(asked, 'GET /v1/models reached the upstream');
  assert.is(asked!.headers.authorization, `Bearer ${KEY}`);

  const human = await runCli(['agent', 'create', '--org', 'good', '--name', 'person', '--upstream', upstream.url, '--upstream-key', KEY, ...remote]);
  assert.is(human.code, 0, human.stderr);
  const short = human.stdout.indexOf(`${server.url}/v1\n`);
  const own = human.stdout.indexOf(`${server.url}/v0/orgs/`);
  assert.ok(short >= 0 && own > short, `the short URL comes first:\n${human.stdout}`);
});

test('nothing listening: no org, no agent, and the message names the refused address', async ({ server, remote, closedPort }) => {
  const run = await runCli(['agent', 'create', '--org', 'refused', '--name', 'bot', '--upstream', `http://127.0.0.1:${closedPort}`, ...remote]);
  assert.is(run.code, 1);
  assert.match(run.stderr, new RegExp(`The upstream check failed: Could not connect to http://127\\.0\\.0\\.1:${closedPort}: connection refused\\.`));
  assert.match(run.stderr, /No agent was created.*--no-check/s);
  assert.is(run.stdout, '');
  assert.not.ok(await orgExists(server, 'refused'), 'the org was not created either');
});

test('a key the upstream refuses: its 401 is named, with what to check', async ({ server, upstream, remote }) => {
  const run = await runCli(['agent', 'create', '--org', 'badkey', '--name', 'bot', '--upstream', upstream.url, '--upstream-key', 'sk-wrong-key-0123456789', ...remote]);
  assert.is(run.code, 1);
  assert.match(run.stderr, /The upstream check failed: http:\/\/127\.0\.0\.1:\d+ answered 401 Unauthorized\. Check the API key\./);
  assert.not.match(run.stderr, /sk-wrong-key|Incorrect API key/, "neither the key nor the upstream's text is echoed");
  assert.not.ok(await orgExists(server, 'badkey'));
});

test('a base URL whose path has no API: the 404 names the path asked', async ({ server, upstream, remote }) => {
  const run = await runCli(['agent', 'create', '--org', 'badpath', '--name', 'bot', '--upstream', `${upstream.url}/proxy`, '--upstream-key', KEY, ...remote]);
  assert.is(run.code, 1);
  assert.match(run.stderr, /answered 404 Not Found at \/proxy\/v1\/models\. Check the base URL/);
  assert.not.ok(await orgExists(server, 'badpath'));
});

test('--no-check creates the agent without asking', async ({ server, remote, closedPort }) => {
  const run = await runCli(['agent', 'create', '--org', 'unchecked', '--name', 'bot', '--upstream', `http://127.0.0.1:${closedPort}`, '--no-check', '--json', ...remote]);
  assert.is(run.code, 0, run.stderr);
  assert.not.match(run.stderr, /Upstream check/);
  const agent = await server.call('GET', `/v0/orgs/unchecked/agents/${JSON.parse(run.stdout).agent_id}`);
  assert.is(agent.status, 200);
});

test('the management API answers the check itself, and refuses a body that is not an upstream', async ({ server, upstream, closedPort }) => {
  const good = await server.call('POST', '/v0/upstream-check', { body: { upstream: { base_url: `${upstream.url}/v1`, api_key: KEY } } });
  assert.is(good.status, 200);
  assert.is(good.json.ok, true, 'a pasted /v1 is dropped as saving the agent would');
  const refused = await server.call('POST', '/v0/upstream-check', { body: { upstream: { base_url: `http://127.0.0.1:${closedPort}` } } });
  assert.equal(refused.json, { ok: false, summary: `Could not connect to http://127.0.0.1:${closedPort}: connection refused.` });
  const invalid = await server.call('POST', '/v0/upstream-check', { body: { upstream: { base_url: 'ftp://x' } } });
  assert.is(invalid.status, 400);
  assert.is(invalid.json.error.code, 'invalid_request');
  const anonymous = await server.call('POST', '/v0/upstream-check', { token: null, body: { upstream: { base_url: upstream.url } } });
  assert.is(anonymous.status, 401);
});

test.run();
