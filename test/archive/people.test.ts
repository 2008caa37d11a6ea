/**
 * Moving stores keeps people: `engram export` from the embedded store and `engram import`
 * into NATS, and back, carry the dashboard's users (their password hashes, sealed in the
 * archive, and their memberships, a pending invitation included) and the OAuth clients
 * registered with the global MCP server. Afterwards a user logs in with the same password
 * and sees the same organisations, an invited one accepts the same link, and a client's
 * registration still works for a new authorization. Real CLI processes, a real
 * nats-server, the real SQLite files.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../support/cli.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { WebSession } from '../support/web-session.js';
import { agentFor, answerConsent, authorizeUrl, consentPage, mcpCall, PASSWORD, pkce, registerClient, signUp, tokensFor, type OwnAgent } from '../oauth/support.js';

interface Context {
  nats: NatsServer;
  dir: string;
}
const test = suite<Context>('export and import: users, memberships, OAuth clients');

test.before(async (context) => {
  context.nats = await startNatsServer();
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-people-'));
});
test.after(async ({ nats, dir }) => {
  await nats?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const REDIRECT = 'http://127.0.0.1:43110/callback';

/** What the source deployment held, to find again after each move. */
interface People {
  alice: OwnAgent & { orgName: string; agentName: string };
  clientId: string;
  invitation: string;
  /** Each user's organisations, by email. */
  orgs: Record<string, string[]>;
  /** Alice's org's members as the management API lists them. */
  members: unknown[];
}

/** The members of an org through the real HTTP API (`engram org member list`). */
async function membersOf(engram: TestEngram, orgId: string): Promise<unknown[]> {
  const answer = await engram.api('GET', `/v0/orgs/${orgId}/members`);
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  return answer.json.data;
}

async function orgsByEmail(engram: TestEngram): Promise<Record<string, string[]>> {
  const { accounts } = engram.running.deps;
  const users = await accounts.store.listUsers();
  return Object.fromEntries(await Promise.all(users.map(async (user) => [user.email, (await accounts.orgsOf(user)).map((org) => org.id)] as const)));
}

/** `email` logs in over HTTP with the password they signed up with, and sees Alice's org and its agent. */
async function logsIn(engram: TestEngram, email: string, people: People): Promise<WebSession> {
  const session = new WebSession(engram.url);
  const login = await session.signIn(email, PASSWORD, { login: true });
  assert.is(login.status, 303, `${email} logs in with the same password: ${login.text.slice(0, 200)}`);
  const home = await session.get('/');
  assert.is(home.status, 200);
  assert.match(home.text, people.alice.orgName, `${email} sees the org`);
  assert.match(home.text, people.alice.agentName);
  return session;
}

/**
 * Alice (who made the org) and Bob (added to it) log in over HTTP with their passwords and
 * see the org and its agent; the members are the same; a new authorization of the
 * archived client works.
 */
async function stillWorks(engram: TestEngram, people: People): Promise<void> {
  const web = await logsIn(engram, 'alice@example.test', people);
  await logsIn(engram, 'bob@example.test', people);
  const wrong = await new WebSession(engram.url).signIn('alice@example.test', 'not the passphrase at all', { login: true });
  assert.is.not(wrong.status, 303, 'and only with it');
  assert.equal(await orgsByEmail(engram), people.orgs, 'every user in the same organisations');
  assert.equal(await membersOf(engram, people.alice.orgId), people.members, 'the org has the same members, Carol still invited');

  const { verifier, challenge } = pkce();
  const page = await consentPage(web, authorizeUrl(engram, { clientId: people.clientId, redirectUri: REDIRECT, challenge }));
  assert.is(page.answer.status, 200, `the archived client is known: ${page.answer.text.slice(0, 300)}`);
  assert.ok(page.agents.includes(`${people.alice.orgId}/${people.alice.agentId}`), page.agents.join());
  const consent = await answerConsent(web, page, { agent: `${people.alice.orgId}/${people.alice.agentId}` });
  assert.is(consent.status, 303, consent.text.slice(0, 300));
  const code = new URL(consent.location!).searchParams.get('code')!;
  const tokens = await tokensFor(engram, { clientId: people.clientId, redirectUri: REDIRECT, verifier, code });
  const listed = await mcpCall(engram, tokens.access_token);
  assert.is(listed.status, 200, JSON.stringify(listed.json));
  assert.ok(listed.json.result.tools.some((tool: { name: string }) => tool.name === 'recall'));
}

test('users, memberships and OAuth clients move from SQLite to NATS and back; a re-import is a no-op', async ({ nats, dir }) => {
  const embedded = path.join(dir, 'embedded');
  const source = await startEngram({}, embedded);
  let people: People;
  try {
    await signUp(source, 'alice@example.test');
    const own = await agentFor(source, 'alice@example.test', 'alice-coder');
    const org = await source.api('GET', `/v0/orgs/${own.orgId}`);
    await signUp(source, 'bob@example.test');
    const { invitations } = source.running.deps.accounts;
    await invitations.addMember(own.orgId, 'bob@example.test');
    const invited = await invitations.addMember(own.orgId, 'carol@example.test');
    const registered = await registerClient(source, [REDIRECT], 'Claude Code');
    assert.is(registered.status, 201, JSON.stringify(registered.json));
    people = {
      alice: { ...own, orgName: org.json.name, agentName: 'alice-coder' },
      clientId: registered.json.client_id,
      invitation: invited.invitation!.token,
      orgs: await orgsByEmail(source),
      members: await membersOf(source, own.orgId),
    };
    assert.equal(
      (people.members as { email: string; invited: boolean }[]).map((m) => [m.email, m.invited]),
      [['alice@example.test', false], ['bob@example.test', false], ['carol@example.test', true]],
    );
    assert.equal(people.orgs['bob@example.test'], [own.orgId]);
    assert.equal(people.orgs['carol@example.test'], [own.orgId]);
  } finally {
    await source.close();
  }

  const archive = path.join(dir, 'people.jsonl');
  const exported = await runCli(['export', '--data-dir', embedded, '--out', archive]);
  assert.is(exported.code, 0, exported.stderr);
  assert.match(exported.stderr, /Exported 1 organisations, 1 agents, 1 tokens, 0 reflections, 3 users, 1 OAuth clients/);
  const text = readFileSync(archive, 'utf8');
  assert.not.match(text, PASSWORD, 'no password in clear');
  assert.not.match(text, 'scrypt$', 'nor its hash: sealed with the key');
  const records = text.trim().split('\n').slice(1).map((line) => JSON.parse(line));
  assert.equal(records.map((r) => r.type), ['org', 'agent', 'token', 'user', 'user', 'user', 'oauth_client'], 'users after the orgs they name, then clients');
  assert.equal(records.find((r) => r.type === 'oauth_client').client.redirectUris, [REDIRECT]);

  const secretKey = readFileSync(path.join(embedded, 'secret-key'), 'utf8').trim();
  const onNats = ['--data-dir', path.join(dir, 'nats'), '--nats-url', nats.url, '--nats-prefix', 'people', '--secret-key', secretKey];
  const imported = await runCli(['import', archive, ...onNats, '--json']);
  assert.is(imported.code, 0, imported.stderr);
  assert.equal(JSON.parse(imported.stdout).imported, { orgs: 1, agents: 1, tokens: 1, reflections: 0, users: 3, clients: 1 });
  const again = await runCli(['import', archive, ...onNats, '--json']);
  assert.is(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).imported, { orgs: 0, agents: 0, tokens: 0, reflections: 0, users: 0, clients: 0 }, 'a re-import writes nothing');
  assert.equal(JSON.parse(again.stdout).skipped, { orgs: 1, agents: 1, tokens: 1, reflections: 0, users: 3, clients: 1 });

  const moved = await startEngram({ 'nats-url': nats.url, 'nats-prefix': 'people', 'secret-key': secretKey }, path.join(dir, 'nats'));
  try {
    assert.match(moved.running.engines.control, /^nats /);
    await stillWorks(moved, people);
  } finally {
    await moved.close();
  }

  // And back, from NATS to a new embedded store.
  const back = path.join(dir, 'back.jsonl');
  const reexported = await runCli(['export', ...onNats, '--out', back]);
  assert.is(reexported.code, 0, reexported.stderr);
  const returned = path.join(dir, 'returned');
  const reimported = await runCli(['import', back, '--data-dir', returned, '--secret-key', secretKey, '--json']);
  assert.is(reimported.code, 0, reimported.stderr);
  assert.equal(JSON.parse(reimported.stdout).imported.users, 3);
  const home = await startEngram({ 'secret-key': secretKey }, returned);
  try {
    await stillWorks(home, people);
    // The invitation travelled too: its link sets Carol's password on the store it reached.
    await home.running.deps.accounts.invitations.accept(people.invitation, 'carol picks a long passphrase');
    const carol = await new WebSession(home.url).signIn('carol@example.test', 'carol picks a long passphrase', { login: true });
    assert.is(carol.status, 303);
  } finally {
    await home.close();
  }
});

test('an archive of a newer version, or with a record this release does not know, is refused and nothing is written', async ({ nats, dir }) => {
  const source = path.join(dir, 'versions');
  const engram = await startEngram({}, source);
  await signUp(engram, 'dana@example.test');
  await agentFor(engram, 'dana@example.test');
  await engram.close();
  const archive = path.join(dir, 'versions.jsonl');
  assert.is((await runCli(['export', '--data-dir', source, '--out', archive])).code, 0);
  const [header, ...lines] = readFileSync(archive, 'utf8').trim().split('\n');
  const secretKey = readFileSync(path.join(source, 'secret-key'), 'utf8').trim();
  const target = ['--data-dir', path.join(dir, 'versions-target'), '--nats-url', nats.url, '--nats-prefix', 'versions', '--secret-key', secretKey];

  const newer = path.join(dir, 'newer.jsonl');
  writeFileSync(newer, [JSON.stringify({ ...JSON.parse(header), version: 5 }), ...lines].join('\n') + '\n');
  const refused = await runCli(['import', newer, ...target]);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /archive version 5 is newer than this Engram reads \(4\): upgrade Engram first/);

  // A record type from a later release: refused in the checking pass, before anything is written.
  const unknown = path.join(dir, 'unknown.jsonl');
  writeFileSync(unknown, [header, ...lines, JSON.stringify({ type: 'team', team: { id: 'tm_1' } })].join('\n') + '\n');
  const refusedToo = await runCli(['import', unknown, ...target]);
  assert.is(refusedToo.code, 1);
  assert.match(refusedToo.stderr, /unknown record type "team"/);

  const empty = await startEngram({ 'nats-url': nats.url, 'nats-prefix': 'versions', 'secret-key': secretKey }, path.join(dir, 'versions-target'));
  try {
    assert.equal((await empty.api('GET', '/v0/orgs')).json.data, [], 'no organisation written');
    assert.equal(await empty.running.deps.accounts.store.listUsers(), [], 'no user written');
    assert.equal(await empty.running.deps.accounts.store.listClients(), []);
  } finally {
    await empty.close();
  }
});

test.run();
