/**
 * Dashboard users and the operator's network, on a real Engram over HTTP, through the
 * forms: with sign-up open on a listener others can reach, a user can neither save nor
 * test an upstream at a loopback, private or link-local address, and is told what to do; the operator's own agents still reach loopback; when the
 * operator allows it, the connection test says the status and a short reason and never
 * the upstream's text; and a user's agent saved while allowed is refused on every request
 * once the operator turns it off, until the operator re-points it with the admin token.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession, shownText } from '../support/web-session.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

/** What an internal service answers; it must never reach the page. */
const MARKER = 'INTERNAL-SECRET-7f3a9c';

interface Context {
  upstream: ScriptedUpstream;
  /** A service on loopback answering `/v1/models` with `answer` and the marker in its body. */
  internal: http.Server;
  internalUrl: string;
  internalHits: number;
  answer: { status: number; body: string };
  engrams: TestEngram[];
  /** The data dir the allowing Engram and then the strict one run on. */
  dataDir: string;
}

const test = suite<Context>("dashboard users and the operator's network");

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engrams = [];
  context.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-test-'));
  context.internalHits = 0;
  context.answer = { status: 401, body: JSON.stringify({ error: { message: `no access: ${MARKER}` } }) };
  context.internal = http.createServer((_request, response) => {
    context.internalHits++;
    response.writeHead(context.answer.status, { 'content-type': 'application/json' }).end(context.answer.body);
  });
  await new Promise<void>((done) => context.internal.listen(0, '127.0.0.1', done));
  context.internalUrl = `http://127.0.0.1:${(context.internal.address() as AddressInfo).port}`;
});

test.after(async ({ engrams, upstream, internal, dataDir }) => {
  for (const engram of engrams ?? []) await engram.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  await upstream?.close();
  internal?.close();
});

/** A signed-up user with an organisation: the session and `/orgs/<org>/agents/new`. */
async function newUser(engram: TestEngram, email: string): Promise<{ web: WebSession; orgId: string; newAgent: string }> {
  const web = new WebSession(engram.url);
  const signed = await web.signIn(email, 'a long enough passphrase');
  assert.is(signed.status, 303, 'signed up');
  await web.get('/orgs/new');
  const org = await web.post('/orgs/new', { name: `org-${email.split('@')[0]}` });
  const newAgent = org.location!;
  return { web, orgId: newAgent.split('/')[2]!, newAgent };
}

const agentFields = (baseUrl: string, intent: 'create' | 'check') => ({ intent, name: 'mine', base_url: baseUrl, api_key: 'sk-x-1234567890', headers: '' });

/** Listening on every address, not only this machine's: with sign-up open, anyone who reaches it may sign up. */
const EXPOSED = { host: '0.0.0.0' };

test('sign-up open on an exposed listener: a dashboard user cannot save or test an upstream at loopback, private or link-local addresses', async (context) => {
  const engram = await startEngram(EXPOSED);
  context.engrams.push(engram);
  const { web, orgId, newAgent } = await newUser(engram, 'mallory@example.com');
  const port = new URL(context.internalUrl).port;
  const refused: Array<[string, RegExp]> = [
    [context.internalUrl, /127\.0\.0\.1 is a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/],
    [`http://localhost:${port}`, /localhost is a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/],
    [`http://[::1]:${port}`, /::1 is a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/],
    ['http://10.1.2.3:8080', /10\.1\.2\.3 is a private address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/],
    ['http://192.168.1.20', /192\.168\.1\.20 is a private address/],
    ['http://169.254.10.1', /169\.254\.10\.1 is a link-local address/],
  ];
  for (const [url, reason] of refused) {
    await web.get(newAgent);
    const saved = await web.post(newAgent, agentFields(url, 'create'));
    assert.is(saved.status, 400, url);
    assert.match(saved.text, /is refused: /, url);
    assert.match(saved.text, reason, url);

    await web.get(newAgent);
    const tested = await web.post(newAgent, agentFields(url, 'check'));
    assert.match(shownText(tested.text), /Could not connect to .*: refused: /, url);
    assert.match(shownText(tested.text), reason, url);
    const htmx = await web.post(`/orgs/${orgId}/agents/check`, agentFields(url, 'check'), { 'hx-request': 'true' });
    assert.match(shownText(htmx.text), reason, url);
    assert.not.match(htmx.text + tested.text + saved.text, MARKER, url);
  }
  assert.equal(await engram.running.deps.control.directory.listAgents(orgId), [], 'no agent was saved');
  assert.is(context.internalHits, 0, 'nothing reached the internal service');
});

test("sign-up open on an exposed listener: the operator's own agent at loopback still works", async ({ engrams, upstream }) => {
  const engram = engrams[0]!;
  const agent = await engram.createAgent(upstream.url);
  assert.is((await engram.running.deps.control.directory.getAgent(agent.orgId, agent.agentId))?.upstream.setBy, 'operator');
  const answer = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }),
  });
  assert.is(answer.status, 200);
  assert.match(await answer.text(), 'echo: hello there');
});

test("allowed by the operator: the connection test says the status and a short reason, never the upstream's text", async (context) => {
  const engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' }, context.dataDir);
  context.engrams.push(engram);
  const { web, newAgent } = await newUser(engram, 'ada@example.com');
  const check = async (url: string): Promise<string> => {
    await web.get(newAgent);
    const page = await web.post(newAgent, agentFields(url, 'check'));
    assert.not.match(page.text, MARKER, 'the upstream body is never shown');
    return shownText(page.text);
  };
  context.answer = { status: 401, body: JSON.stringify({ error: { message: `no access: ${MARKER}` } }) };
  assert.match(await check(context.internalUrl), /answered 401 Unauthorized\. Check the API key\./);
  context.answer = { status: 500, body: `<html>${MARKER} stack trace</html>` };
  assert.match(await check(context.internalUrl), /answered 500 Internal Server Error\./);
  context.answer = { status: 200, body: JSON.stringify({ data: [{ id: `${MARKER}-model` }, { id: 'other' }] }) };
  assert.match(await check(context.internalUrl), /Connected: .* answered 200 OK and lists 2 models\./);
  assert.ok(context.internalHits >= 3, 'the internal service was asked');

  const closed = http.createServer();
  await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((done) => closed.close(() => done()));
  assert.match(await check(`http://127.0.0.1:${closedPort}`), /Could not connect to http:\/\/127\.0\.0\.1:\d+: connection refused\./);
});

test("a user's agent saved while allowed is refused on every request once the operator turns it off", async (context) => {
  const allowing = context.engrams[1]!;
  const { web, orgId, newAgent } = await newUser(allowing, 'grace@example.com');
  await web.get(newAgent);
  const saved = await web.post(newAgent, agentFields(context.upstream.url, 'create'));
  assert.is(saved.status, 303, 'saved while the operator allows it');
  const agentId = saved.location!.split('/')[4]!;
  assert.is((await allowing.running.deps.control.directory.getAgent(orgId, agentId))?.upstream.setBy, 'user');
  await web.get(saved.location!);
  const connected = await web.post(saved.location!, { tool: 'codex' });
  const token = /<code class="trunc" id="token"[^>]*>([^<]+)<\/code>/.exec(connected.text)?.[1];
  assert.ok(token, 'a token was shown');
  const ask = (engram: TestEngram) =>
    fetch(`${engram.url}/v0/orgs/${orgId}/agents/${agentId}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'are you there' }] }),
    });
  const allowed = await ask(allowing);
  assert.is(allowed.status, 200, await allowed.clone().text());

  // The same data, the default for open sign-up on an exposed listener: the user's agent may no longer reach loopback.
  await allowing.close();
  context.engrams.splice(1, 1);
  const strict = await startEngram(EXPOSED, context.dataDir);
  context.engrams.push(strict);
  const before = context.upstream.conversationRequests().length;
  const refused = await ask(strict);
  assert.is(refused.status, 502, await refused.clone().text());
  assert.match(await refused.text(), /127\.0\.0\.1 is a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/);
  assert.is(context.upstream.conversationRequests().length, before, 'nothing was relayed');

  // The operator re-points it with the admin token: the URL is now the operator's, and reached.
  const patched = await strict.api('PATCH', `/v0/orgs/${orgId}/agents/${agentId}`, { upstream: { base_url: context.upstream.url } });
  assert.is(patched.status, 200);
  assert.is((await strict.running.deps.control.directory.getAgent(orgId, agentId))?.upstream.setBy, 'operator');
  assert.is((await ask(strict)).status, 200);
});

test.run();
