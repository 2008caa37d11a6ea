/**
 * The token endpoint and the protected resource refusing what they must, over real HTTP:
 * a code without its PKCE verifier, a code replayed (which revokes everything issued from
 * it), a token for another resource, an expired or foreign-audience access token, a
 * refresh token replayed (which revokes the family), and RFC 7009 revocation. One user
 * and agent (sign-up is rate-limited per address); each case registers its own client
 * and gets its own grant, so a revoked grant never touches another case.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AuthorizationServer } from '../../src/oauth/authorization-server.js';
import { OAuthError } from '../../src/oauth/oauth-error.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import type { WebSession } from '../support/web-session.js';
import { agentFor, codeFor, exchangeCode, expiredAccessToken, mcpCall, post, signUp, tokenRequest, tokensFor, type Flow, type OwnAgent } from './support.js';

interface Context {
  engram: TestEngram;
  web: WebSession;
  agent: OwnAgent;
}

const test = suite<Context>('OAuth token endpoint and access tokens');

test.before(async (context) => {
  context.engram = await startEngram();
  context.web = await signUp(context.engram, 'tokens@example.com');
  context.agent = await agentFor(context.engram, 'tokens@example.com');
});

test.after(async ({ engram }) => {
  await engram?.close();
});

/** A new client, and a code for it through the authorization page and consent. */
function freshCode({ engram, web, agent }: Context): Promise<Flow> {
  return codeFor(engram, web, agent);
}

function refresh(engram: TestEngram, flow: Flow, refreshToken: string) {
  return tokenRequest(engram, { grant_type: 'refresh_token', client_id: flow.clientId, refresh_token: refreshToken });
}

test("a client's first completed sign-in is recorded (so it is never pruned as unused); registering alone records nothing", async (context) => {
  const { engram } = context;
  const { store } = engram.running.deps.accounts;
  const flow = await freshCode(context);
  assert.is((await store.getClient(flow.clientId))?.signedInAt, null, 'registered and consented, not yet signed in');
  const before = Date.now();
  assert.is((await exchangeCode(engram, flow)).status, 200);
  const signedInAt = (await store.getClient(flow.clientId))?.signedInAt;
  assert.ok(typeof signedInAt === 'number' && signedInAt >= before, String(signedInAt));
});

test('the tokens work: tools/list on /v0/mcp with the access token (GET and DELETE are 405); the token response is not cacheable', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const answer = await exchangeCode(engram, flow);
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  assert.is(answer.headers.get('cache-control'), 'no-store');
  assert.is(answer.json.token_type, 'Bearer');
  assert.is(answer.json.expires_in, 900);
  assert.is(answer.json.scope, 'memory');
  const listed = await mcpCall(engram, answer.json.access_token);
  assert.is(listed.status, 200, JSON.stringify(listed.json));
  assert.ok(listed.json.result.tools.some((tool: { name: string }) => tool.name === 'recall'));
  // Stateless, as the per-agent server: no stream to open, no session to end.
  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(`${engram.url}/v0/mcp`, { method, headers: { authorization: `Bearer ${answer.json.access_token}` } });
    assert.is(response.status, 405, method);
    assert.is(response.headers.get('allow'), 'POST');
  }
});

test('a wrong code_verifier gets invalid_grant and no token', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const answer = await exchangeCode(engram, flow, { code_verifier: 'x'.repeat(43) });
  assert.is(answer.status, 400);
  assert.is(answer.json.error, 'invalid_grant');
  assert.match(answer.json.error_description, 'code_verifier');
  assert.is(answer.json.access_token, undefined);
});

test('a code used twice is refused, and the grant is revoked: its refresh token fails, its access token is refused', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const first = await tokensFor(engram, flow);
  const replay = await exchangeCode(engram, flow);
  assert.is(replay.status, 400);
  assert.is(replay.json.error, 'invalid_grant');
  assert.match(replay.json.error_description, 'already used');

  const refreshed = await refresh(engram, flow, first.refresh_token);
  assert.is(refreshed.status, 400);
  assert.is(refreshed.json.error, 'invalid_grant');
  const call = await mcpCall(engram, first.access_token);
  assert.is(call.status, 401);
  assert.match(call.headers.get('www-authenticate')!, 'error="invalid_token"');
});

test('a token request naming another resource gets invalid_target', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const answer = await exchangeCode(engram, flow, { resource: 'https://elsewhere.example/v0/mcp' });
  assert.is(answer.status, 400);
  assert.is(answer.json.error, 'invalid_target');
});

test('a code exchanged with another redirect_uri or by another client is refused', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const base = { grant_type: 'authorization_code', code: flow.code, code_verifier: flow.verifier };
  const otherUri = await tokenRequest(engram, { ...base, client_id: flow.clientId, redirect_uri: 'http://127.0.0.1:43110/other' });
  assert.is(otherUri.status, 400);
  assert.is(otherUri.json.error, 'invalid_grant');
  const unknownClient = await tokenRequest(engram, { ...base, client_id: 'cli_AAAAAAAAAAAAAAAA', redirect_uri: flow.redirectUri });
  assert.is(unknownClient.status, 401);
  assert.is(unknownClient.json.error, 'invalid_client');
  // Neither attempt spent the code: the client it was issued to still gets its tokens.
  await tokensFor(engram, flow);
});

test('a code older than a minute and a refresh token unused for 30 days are refused', async (context) => {
  const { engram } = context;
  const { accounts, vault, publicUrl } = engram.running.deps;
  const later = (ms: number) => new AuthorizationServer({ store: accounts.store, accounts, vault, issuer: () => publicUrl(), now: () => Date.now() + ms });
  const stale = await freshCode(context);
  const params = { grant_type: 'authorization_code', client_id: stale.clientId, code: stale.code, code_verifier: stale.verifier, redirect_uri: stale.redirectUri };
  const refused = await later(61_000).token(params).then(() => undefined, (error: unknown) => error);
  assert.instance(refused, OAuthError);
  assert.is((refused as OAuthError).code, 'invalid_grant');

  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const old = await later(31 * 24 * 3_600_000)
    .token({ grant_type: 'refresh_token', client_id: flow.clientId, refresh_token: tokens.refresh_token })
    .then(() => undefined, (error: unknown) => error);
  assert.instance(old, OAuthError);
  assert.is((old as OAuthError).code, 'invalid_grant');
  // Refused for its age alone: today the same token still refreshes.
  assert.is((await refresh(engram, flow, tokens.refresh_token)).status, 200);
});

test('an expired access token gets 401 with error="invalid_token" and where to find the resource metadata', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const expired = await expiredAccessToken(engram, tokens.refresh_token);
  const call = await mcpCall(engram, expired);
  assert.is(call.status, 401);
  assert.is(
    call.headers.get('www-authenticate'),
    `Bearer resource_metadata="${engram.url}/.well-known/oauth-protected-resource/v0/mcp", error="invalid_token"`,
  );
  assert.is(call.json.error.code, -32001);
  assert.match(call.json.error.message, 'expired');
  // The live one still works: only the expired token was refused.
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200);
});

test('an access token for another audience, or tampered with, or absent, is refused', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const { accounts, vault, publicUrl } = engram.running.deps;
  const sameKey = new AuthorizationServer({ store: accounts.store, accounts, vault, issuer: () => publicUrl(), now: Date.now });
  const grant = await accounts.store.getGrant(tokens.refresh_token.split('.')[0]!);
  const foreign = (await sameKey.tokens.issue({ ...grant!, resource: 'https://elsewhere.example/v0/mcp' })).token;
  const wrongAudience = await mcpCall(engram, foreign);
  assert.is(wrongAudience.status, 401);
  assert.match(wrongAudience.json.error.message, 'another resource');

  const [header, payload, signature] = tokens.access_token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  const forged = [header, Buffer.from(JSON.stringify({ ...claims, agent_id: 'agt_BBBBBBBBBBBBBBBB' })).toString('base64url'), signature].join('.');
  assert.is((await mcpCall(engram, forged)).status, 401);

  const none = await mcpCall(engram, undefined);
  assert.is(none.status, 401);
  assert.is(none.headers.get('www-authenticate'), `Bearer resource_metadata="${engram.url}/.well-known/oauth-protected-resource/v0/mcp"`);
});

test('a refresh token rotates on use; presenting a spent one again revokes the whole family', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const first = await tokensFor(engram, flow);
  const second = await refresh(engram, flow, first.refresh_token);
  assert.is(second.status, 200, JSON.stringify(second.json));
  assert.is.not(second.json.refresh_token, first.refresh_token);
  assert.is((await mcpCall(engram, second.json.access_token)).status, 200);

  const replay = await refresh(engram, flow, first.refresh_token);
  assert.is(replay.status, 400);
  assert.is(replay.json.error, 'invalid_grant');
  assert.match(replay.json.error_description, 'already used');

  // The rightful holder's newer tokens die with it.
  const next = await refresh(engram, flow, second.json.refresh_token);
  assert.is(next.status, 400);
  assert.is(next.json.error, 'invalid_grant');
  assert.is((await mcpCall(engram, second.json.access_token)).status, 401);
});

test('two refreshes racing with one token: one rotates, the other finds it spent and the family is revoked', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const answers = await Promise.all([refresh(engram, flow, tokens.refresh_token), refresh(engram, flow, tokens.refresh_token)]);
  assert.equal(answers.map((answer) => answer.status).sort(), [200, 400]);
  const winner = answers.find((answer) => answer.status === 200)!;
  assert.is((await refresh(engram, flow, winner.json.refresh_token)).status, 400);
  assert.is((await mcpCall(engram, winner.json.access_token)).status, 401);
});

test('only hashes of codes and refresh tokens are stored', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const grant = await engram.running.deps.accounts.store.getGrant(tokens.refresh_token.split('.')[0]!);
  const stored = JSON.stringify(grant);
  assert.not.match(stored, flow.code.split('.')[1]!);
  assert.not.match(stored, tokens.refresh_token.split('.')[1]!);
  assert.match(grant!.refreshHash!, /^[0-9a-f]{64}$/);
});

test('revocation (RFC 7009): a refresh token revokes its grant; an unknown token is answered 200 all the same', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const unknown = await post(`${engram.url}/oauth/revoke`, { token: 'grt_AAAAAAAAAAAAAAAA.' + 'a'.repeat(43), client_id: flow.clientId }, 'form');
  assert.is(unknown.status, 200);
  assert.is((await mcpCall(engram, tokens.access_token)).status, 200, 'an unknown token revoked nothing');

  const revoked = await post(`${engram.url}/oauth/revoke`, { token: tokens.refresh_token, token_type_hint: 'refresh_token', client_id: flow.clientId }, 'form');
  assert.is(revoked.status, 200);
  assert.is((await mcpCall(engram, tokens.access_token)).status, 401);
  assert.is((await refresh(engram, flow, tokens.refresh_token)).json.error, 'invalid_grant');
});

test('revocation with an access token revokes its grant too', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const tokens = await tokensFor(engram, flow);
  const revoked = await post(`${engram.url}/oauth/revoke`, { token: tokens.access_token }, 'form');
  assert.is(revoked.status, 200);
  assert.is((await mcpCall(engram, tokens.access_token)).status, 401);
  assert.is((await refresh(engram, flow, tokens.refresh_token)).status, 400);
});

test('the token endpoint speaks OAuth errors: an unknown grant type, a missing parameter, a JSON body', async (context) => {
  const { engram } = context;
  const flow = await freshCode(context);
  const password = await tokenRequest(engram, { grant_type: 'password', client_id: flow.clientId });
  assert.is(password.status, 400);
  assert.is(password.json.error, 'unsupported_grant_type');
  const missing = await exchangeCode(engram, flow, { code_verifier: undefined });
  assert.is(missing.status, 400);
  assert.equal(missing.json, { error: 'invalid_request', error_description: 'code_verifier is required' });
  const json = await post(`${engram.url}/oauth/token`, { grant_type: 'refresh_token' }, 'json');
  assert.is(json.status, 400);
  assert.is(json.json.error, 'invalid_request');
});

test.run();
