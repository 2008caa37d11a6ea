/** Who may call what on the management API: admin everywhere, an agent only reads its own. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN, startManagementServer, type ManagementServer } from './management-server.js';

interface Context {
  server: ManagementServer;
  agent: any;
  other: any;
  reflectionId: string;
}

const test = suite<Context>('management auth');

test.before(async (context) => {
  context.server = await startManagementServer();
  context.agent = await context.server.createAgent('auth-org', 'alpha');
  context.other = await context.server.createAgent('auth-org', 'beta');
  const [reflection] = await context.server.seed(context.agent.id, [{ kind: 'factual', content: 'The build uses pnpm workspaces', topic: 'build' }]);
  context.reflectionId = reflection.id;
});

test.after(async ({ server }) => server.close());

const agentPath = (agent: any): string => `/v0/orgs/${agent.org_id}/agents/${agent.id}`;

function assertEnvelope(json: any, code: string): void {
  assert.type(json.error, 'object');
  assert.is(json.error.code, code);
  assert.type(json.error.message, 'string');
  assert.type(json.error.type, 'string');
  assert.ok('param' in json.error);
}

test('a missing or wrong token gets 401 in the envelope, with a bearer challenge', async ({ server }) => {
  for (const token of [null, 'wrong', 'egm_not_a_real_token_0123456789abcdef']) {
    const reply = await server.call('GET', '/v0/orgs', { token });
    assert.is(reply.status, 401, `token ${token}`);
    assertEnvelope(reply.json, 'unauthorized');
    assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer/);
  }
});

test("a 401 says which token the route takes: the admin token, or on an agent's reads its own token too", async ({ server, agent, other }) => {
  const adminOnly = /This needs the admin token \(ENGRAM_ADMIN_TOKEN, or the file <data dir>\/admin-token; the CLI reads it there\); an agent token does not open it/;
  const agentReads = /This needs the admin token \(ENGRAM_ADMIN_TOKEN, or the file <data dir>\/admin-token; the CLI reads it there\) or this agent's own access token \(egm_…\)/;

  const none = await server.call('GET', '/v0/orgs', { token: null });
  assert.match(none.json.error.message, /^No token in the request\. /);
  assert.match(none.json.error.message, adminOnly);
  assert.match(none.json.error.message, /Authorization: Bearer <token> or X-Engram-Api-Key/);

  const wrong = await server.call('POST', '/v0/orgs', { token: 'wrong', body: { name: 'x' } });
  assert.match(wrong.json.error.message, /^The token sent is not accepted here\. /);
  assert.match(wrong.json.error.message, adminOnly);
  // An agent token on an admin route of its own agent is told the same (not the proxy's "send the agent token").
  const patch = await server.call('PATCH', agentPath(agent), { token: null, body: { name: 'renamed' } });
  assert.match(patch.json.error.message, adminOnly);

  const reads = await server.call('GET', `${agentPath(agent)}/reflections`, { token: null });
  assert.is(reads.status, 401);
  assert.match(reads.json.error.message, agentReads);
  const index = await server.call('GET', `${agentPath(agent)}/index`, { token: 'wrong' });
  assert.match(index.json.error.message, agentReads);

  // No oracle: another agent's live token, a made-up one and a missing agent read the same.
  const othersToken = await server.call('GET', `${agentPath(agent)}/reflections`, { token: other.token });
  const madeUp = await server.call('GET', `${agentPath(agent)}/reflections`, { token: 'egm_not_a_real_token_0123456789abcdef' });
  const noAgent = await server.call('GET', `/v0/orgs/${agent.org_id}/agents/no-such-agent/reflections`, { token: other.token });
  assert.is(othersToken.json.error.message, madeUp.json.error.message);
  assert.is(noAgent.json.error.message, madeUp.json.error.message);

  // A provider key sent by mistake is named, as the proxy names it.
  const providerKey = await server.call('GET', `${agentPath(agent)}/reflections`, { token: 'sk-proj-abcdefghijklmnop' });
  assert.match(providerKey.json.error.message, /not accepted here \(This looks like an OpenAI key/);
});

test('401 comes before the body is looked at', async ({ server }) => {
  const reply = await server.call('POST', '/v0/orgs', { token: null, raw: '{not json' });
  assert.is(reply.status, 401);
});

test('the admin token works as bearer and as X-Engram-Api-Key', async ({ server }) => {
  assert.is((await server.call('GET', '/v0/orgs')).status, 200);
  const viaHeader = await server.call('GET', '/v0/orgs', { token: null, headers: { 'x-engram-api-key': ADMIN } });
  assert.is(viaHeader.status, 200);
});

test('an agent token reads its own agent, reflections and index', async ({ server, agent, reflectionId }) => {
  const token = agent.token;
  const own = await server.call('GET', agentPath(agent), { token });
  assert.is(own.status, 200);
  assert.is(own.json.id, agent.id);
  assert.is(own.json.token, undefined);

  const byName = await server.call('GET', '/v0/orgs/auth-org/agents/alpha', { token });
  assert.is(byName.status, 200, 'names resolve for agent tokens too');

  const list = await server.call('GET', `${agentPath(agent)}/reflections`, { token });
  assert.is(list.status, 200);
  assert.is(list.json.data.length, 1);
  const search = await server.call('GET', `${agentPath(agent)}/reflections?q=pnpm`, { token });
  assert.is(search.status, 200);
  const one = await server.call('GET', `${agentPath(agent)}/reflections/${reflectionId}`, { token });
  assert.is(one.status, 200);
  const index = await server.call('GET', `${agentPath(agent)}/index`, { token });
  assert.is(index.status, 200);

  const viaServiceHeader = await server.call('GET', agentPath(agent), { token: null, headers: { 'x-service-api-key': token } });
  assert.is(viaServiceHeader.status, 200);
});

test('an agent token may not change its own agent: 403', async ({ server, agent, reflectionId }) => {
  const token = agent.token;
  const attempts: Array<[string, string, unknown?]> = [
    ['PATCH', agentPath(agent), { name: 'renamed' }],
    ['DELETE', agentPath(agent)],
    ['GET', `${agentPath(agent)}/tokens`],
    ['POST', `${agentPath(agent)}/tokens`, {}],
    ['PATCH', `${agentPath(agent)}/reflections/${reflectionId}`, { content: 'changed' }],
    ['DELETE', `${agentPath(agent)}/reflections/${reflectionId}`],
    ['DELETE', `${agentPath(agent)}/reflections?conversation=conv_x`],
  ];
  for (const [method, pathname, body] of attempts) {
    const reply = await server.call(method, pathname, { token, body });
    assert.is(reply.status, 403, `${method} ${pathname}`);
    assertEnvelope(reply.json, 'forbidden');
  }
  assert.is((await server.call('GET', `${agentPath(agent)}/reflections/${reflectionId}`)).json.content, 'The build uses pnpm workspaces');
});

test('an agent token gets 401 anywhere outside its own agent', async ({ server, agent, other }) => {
  const token = agent.token;
  const attempts: Array<[string, string]> = [
    ['GET', '/v0/orgs'],
    ['GET', `/v0/orgs/${agent.org_id}`],
    ['GET', `/v0/orgs/${agent.org_id}/agents`],
    ['POST', '/v0/orgs'],
    ['GET', agentPath(other)],
    ['GET', `${agentPath(other)}/reflections`],
    ['GET', `${agentPath(other)}/index`],
    ['GET', `/v0/orgs/no-such-org/agents/${agent.id}`],
    ['GET', `/v0/orgs/${agent.org_id}/agents/no-such-agent`],
  ];
  for (const [method, pathname] of attempts) {
    const reply = await server.call(method, pathname, { token });
    assert.is(reply.status, 401, `${method} ${pathname}`);
    assertEnvelope(reply.json, 'unauthorized');
  }
});

test('a revoked token stops working at once', async ({ server }) => {
  const agent = await server.createAgent('auth-org', 'gamma');
  assert.is((await server.call('GET', agentPath(agent), { token: agent.token })).status, 200);
  const { json: tokens } = await server.call('GET', `${agentPath(agent)}/tokens`);
  const revoked = await server.call('DELETE', `${agentPath(agent)}/tokens/${tokens.data[0].id}`);
  assert.is(revoked.status, 200);
  assert.equal(revoked.json, { id: tokens.data[0].id, revoked: true });
  const after = await server.call('GET', agentPath(agent), { token: agent.token });
  assert.is(after.status, 401);
  assert.match(after.json.error.message, /\(This token was revoked; create a new one with `engram token create`\)/);
});

test('the auth hook stays inside the management plugin', async ({ server, agent }) => {
  const reply = await server.call('GET', `${agentPath(agent)}/v1/ping`, { token: null });
  assert.is(reply.status, 200);
  assert.equal(reply.json, { pong: true });
});

test.run();
