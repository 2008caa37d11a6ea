/**
 * Giving people access, over real HTTP against a real Engram (SQLite file): an operator
 * adds an email to an organisation (management API or `engram org member ...`); an email
 * without an account gets an invitation link that works once, in a browser-like session,
 * and lands the new user on the dashboard seeing that org, also with sign-up closed. An
 * expired or used link changes nothing; a pending invitee cannot log in or sign up; a
 * member removed loses the org's pages.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NO_PASSWORD } from '../../src/domain/account-records.js';
import { runCli } from '../support/cli.js';
import { ADMIN_TOKEN, startEngram, type TestEngram } from '../support/engram.js';
import { WebSession } from '../support/web-session.js';

const PASSWORD = 'a long enough passphrase';

/** The path of an invite URL, checked to be on this Engram. */
function invitePath(engram: TestEngram, url: string): string {
  assert.ok(url.startsWith(`${engram.url}/invite/`), url);
  return url.slice(engram.url.length);
}

async function newOrg(engram: TestEngram, name: string): Promise<string> {
  const org = await engram.api('POST', '/v0/orgs', { name });
  assert.is(org.status, 201, JSON.stringify(org.json));
  return org.json.id;
}

async function invite(engram: TestEngram, org: string, email: string) {
  const invited = await engram.api('POST', `/v0/orgs/${org}/members`, { email });
  assert.is(invited.status, 201, JSON.stringify(invited.json));
  return invited.json as { user_id: string; email: string; org_id: string; invited: true; invite_url: string; expires_at: string };
}

/** Opens the link and sends the form; the session keeps the cookie it gets. */
async function accept(engram: TestEngram, url: string, password = PASSWORD, web = new WebSession(engram.url)) {
  const form = await web.get(invitePath(engram, url));
  const sent = form.status === 200 ? await web.post(invitePath(engram, url), { password }) : form;
  return { web, form, sent };
}

/** The stored user of an email (through the store, as an operator's database holds it). */
const stored = (engram: TestEngram, email: string) => engram.running.deps.accounts.store.findUserByEmail(email);

const test = suite<{ engram: TestEngram }>('invitations and members');

test.before(async (context) => {
  context.engram = await startEngram();
});

test.after(async ({ engram }) => engram?.close());

test('an invited email gets a link that works once, signs the new user in, and shows them the org', async ({ engram }) => {
  const org = await newOrg(engram, 'cli-made-org');
  const invited = await invite(engram, 'cli-made-org', 'New.Person@Example.com');
  assert.is(invited.email, 'new.person@example.com');
  assert.is(invited.org_id, org);
  assert.match(invited.invite_url, /\/invite\/usr_\w+\.[\w-]{43}$/);
  const expiresIn = Date.parse(invited.expires_at) - Date.now();
  assert.ok(expiresIn > 7 * 86_400_000 - 60_000 && expiresIn <= 7 * 86_400_000, `expires in ${expiresIn} ms`);

  const before = await stored(engram, 'new.person@example.com');
  assert.is(before?.passwordHash, NO_PASSWORD, 'no usable password yet');
  assert.equal(before?.orgIds, [org]);
  assert.ok(before?.invitation);
  assert.not.match(JSON.stringify(before), invited.invite_url.split('.').pop()!, 'only the secret’s hash is stored');

  const { web, form, sent } = await accept(engram, invited.invite_url);
  assert.is(form.status, 200);
  assert.match(form.text, 'value="new.person@example.com"');
  assert.match(form.text, /readonly/);
  assert.is(sent.status, 303, sent.text.slice(0, 300));
  assert.is(sent.location, '/');
  assert.ok(web.cookies.has('engram_session'), 'signed in');
  const home = await web.get('/');
  assert.is(home.status, 200);
  assert.match(home.text, 'cli-made-org');
  assert.match(home.text, 'new.person@example.com');

  const after = await stored(engram, 'new.person@example.com');
  assert.is(after?.invitation, undefined, 'the invitation is gone');
  assert.match(after!.passwordHash, /^scrypt\$/);
  const login = await new WebSession(engram.url).signIn('new.person@example.com', PASSWORD, { login: true });
  assert.is(login.status, 303, 'the chosen password logs in');

  // The same link again: refused, in a fresh browser and in the one that used it.
  for (const again of [new WebSession(engram.url), web]) {
    const opened = await again.get(invitePath(engram, invited.invite_url));
    assert.is(opened.status, 410);
    assert.match(opened.text, 'already used');
    await again.get('/login');
    const resent = await again.post(invitePath(engram, invited.invite_url), { password: 'another long passphrase' });
    assert.is(resent.status, 410);
  }
  assert.equal(await stored(engram, 'new.person@example.com'), after, 'nothing changed by the second use');
});

test('a weak password is refused on the form and the link keeps working; an unknown link is 404', async ({ engram }) => {
  await newOrg(engram, 'weak-org');
  const invited = await invite(engram, 'weak-org', 'weak@example.com');
  const { web, sent } = await accept(engram, invited.invite_url, 'short');
  assert.is(sent.status, 400);
  assert.match(sent.text, 'Use at least 10 characters.');
  assert.not.ok(web.cookies.has('engram_session'));
  assert.ok((await stored(engram, 'weak@example.com'))?.invitation, 'still invited');
  assert.is((await web.post(invitePath(engram, invited.invite_url), { password: PASSWORD })).status, 303, 'then a good one works');

  // A guessed secret for a pending invitation, an unknown user, no token at all: not found, nothing changed.
  const pending = await invite(engram, 'weak-org', 'guessed@example.com');
  const forged = pending.invite_url.replace(/\.[\w-]+$/, '.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  const untouched = await stored(engram, 'guessed@example.com');
  for (const url of [forged, `${engram.url}/invite/usr_nobody.secret`, `${engram.url}/invite/garbage`]) {
    const { form, sent } = await accept(engram, url);
    assert.is(form.status, 404, url);
    assert.match(form.headers.get('content-type')!, 'text/html');
    assert.match(form.text, 'not valid');
    assert.is(sent, form);
  }
  const guess = new WebSession(engram.url);
  await guess.get('/login');
  assert.is((await guess.post(invitePath(engram, forged), { password: PASSWORD })).status, 404);
  assert.equal(await stored(engram, 'guessed@example.com'), untouched);
});

test('an expired invitation fails and changes nothing', async ({ engram }) => {
  await newOrg(engram, 'expired-org');
  const invited = await invite(engram, 'expired-org', 'late@example.com');
  await engram.running.deps.accounts.store.updateUser(invited.user_id, (current) => ({
    ...current,
    invitation: { ...current.invitation!, expiresAt: Date.now() - 1 },
  }));
  const expired = await stored(engram, 'late@example.com');
  const { web, form } = await accept(engram, invited.invite_url);
  assert.is(form.status, 410);
  assert.match(form.text, 'expired');
  await web.get('/login');
  const posted = await web.post(invitePath(engram, invited.invite_url), { password: PASSWORD });
  assert.is(posted.status, 410);
  assert.not.ok(web.cookies.has('engram_session'));
  assert.equal(await stored(engram, 'late@example.com'), expired, 'nothing changed');
});

test('inviting again replaces the link and adds the org; the old link stops working', async ({ engram }) => {
  const first = await newOrg(engram, 'again-org-1');
  const second = await newOrg(engram, 'again-org-2');
  const old = await invite(engram, first, 'twice@example.com');
  const fresh = await invite(engram, second, 'twice@example.com');
  assert.is(fresh.user_id, old.user_id, 'the same user');
  assert.is.not(fresh.invite_url, old.invite_url);
  assert.equal((await stored(engram, 'twice@example.com'))?.orgIds, [first, second]);
  assert.is((await accept(engram, old.invite_url)).form.status, 404, 'the replaced link');
  const { web, sent } = await accept(engram, fresh.invite_url);
  assert.is(sent.status, 303);
  const home = await web.get('/');
  assert.match(home.text, 'again-org-1');
  assert.match(home.text, 'again-org-2');
});

test('a pending invitee cannot log in with any password, and sign-up points to the invitation', async ({ engram }) => {
  await newOrg(engram, 'pending-org');
  await invite(engram, 'pending-org', 'pending@example.com');
  for (const password of [PASSWORD, NO_PASSWORD, '']) {
    const web = new WebSession(engram.url);
    await web.get('/login');
    const login = await web.post('/login', { email: 'pending@example.com', password, next: '/' });
    assert.is(login.status, 401, `password ${JSON.stringify(password)}`);
    assert.match(login.text, 'Wrong email or password.');
  }
  const signup = await new WebSession(engram.url).signIn('pending@example.com', PASSWORD);
  assert.is(signup.status, 409);
  assert.match(signup.text, 'invitation');
  assert.ok((await stored(engram, 'pending@example.com'))?.invitation, 'still pending');
});

test('an existing user is added to an org at once (idempotent), sees it, and loses it when removed', async ({ engram }) => {
  const web = new WebSession(engram.url);
  assert.is((await web.signIn('existing@example.com', PASSWORD)).status, 303);
  const org = await newOrg(engram, 'shared-org');
  const agent = await engram.api('POST', `/v0/orgs/${org}/agents`, {
    name: 'shared-agent',
    type: 'api_provider',
    upstream: { base_url: 'https://api.example.test', api_key: 'sk-shared-0123456789' },
  });
  assert.is(agent.status, 201, JSON.stringify(agent.json));
  const agentPage = `/orgs/${org}/agents/${agent.json.id}`;
  assert.is((await web.get(agentPage)).status, 404, 'not theirs yet');

  for (let i = 0; i < 2; i++) {
    const added = await engram.api('POST', '/v0/orgs/shared-org/members', { email: ' Existing@Example.com ' });
    assert.is(added.status, 200, JSON.stringify(added.json));
    assert.equal(Object.keys(added.json).sort(), ['email', 'invited', 'org_id', 'user_id']);
    assert.is(added.json.invited, false);
  }
  assert.equal((await stored(engram, 'existing@example.com'))?.orgIds, [org], 'once');
  const home = await web.get('/');
  assert.match(home.text, 'shared-org');
  assert.is((await web.get(agentPage)).status, 200);

  const listed = await engram.api('GET', `/v0/orgs/${org}/members`);
  assert.equal(listed.json.data.map((m: any) => [m.email, m.invited]), [['existing@example.com', false]]);

  const removed = await engram.api('DELETE', `/v0/orgs/${org}/members/${encodeURIComponent('existing@example.com')}`);
  assert.is(removed.status, 200, JSON.stringify(removed.json));
  assert.is(removed.json.removed, true);
  for (const path of [agentPage, `/orgs/${org}/agents/new`, `${agentPage}/reflections`]) assert.is((await web.get(path)).status, 404, path);
  assert.not.match((await web.get('/')).text, 'shared-org');
  assert.equal((await engram.api('GET', `/v0/orgs/${org}/members`)).json.data, []);
  assert.is((await engram.api('DELETE', `/v0/orgs/${org}/members/existing@example.com`)).status, 404, 'no longer a member');
});

test('the members API: admin token only, bodies checked like the other management routes', async ({ engram }) => {
  const org = await newOrg(engram, 'api-org');
  const members = `/v0/orgs/${org}/members`;
  const bad = await engram.api('POST', members, { email: 'not-an-email' });
  assert.is(bad.status, 400);
  assert.is(bad.json.error.param, 'email');
  const unknown = await engram.api('POST', members, { email: 'a@example.com', admin: true });
  assert.is(unknown.status, 400);
  assert.is(unknown.json.error.param, 'admin');
  assert.is((await engram.api('POST', '/v0/orgs/no-such-org/members', { email: 'a@example.com' })).status, 404);
  assert.is((await engram.api('GET', members, undefined, 'egm_wrong')).status, 401);
  assert.is((await engram.api('POST', members, { email: 'a@example.com' }, 'egm_wrong')).status, 401);
  assert.is(await stored(engram, 'a@example.com'), undefined, 'nothing made by refused calls');
  assert.is((await engram.api('DELETE', `${members}/usr_nobody`)).status, 404);
});

test('engram org member add, list and remove, end to end', async ({ engram }) => {
  await newOrg(engram, 'cli-org');
  const remote = ['--url', engram.url, '--admin-token', ADMIN_TOKEN];

  const added = await runCli(['org', 'member', 'add', 'cli-org', 'cli.person@example.com', ...remote]);
  assert.is(added.code, 0, added.stderr);
  const url = /^\s+(http\S+\/invite\/\S+)$/m.exec(added.stdout)?.[1];
  assert.ok(url, added.stdout);
  assert.match(added.stdout, 'shown only now');
  assert.match(added.stdout, '7 days');

  const list = await runCli(['org', 'member', 'list', 'cli-org', ...remote]);
  assert.is(list.code, 0, list.stderr);
  assert.match(list.stdout, /cli\.person@example\.com\s+invited/);

  const { sent } = await accept(engram, url);
  assert.is(sent.status, 303, 'the printed link works');
  const json = await runCli(['org', 'member', 'list', 'cli-org', '--json', ...remote]);
  assert.equal(JSON.parse(json.stdout).map((m: any) => [m.email, m.invited]), [['cli.person@example.com', false]]);

  const again = await runCli(['org', 'member', 'add', 'cli-org', 'cli.person@example.com', '--json', ...remote]);
  assert.is(again.code, 0, again.stderr);
  assert.is(JSON.parse(again.stdout).invited, false, 'an account now: no new link');

  const removed = await runCli(['org', 'member', 'remove', 'cli-org', 'cli.person@example.com', ...remote]);
  assert.is(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, 'Removed cli.person@example.com');
  const empty = await runCli(['org', 'member', 'list', 'cli-org', ...remote]);
  assert.match(empty.stdout, 'No members yet');
  const missing = await runCli(['org', 'member', 'remove', 'cli-org', 'cli.person@example.com', ...remote]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, 'not a member');
});

test('engram agent create --owner: a person who signed up sees the agent on the dashboard, a new email gets an invitation, a bad one creates no agent', async ({ engram }) => {
  const remote = ['--url', engram.url, '--admin-token', ADMIN_TOKEN];
  const create = (name: string, owner: string, ...more: string[]) =>
    runCli(['agent', 'create', '--org', 'owned-org', '--name', name, '--upstream', 'https://api.openai.com', '--no-check', '--upstream-key', 'sk-owned', '--owner', owner, ...more, ...remote]);

  const web = new WebSession(engram.url);
  assert.is((await web.signIn('owner@example.com', PASSWORD)).status, 303, 'signed up first, with no organisation');
  const made = await create('laptop', 'owner@example.com');
  assert.is(made.code, 0, made.stderr);
  assert.match(made.stdout, 'Created agent "laptop" in organisation "owned-org"');
  assert.match(made.stdout, 'Added owner@example.com');
  const home = await web.get('/');
  assert.is(home.status, 200);
  assert.match(home.text, 'owned-org');
  assert.match(home.text, 'laptop', 'the agent is on their dashboard, with no member command');

  const invited = await create('desktop', 'newcomer@example.com', '--json');
  assert.is(invited.code, 0, invited.stderr);
  const json = JSON.parse(invited.stdout);
  assert.is(json.owner.email, 'newcomer@example.com');
  assert.is(json.owner.invited, true);
  const { sent } = await accept(engram, json.owner.invite_url);
  assert.is(sent.status, 303, 'the invitation link works');

  const org = await engram.api('GET', '/v0/orgs/owned-org');
  const before = (await engram.api('GET', `/v0/orgs/${org.json.id}/agents`)).json.data.length;
  const bad = await create('phone', 'not an email');
  assert.is(bad.code, 1);
  assert.match(bad.stderr, 'valid email');
  assert.is((await engram.api('GET', `/v0/orgs/${org.json.id}/agents`)).json.data.length, before, 'no agent was created');
});

test.run();

const closed = suite('invitations with sign-up closed');

closed('ENGRAM_SIGNUP=false: sign-up is refused, an invitation still lets a person in', async () => {
  const engram = await startEngram({ signup: 'false' });
  try {
    await newOrg(engram, 'private-org');
    const invited = await invite(engram, 'private-org', 'insider@example.com');
    assert.is((await new WebSession(engram.url).signIn('outsider@example.com', PASSWORD)).status, 403);
    const { web, sent } = await accept(engram, invited.invite_url);
    assert.is(sent.status, 303, sent.text.slice(0, 300));
    const home = await web.get('/');
    assert.is(home.status, 200);
    assert.match(home.text, 'private-org');
  } finally {
    await engram.close();
  }
});

closed.run();
