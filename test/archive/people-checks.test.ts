/**
 * What an import checks of the people it carries before it writes anything: the key opens
 * every sealed password hash, users and clients are well formed, and no user's email is
 * another account's in the target. And what it keeps: each user and client record exactly,
 * the password hash as the source stored it. In-process, on real SQLite files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteAdapters, type SqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { exportArchive } from '../../src/archive/export-archive.js';
import { ArchiveError, importArchive } from '../../src/archive/import-archive.js';
import { Control } from '../../src/control/control.js';
import { newOAuthClient, newUser, NO_PASSWORD, type User } from '../../src/domain/account-records.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';

interface Deployment {
  adapters: SqliteAdapters;
  control: Control;
  vault: Vault;
}

interface Context {
  dir: string;
  opened: Deployment[];
}

const test = suite<Context>('archive: the people an import checks and keeps');

test.before.each((context) => {
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-archive-people-'));
  context.opened = [];
});

test.after.each(async (context) => {
  for (const { adapters } of context.opened) await adapters.close();
  rmSync(context.dir, { recursive: true, force: true });
});

function open(context: Context, name: string, key: Buffer): Deployment {
  const adapters = openSqliteAdapters(path.join(context.dir, `${name}.db`));
  const vault = new Vault(new SecretBox(key));
  const deployment = { adapters, control: new Control(adapters.control, { vault, now: () => 1_700_000_000_000 }), vault };
  context.opened.push(deployment);
  return deployment;
}

const targets = ({ control, adapters, vault }: Deployment) => ({ control, reflections: adapters.reflections, accounts: adapters.control.accounts, vault });

async function exported(deployment: Deployment): Promise<string[]> {
  const lines: string[] = [];
  const { control, adapters, vault } = deployment;
  await exportArchive({ control, reflections: adapters.reflections, accounts: adapters.control.accounts, vault, engines: { control: 'sqlite', reflections: 'sqlite' } }, (line) => {
    lines.push(line);
  });
  return lines;
}

async function* linesOf(lines: readonly string[]): AsyncGenerator<string> {
  yield* lines;
}

/** A source with an org, a member whose hash is an old-parameter scrypt hash, an invited user, and a client. */
async function seeded(context: Context, key: Buffer) {
  const source = open(context, 'source', key);
  const org = await source.control.createOrg('acme');
  const ada: User = { ...newUser('ada@example.test', 'scrypt$16384$8$1$c2FsdA$aGFzaA', 1_000), orgIds: [org.id] };
  const invited: User = { ...newUser('bea@example.test', NO_PASSWORD, 2_000), orgIds: [org.id], invitation: { secretHash: 'ab'.repeat(32), expiresAt: 9_000 } };
  const client = newOAuthClient('Claude Code', ['http://127.0.0.1:43110/callback'], 3_000);
  const { accounts } = source.adapters.control;
  await accounts.createUser(ada);
  await accounts.createUser(invited);
  await accounts.createClient(client);
  return { source, org, ada, invited, client };
}

async function refused(run: () => Promise<unknown>): Promise<ArchiveError> {
  try {
    await run();
  } catch (error) {
    assert.instance(error, ArchiveError);
    return error as ArchiveError;
  }
  throw new Error('the import was not refused');
}

/** Nothing at all in the target: no org, user or client. */
async function untouched(target: Deployment): Promise<void> {
  assert.equal(await target.control.directory.listOrgs(), []);
  assert.equal(await target.adapters.control.accounts.listUsers(), []);
  assert.equal(await target.adapters.control.accounts.listClients(), []);
}

test('users and clients arrive exactly as stored, the hash as the source had it, the invitation whole', async (context) => {
  const key = randomBytes(32);
  const { source, ada, invited, client } = await seeded(context, key);
  const lines = await exported(source);
  assert.not.match(lines.join('\n'), 'scrypt$', 'the hash is sealed in the archive');
  const target = open(context, 'target', key);
  const result = await importArchive(targets(target), () => linesOf(lines));
  assert.equal([result.imported.users, result.imported.clients], [2, 1]);
  const { accounts } = target.adapters.control;
  assert.equal(await accounts.listUsers(), [ada, invited]);
  assert.equal(await accounts.findUserByEmail('ada@example.test'), ada);
  assert.equal(await accounts.listClients(), [client]);
});

test('importing twice duplicates no one and keeps what changed on the target since the first import', async (context) => {
  const key = randomBytes(32);
  const { source, invited, client } = await seeded(context, key);
  const lines = await exported(source);
  const target = open(context, 'target', key);
  await importArchive(targets(target), () => linesOf(lines));
  const { accounts } = target.adapters.control;
  // Bea accepts her invitation on the target: a password, no invitation any more.
  const accepted = await accounts.updateUser(invited.id, ({ invitation: _gone, ...user }) => ({ ...user, passwordHash: 'scrypt$16384$8$1$bmV3$bmV3' }));
  const before = await accounts.listUsers();
  const again = await importArchive(targets(target), () => linesOf(lines));
  assert.equal([again.imported.orgs, again.imported.users, again.imported.clients], [0, 0, 0]);
  assert.equal([again.skipped.orgs, again.skipped.users, again.skipped.clients], [1, 2, 1]);
  assert.equal(await accounts.listUsers(), before, 'the same two users, as the target has them');
  assert.equal(await accounts.getUser(invited.id), accepted, "Bea's accepted invitation is not undone");
  assert.equal(await accounts.listClients(), [client]);
});

test('another secret key cannot open a password hash: refused before anything is written', async (context) => {
  const { source } = await seeded(context, randomBytes(32));
  const lines = await exported(source);
  const target = open(context, 'target', randomBytes(32));
  const error = await refused(() => importArchive(targets(target), () => linesOf(lines)));
  assert.match(error.message, /the secret key does not open the password hash of user ada@example\.test/);
  await untouched(target);
});

test('an email that is another account in the target refuses the import before anything is written', async (context) => {
  const key = randomBytes(32);
  const { source } = await seeded(context, key);
  const lines = await exported(source);
  const target = open(context, 'target', key);
  const other = newUser('bea@example.test', 'scrypt$16384$8$1$b3RoZXI$b3RoZXI', 5_000);
  await target.adapters.control.accounts.createUser(other);
  const error = await refused(() => importArchive(targets(target), () => linesOf(lines)));
  assert.match(error.message, /user bea@example\.test conflicts with another account with that email in the target/);
  assert.equal(await target.control.directory.listOrgs(), [], 'not even the org before it');
  assert.equal(await target.adapters.control.accounts.listUsers(), [other]);
});

test('a malformed user or client, or a password hash in clear, is refused before anything is written', async (context) => {
  const key = randomBytes(32);
  const { source } = await seeded(context, key);
  const lines = await exported(source);
  const target = open(context, 'target', key);
  const change = (type: string, edit: (record: any) => void) =>
    lines.map((line) => {
      const record = JSON.parse(line);
      if (record.type !== type) return line;
      edit(record);
      return JSON.stringify(record);
    });
  for (const [archive, message] of [
    [change('user', (r) => (r.user.orgIds = 'org_1')), /a malformed user/],
    [change('user', (r) => (r.user.passwordHash = 'scrypt$in-clear')), /a malformed user/],
    [change('user', (r) => delete r.sealed_password), /a malformed user/],
    [change('user', (r) => (r.user.email = 'Ada@Example.test')), /a malformed user/],
    [change('user', (r) => (r.user.invitation = { secretHash: 7 })), /a malformed user/],
    [[...lines, lines.find((line) => JSON.parse(line).type === 'user')!], /user ada@example\.test is in the archive twice/],
    [change('oauth_client', (r) => (r.client.redirectUris = [7])), /a malformed OAuth client/],
  ] as const) {
    const error = await refused(() => importArchive(targets(target), () => linesOf(archive)));
    assert.match(error.message, message);
  }
  await untouched(target);
});

test('an organisation whose name another org of the target holds refuses the import before anything is written', async (context) => {
  const key = randomBytes(32);
  const { source } = await seeded(context, key);
  const lines = await exported(source);
  const target = open(context, 'target', key);
  const theirs = await target.control.createOrg('acme');
  const error = await refused(() => importArchive(targets(target), () => linesOf(lines)));
  assert.match(error.message, /organisation "acme" conflicts with another organisation of that name in the target/);
  assert.equal((await target.control.directory.listOrgs()).map((org) => org.id), [theirs.id]);
  assert.equal(await target.adapters.control.accounts.listUsers(), [], 'no user written either');
  assert.equal(await target.adapters.control.accounts.listClients(), []);
});

test("a version 2 archive, written before people were carried, still imports and leaves the target's people alone", async (context) => {
  const key = randomBytes(32);
  const { source, org } = await seeded(context, key);
  const [header, ...records] = await exported(source);
  assert.is(JSON.parse(header).version, 4);
  const v2 = [JSON.stringify({ ...JSON.parse(header), version: 2 }), ...records.filter((line) => !['user', 'oauth_client'].includes(JSON.parse(line).type))];
  const target = open(context, 'target', key);
  const present = newUser('cy@example.test', 'scrypt$16384$8$1$Y3k$Y3k', 4_000);
  await target.adapters.control.accounts.createUser(present);
  const result = await importArchive(targets(target), () => linesOf(v2));
  assert.equal([result.imported.orgs, result.imported.users, result.imported.clients], [1, 0, 0]);
  assert.equal((await target.control.directory.listOrgs()).map((o) => o.id), [org.id]);
  assert.equal(await target.adapters.control.accounts.listUsers(), [present]);
});

test.run();
