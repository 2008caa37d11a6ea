/**
 * The authorization endpoint as a browser meets it, over real HTTP with the dashboard's
 * session cookie: log-in and back, consent for one of the user's own agents only, CSRF on
 * the consent form, redirect URIs (unregistered ones never redirected to, loopback ones
 * on any port), the resource indicator, denial, and a user with no agent yet.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession } from '../support/web-session.js';
import {
  agentFor,
  answerConsent,
  authorizeUrl,
  consentPage,
  pkce,
  registerClient,
  signUp,
  tokenRequest,
  type OwnAgent,
} from './support.js';

interface Context {
  engram: TestEngram;
  alice: WebSession;
  aliceAgent: OwnAgent;
  bob: WebSession;
  bobAgent: OwnAgent;
}

const test = suite<Context>('OAuth authorization endpoint and consent');

test.before(async (context) => {
  context.engram = await startEngram();
  context.alice = await signUp(context.engram, 'alice@example.com');
  context.aliceAgent = await agentFor(context.engram, 'alice@example.com', 'alice agent');
  context.bob = await signUp(context.engram, 'bob@example.com');
  context.bobAgent = await agentFor(context.engram, 'bob@example.com', 'bob agent');
});

test.after(async ({ engram }) => {
  await engram?.close();
});

const CALLBACK = 'http://127.0.0.1:43120/callback';

async function client(engram: TestEngram, redirectUris = [CALLBACK]): Promise<string> {
  const registered = await registerClient(engram, redirectUris);
  assert.is(registered.status, 201, JSON.stringify(registered.json));
  return registered.json.client_id;
}

async function grantsOf(engram: TestEngram, email: string) {
  const user = await engram.running.deps.accounts.store.findUserByEmail(email);
  return engram.running.deps.accounts.store.listGrants(user!.id);
}

test('without a session the authorization request goes to the log-in page, which comes back to it', async ({ engram, aliceAgent }) => {
  const clientId = await client(engram);
  const url = authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge });
  const browser = new WebSession(engram.url);
  const first = await browser.get(url);
  assert.is(first.status, 303);
  const login = new URL(first.location!, engram.url);
  assert.is(login.pathname, '/login');
  assert.is(login.searchParams.get('next'), url);
  await browser.get(login.pathname + login.search);
  const loggedIn = await browser.post('/login', { email: 'alice@example.com', password: 'a long enough passphrase', next: url });
  assert.is(loggedIn.status, 303);
  assert.is(loggedIn.location, url);
  const page = await consentPage(browser, url);
  assert.is(page.answer.status, 200);
  assert.equal(page.agents, [`${aliceAgent.orgId}/${aliceAgent.agentId}`]);
});

test('consent lists only the user\'s own agents, and a form naming another user\'s agent is refused with 403', async ({ engram, bob, aliceAgent, bobAgent }) => {
  const clientId = await client(engram);
  const page = await consentPage(bob, authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge }));
  assert.is(page.answer.status, 200);
  assert.equal(page.agents, [`${bobAgent.orgId}/${bobAgent.agentId}`]);
  assert.not.match(page.answer.text, aliceAgent.agentId);

  const before = (await grantsOf(engram, 'bob@example.com')).length;
  const answer = await answerConsent(bob, page, { agent: `${aliceAgent.orgId}/${aliceAgent.agentId}` });
  assert.is(answer.status, 403);
  assert.is(answer.location, null, 'nothing is sent to the client');
  assert.match(answer.text, 'Choose one of your own agents.');
  assert.is((await grantsOf(engram, 'bob@example.com')).length, before, 'no grant was made');
  assert.is((await grantsOf(engram, 'alice@example.com')).filter((grant) => grant.clientId === clientId).length, 0);
});

test('the consent form without its CSRF token is refused with 403', async ({ engram, alice, aliceAgent }) => {
  const clientId = await client(engram);
  const page = await consentPage(alice, authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge }));
  assert.is(page.answer.status, 200);
  const answer = await answerConsent(alice, page, { agent: `${aliceAgent.orgId}/${aliceAgent.agentId}`, csrf: '' });
  assert.is(answer.status, 403);
  assert.is(answer.location, null);
  assert.match(answer.text, 'This form expired or was sent from another site.');
  assert.is((await grantsOf(engram, 'alice@example.com')).filter((grant) => grant.clientId === clientId).length, 0);
});

test('an unregistered redirect_uri is refused on a page and never redirected to, on GET and on a tampered POST', async ({ engram, alice, aliceAgent }) => {
  const clientId = await client(engram);
  const evil = 'https://attacker.example/callback';
  const shown = await alice.get(authorizeUrl(engram, { clientId, redirectUri: evil, challenge: pkce().challenge }));
  assert.is(shown.status, 400);
  assert.is(shown.location, null);
  assert.match(shown.text, 'did not register');

  const page = await consentPage(alice, authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge }));
  page.fields.redirect_uri = evil;
  const answer = await answerConsent(alice, page, { agent: `${aliceAgent.orgId}/${aliceAgent.agentId}` });
  assert.is(answer.status, 400, 'the hidden fields are checked again');
  assert.is(answer.location, null);
});

test('an unknown client is refused on a page', async ({ engram, alice }) => {
  const shown = await alice.get(authorizeUrl(engram, { clientId: 'cli_AAAAAAAAAAAAAAAA', redirectUri: CALLBACK, challenge: pkce().challenge }));
  assert.is(shown.status, 400);
  assert.is(shown.location, null);
  assert.match(shown.text, 'not registered');
});

test('a loopback redirect URI registered on one port is accepted on another, and the code is bound to that port', async ({ engram, alice, aliceAgent }) => {
  const clientId = await client(engram, ['http://127.0.0.1:1111/callback']);
  const redirectUri = 'http://127.0.0.1:2222/callback';
  const { verifier, challenge } = pkce();
  const page = await consentPage(alice, authorizeUrl(engram, { clientId, redirectUri, challenge, state: 'xyz' }));
  assert.is(page.answer.status, 200);
  const answer = await answerConsent(alice, page, { agent: `${aliceAgent.orgId}/${aliceAgent.agentId}` });
  assert.is(answer.status, 303);
  const location = new URL(answer.location!);
  assert.is(location.origin + location.pathname, redirectUri);
  assert.is(location.searchParams.get('state'), 'xyz');
  const code = location.searchParams.get('code')!;
  const exchanged = await tokenRequest(engram, { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri });
  assert.is(exchanged.status, 200, JSON.stringify(exchanged.json));

  // Another path on loopback, or another host, is not the registered URI.
  for (const other of ['http://127.0.0.1:2222/elsewhere', 'http://localhost:1111/callback']) {
    const refused = await alice.get(authorizeUrl(engram, { clientId, redirectUri: other, challenge }));
    assert.is(refused.status, 400, other);
    assert.is(refused.location, null);
  }
});

test('a wrong or missing resource goes back to the client as invalid_target, with state and iss', async ({ engram, alice }) => {
  const clientId = await client(engram);
  for (const resource of ['https://elsewhere.example/v0/mcp', '']) {
    const answer = await alice.get(authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge, resource, state: 's1' }));
    assert.is(answer.status, 303);
    const location = new URL(answer.location!);
    assert.is(location.origin + location.pathname, CALLBACK);
    assert.is(location.searchParams.get('error'), 'invalid_target');
    assert.is(location.searchParams.get('state'), 's1');
    assert.is(location.searchParams.get('iss'), engram.url);
    assert.is(location.searchParams.get('code'), null);
  }
});

test('a request without PKCE S256 goes back as invalid_request', async ({ engram, alice }) => {
  const clientId = await client(engram);
  const url = new URL(authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge }), engram.url);
  url.searchParams.set('code_challenge_method', 'plain');
  const answer = await alice.get(url.pathname + url.search);
  assert.is(answer.status, 303);
  assert.is(new URL(answer.location!).searchParams.get('error'), 'invalid_request');
});

test('denying sends access_denied back to the client', async ({ engram, alice }) => {
  const clientId = await client(engram);
  const page = await consentPage(alice, authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge, state: 'deny-me' }));
  const answer = await answerConsent(alice, page, { decision: 'deny' });
  assert.is(answer.status, 303);
  const location = new URL(answer.location!);
  assert.is(location.searchParams.get('error'), 'access_denied');
  assert.is(location.searchParams.get('state'), 'deny-me');
  assert.is(location.searchParams.get('code'), null);
});

test('a user with no agent is told so, and can only cancel', async ({ engram }) => {
  const carol = await signUp(engram, 'carol@example.com');
  const clientId = await client(engram);
  const page = await consentPage(carol, authorizeUrl(engram, { clientId, redirectUri: CALLBACK, challenge: pkce().challenge }));
  assert.is(page.answer.status, 200);
  assert.equal(page.agents, []);
  assert.match(page.answer.text, 'You have no agent yet');
  assert.match(page.answer.text, 'href="/"');
  const answer = await answerConsent(carol, page, { decision: 'deny' });
  assert.is(new URL(answer.location!).searchParams.get('error'), 'access_denied');
});

test.run();
