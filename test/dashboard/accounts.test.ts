/**
 * Accounts and what keeps them apart, over real HTTP: passwords stored as scrypt hashes,
 * sessions that log out for real, a CSRF token on every form, generic log-in failures
 * with a rate limit, security headers, sign-up that an operator can close, and one
 * user never reaching another's organisation or agent.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession } from '../support/web-session.js';
import { notFoundPage } from '../../src/http/web/not-found.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { EMAIL_UNAVAILABLE } from '../../src/accounts/accounts.js';

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const test = suite<{ engram: TestEngram; upstream: ScriptedUpstream }>('dashboard accounts');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
  context.engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' });
});

test.after(async ({ engram, upstream }) => {
  await engram?.close();
  await upstream?.close();
});

const PASSWORD = 'a long enough passphrase';

/** A signed-up user with an org and an agent, made through the forms. */
async function userWithAgent(engram: TestEngram, upstream: ScriptedUpstream, email: string) {
  const web = new WebSession(engram.url);
  const signed = await web.signIn(email, PASSWORD);
  assert.is(signed.status, 303, `sign-up of ${email}`);
  await web.get('/orgs/new');
  const org = await web.post('/orgs/new', { name: `org-of-${email.split('@')[0]}` });
  const newAgent = org.location!;
  await web.get(newAgent);
  const agent = await web.post(newAgent, { intent: 'create', name: 'agent', base_url: upstream.url, api_key: 'sk-x-1234567890', headers: '' });
  assert.is(agent.status, 303, agent.text.slice(0, 300));
  const [, orgId, agentId] = /\/orgs\/([^/]+)\/agents\/([^/]+)\/connect$/.exec(agent.location!)!;
  return { web, orgId: orgId!, agentId: agentId! };
}

test('the password is stored as a self-describing scrypt hash at OWASP parameters, never in clear', async ({ engram }) => {
  const web = new WebSession(engram.url);
  assert.is((await web.signIn('hash@example.com', PASSWORD)).status, 303);
  const user = await engram.running.deps.accounts.store.findUserByEmail('hash@example.com');
  assert.ok(user);
  assert.match(user.passwordHash, /^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  assert.not.match(user.passwordHash, PASSWORD);
});

test('sign-up refuses a short password and a taken email with a message, and logs nobody in', async ({ engram }) => {
  const web = new WebSession(engram.url);
  await web.get('/signup');
  const short = await web.post('/signup', { email: 'short@example.com', password: 'short', next: '/' });
  assert.is(short.status, 400);
  assert.match(short.text, 'Use at least 10 characters.');
  assert.is(await engram.running.deps.accounts.store.findUserByEmail('short@example.com'), undefined);
  await new WebSession(engram.url).signIn('taken@example.com', PASSWORD);
  const again = await web.post('/signup', { email: 'Taken@Example.com', password: PASSWORD, next: '/' });
  assert.is(again.status, 409);
  assert.match(again.text, escapeHtml(EMAIL_UNAVAILABLE));
  assert.not.ok(web.cookies.has('engram_session'));
});

test('a wrong password and an unknown email get the same answer', async ({ engram }) => {
  await new WebSession(engram.url).signIn('known@example.com', PASSWORD);
  const web = new WebSession(engram.url);
  await web.get('/login');
  const wrong = await web.post('/login', { email: 'known@example.com', password: 'not the password', next: '/' });
  const unknown = await web.post('/login', { email: 'nobody@example.com', password: 'not the password', next: '/' });
  assert.is(wrong.status, 401);
  assert.is(unknown.status, 401);
  assert.match(wrong.text, 'Wrong email or password.');
  assert.match(unknown.text, 'Wrong email or password.');
  const right = await web.post('/login', { email: 'KNOWN@example.com', password: PASSWORD, next: '/orgs/new' });
  assert.is(right.status, 303);
  assert.is(right.location, '/orgs/new');
});

test('log-in after too many attempts for one email is refused with 429 and Retry-After', async ({ engram }) => {
  const web = new WebSession(engram.url);
  await web.get('/login');
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await web.post('/login', { email: 'target@example.com', password: `guess ${i}`, next: '/' })).status);
  assert.ok(statuses.slice(0, 10).every((status) => status === 401), statuses.join(','));
  const last = await web.post('/login', { email: 'target@example.com', password: 'guess', next: '/' });
  assert.is(last.status, 429);
  assert.ok(Number(last.headers.get('retry-after')) > 0);
});

test('the session cookie is HttpOnly and SameSite; log-out ends the session on the server', async ({ engram }) => {
  const web = new WebSession(engram.url);
  await web.get('/signup');
  const signed = await web.post('/signup', { email: 'cookie@example.com', password: PASSWORD, next: '/' });
  const setCookie = signed.headers.getSetCookie().find((line) => line.startsWith('engram_session='))!;
  assert.match(setCookie, /HttpOnly/i);
  assert.match(setCookie, /SameSite=Lax/i);
  const stolen = web.cookies.get('engram_session')!;
  assert.is((await web.get('/orgs/new')).status, 200);
  await web.post('/logout', {});
  const replay = new WebSession(engram.url);
  replay.cookies.set('engram_session', stolen);
  const after = await replay.get('/orgs/new');
  assert.is(after.status, 303, 'the old cookie no longer signs in');
  assert.match(after.location!, /^\/login\?next=/);
});

test('a form without its CSRF token is refused with 403 and changes nothing', async ({ engram }) => {
  const web = new WebSession(engram.url);
  await web.signIn('csrf@example.com', PASSWORD);
  const forged = await web.post('/orgs/new', { name: 'forged-org', _csrf: '' });
  assert.is(forged.status, 403);
  assert.match(forged.text, 'This form expired or was sent from another site');
  const orgs = await engram.api('GET', '/v0/orgs');
  assert.not.ok(orgs.json.data.some((org: { name: string }) => org.name === 'forged-org'));
});

test('pages carry security headers and are never cached', async ({ engram }) => {
  const page = await new WebSession(engram.url).get('/login');
  assert.match(page.headers.get('content-security-policy')!, "default-src 'self'");
  assert.match(page.headers.get('content-security-policy')!, "frame-ancestors 'none'");
  assert.match(page.headers.get('content-security-policy')!, "form-action 'self';", 'forms post to Engram and nowhere else');
  assert.is(page.headers.get('x-content-type-options'), 'nosniff');
  assert.is(page.headers.get('cache-control'), 'no-store');
  assert.is(page.headers.get('referrer-policy'), 'no-referrer');
});

test('one user never reaches another user\'s organisation or agent, even by id', async ({ engram, upstream }) => {
  const ann = await userWithAgent(engram, upstream, 'ann@example.com');
  const bob = await userWithAgent(engram, upstream, 'bob@example.com');
  for (const path of [`/orgs/${ann.orgId}/agents/new`, `/orgs/${ann.orgId}/agents/${ann.agentId}`, `/orgs/${ann.orgId}/agents/${ann.agentId}/reflections`, `/orgs/${ann.orgId}/agents/${ann.agentId}/tokens`]) {
    const seen = await bob.web.get(path);
    assert.is(seen.status, 404, path);
    assert.not.match(seen.text, 'org-of-ann');
  }
  await bob.web.get('/');
  const minted = await bob.web.post(`/orgs/${ann.orgId}/agents/${ann.agentId}/tokens`, { name: 'stolen' });
  assert.is(minted.status, 404);
  assert.equal((await engram.running.deps.control.directory.listTokens(ann.agentId)).map((token) => token.name), []);
  const home = await bob.web.get('/');
  assert.match(home.text, 'org-of-bob');
  assert.not.match(home.text, 'org-of-ann');
});

test('an error page is for a person: no stack trace, no JSON', async ({ engram }) => {
  const web = new WebSession(engram.url);
  await web.signIn('errors@example.com', PASSWORD);
  const missing = await web.get('/orgs/org_doesnotexist000/agents/agt_nope');
  assert.is(missing.status, 404);
  assert.match(missing.headers.get('content-type')!, 'text/html');
  assert.match(missing.text, 'There is no such organisation among yours.');
  assert.not.match(missing.text, /at .*\.ts:\d+/);
  // A wrong link anywhere: a page for the browser, the API's JSON for a program.
  const page = await fetch(`${engram.url}/no/such/page`, { headers: { accept: 'text/html,application/xhtml+xml' } });
  assert.is(page.status, 404);
  assert.match(page.headers.get('content-type')!, 'text/html');
  const html = await page.text();
  assert.match(html, 'There is no page at <span class="mono">/no/such/page</span>');
  assert.match(notFoundPage('/<script>"'), '/&lt;script&gt;&quot;', 'the path is escaped');
  const api = await fetch(`${engram.url}/no/such/page`, { headers: { accept: 'application/json' } });
  assert.is(api.status, 404);
  assert.is(((await api.json()) as { error: { code: string } }).error.code, 'not_found');
});

test.run();

const closed = suite('dashboard with sign-up closed');

closed('ENGRAM_SIGNUP=false: no sign-up form, and a posted one is refused', async () => {
  const engram = await startEngram({ signup: 'false' });
  try {
    const web = new WebSession(engram.url);
    const form = await web.get('/signup');
    assert.is(form.status, 403);
    assert.match(form.text, 'invite-only');
    await web.get('/login');
    assert.not.match((await web.get('/login')).text, 'href="/signup');
    const posted = await web.post('/signup', { email: 'x@example.com', password: PASSWORD, next: '/' });
    assert.is(posted.status, 403);
    assert.is(await engram.running.deps.accounts.store.findUserByEmail('x@example.com'), undefined);
  } finally {
    await engram.close();
  }
});

closed.run();

const probing = suite<{ engram: TestEngram }>('sign-up does not tell which emails have accounts');

probing.before(async (context) => {
  context.engram = await startEngram();
});

probing.after(async ({ engram }) => {
  await engram?.close();
});

/** A sign-up through the form, timed from the post to the answer. */
async function timedSignUp(engram: TestEngram, email: string) {
  const web = new WebSession(engram.url);
  await web.get('/signup');
  const started = performance.now();
  const answer = await web.post('/signup', { email, password: PASSWORD, next: '/' });
  return { answer, ms: performance.now() - started, csrf: web.csrf };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

probing('an account and a pending invitation get the same refusal, which names neither', async ({ engram }) => {
  assert.is((await new WebSession(engram.url).signIn('member@example.com', PASSWORD)).status, 303);
  const org = await engram.api('POST', '/v0/orgs', { name: 'probed-org' });
  assert.is((await engram.api('POST', `/v0/orgs/${org.json.id}/members`, { email: 'invitee@example.com' })).status, 201);
  const refusals = [];
  for (const email of ['member@example.com', 'invitee@example.com']) {
    const { answer, csrf } = await timedSignUp(engram, email);
    assert.is(answer.status, 409, email);
    assert.not.ok(answer.headers.getSetCookie().some((line) => line.startsWith('engram_session=')), 'nobody signed in');
    // The page echoes what was typed and carries a fresh CSRF token; the rest must not differ.
    refusals.push(answer.text.replaceAll(email, '<email>').replaceAll(csrf, '<csrf>'));
  }
  assert.is(refusals[0], refusals[1], 'the same page for an account and for an invitation');
  assert.match(refusals[0]!, escapeHtml(EMAIL_UNAVAILABLE));
  assert.not.match(refusals[0]!, /already exists|was invited/);
});

probing('a refused sign-up takes about as long as one that creates an account: the password is hashed either way', async ({ engram }) => {
  // Three each, within the sign-up limit of one address (a burst of 10, two used above).
  const created: number[] = [];
  const refused: number[] = [];
  for (let i = 0; i < 3; i++) {
    const fresh = await timedSignUp(engram, `fresh-${i}@example.com`);
    assert.is(fresh.answer.status, 303);
    created.push(fresh.ms);
    const taken = await timedSignUp(engram, i === 1 ? 'invitee@example.com' : 'member@example.com');
    assert.is(taken.answer.status, 409);
    refused.push(taken.ms);
  }
  // Before: 4 ms against 311 ms. A scrypt hash dominates both now; the margin is wide on purpose.
  assert.ok(median(refused) > median(created) / 4, `refused ${refused.map(Math.round).join(', ')} ms; created ${created.map(Math.round).join(', ')} ms`);
});

probing.run();
