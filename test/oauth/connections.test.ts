/**
 * The dashboard's list of connected applications: what a user let in, for which agent,
 * and the revoke button that cuts the client off at once (its live access token too, not
 * at expiry). Only the user's own connections are listed or revocable.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { agentFor, codeFor, mcpCall, signUp, tokenRequest, tokensFor } from './support.js';

const test = suite<{ engram: TestEngram }>('connected OAuth applications in the dashboard');

test.before(async (context) => {
  context.engram = await startEngram();
});

test.after(async ({ engram }) => {
  await engram?.close();
});

test('the connections page lists the client and agent; revoking it cuts access at once; another user cannot revoke it', async ({ engram }) => {
  const dana = await signUp(engram, 'dana@example.com');
  const agent = await agentFor(engram, 'dana@example.com', 'dana agent');
  const flow = await codeFor(engram, dana, agent);
  const tokens = await tokensFor(engram, flow);
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200);

  const page = await dana.get('/account/connections');
  assert.is(page.status, 200);
  assert.match(page.text, 'Test client');
  assert.match(page.text, 'dana agent');
  const grantId = tokens.refresh_token.split('.')[0]!;
  assert.match(page.text, `/account/connections/${grantId}/revoke`);

  // Eve's own session and CSRF token, Dana's grant: as absent as a grant that never was.
  const eve = await signUp(engram, 'eve@example.com');
  const eves = await eve.get('/account/connections');
  assert.not.match(eves.text, grantId);
  assert.match(eves.text, 'No application is connected');
  const stolen = await eve.post(`/account/connections/${grantId}/revoke`, {});
  assert.is(stolen.status, 404);
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200, 'still connected');

  const withoutCsrf = await dana.post(`/account/connections/${grantId}/revoke`, { _csrf: '' });
  assert.is(withoutCsrf.status, 403);
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200, 'still connected');

  const revoked = await dana.post(`/account/connections/${grantId}/revoke`, {});
  assert.is(revoked.status, 303);
  assert.is(revoked.location, '/account/connections');
  const call = await mcpCall(engram, tokens.access_token);
  assert.is(call.status, 401, 'the access token is refused before it expires');
  assert.match(call.json.error.message, 'revoked');
  const refreshed = await tokenRequest(engram, { grant_type: 'refresh_token', client_id: flow.clientId, refresh_token: tokens.refresh_token });
  assert.is(refreshed.json.error, 'invalid_grant');
  assert.not.match((await dana.get('/account/connections')).text, grantId);
});

test('an agent deleted after consent takes its connections\' access with it', async ({ engram }) => {
  const frank = await signUp(engram, 'frank@example.com');
  const agent = await agentFor(engram, 'frank@example.com', 'short-lived');
  const tokens = await tokensFor(engram, await codeFor(engram, frank, agent));
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200);
  const deleted = await engram.api('DELETE', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`);
  assert.ok(deleted.status < 300, JSON.stringify(deleted.json));
  const call = await mcpCall(engram, tokens.access_token);
  assert.is(call.status, 401);
  assert.match(call.json.error.message, 'no longer exists');
});

test('a user who is no longer a member of the agent\'s org loses the access they gave', async ({ engram }) => {
  const gina = await signUp(engram, 'gina@example.com');
  const agent = await agentFor(engram, 'gina@example.com', 'team agent');
  const tokens = await tokensFor(engram, await codeFor(engram, gina, agent));
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200);
  const { store } = engram.running.deps.accounts;
  const user = await store.findUserByEmail('gina@example.com');
  await store.updateUser(user!.id, (current) => ({ ...current, orgIds: current.orgIds.filter((id) => id !== agent.orgId) }));
  const call = await mcpCall(engram, tokens.access_token);
  assert.is(call.status, 401);
  assert.match(call.json.error.message, 'no longer yours');
});

test('the connections page needs a session', async ({ engram }) => {
  const response = await fetch(`${engram.url}/account/connections`, { redirect: 'manual' });
  assert.is(response.status, 303);
  assert.is(response.headers.get('location'), `/login?next=${encodeURIComponent('/account/connections')}`);
});

test.run();
