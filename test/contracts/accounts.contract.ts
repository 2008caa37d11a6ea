/**
 * The AccountStore contract (dashboard users, sessions, OAuth clients, grants, the
 * signing key): every adapter runs this same suite, written only against
 * src/ports/accounts.ts. Concurrent writers run on the harness's second replica when it
 * has one, so "atomic" means atomic across replicas, not only within one process.
 */
import * as assert from 'uvu/assert';
import {
  newOAuthClient,
  newSession,
  newUser,
  NO_PASSWORD,
  type OAuthGrant,
  type SigningKeyRecord,
  type User,
} from '../../src/domain/account-records.js';
import { newId } from '../../src/domain/ids.js';
import { EngramError } from '../../src/errors.js';
import type { AccountStore } from '../../src/ports/index.js';
import { harnessSuite, rejects } from './helpers.js';
import { tick, type ControlHarness } from './control-harness.js';

const conflict = (error: unknown) => error instanceof EngramError && error.code === 'conflict';

const user = (email: string) => newUser(email, `scrypt$16384$8$1$salt$${email}`, tick());

/** A grant whose code was handed out at `now` and is still unused. */
function grant(userId: string, options: { clientId?: string; createdAt?: number; now?: number } = {}): OAuthGrant {
  const now = options.now ?? tick();
  return {
    id: newId('grt'),
    userId,
    clientId: options.clientId ?? 'cli_a',
    orgId: 'org_a',
    agentId: 'agt_a',
    resource: 'https://engram.example.test/v0/mcp',
    scope: 'memory',
    code: { secretHash: `code-${now}`, codeChallenge: 'challenge', redirectUri: 'http://127.0.0.1:5000/cb', expiresAt: now + 60_000, usedAt: null },
    refreshHash: null,
    refreshExpiresAt: null,
    spentRefreshHashes: [],
    createdAt: options.createdAt ?? now,
    lastUsedAt: null,
    revokedAt: null,
  };
}

/** The code exchanged at `at`: the grant now lives on its refresh token until `refreshExpiresAt`. */
const exchanged = (g: OAuthGrant, at: number, refreshExpiresAt: number, refreshHash = 'refresh-1'): OAuthGrant => ({
  ...g,
  code: { ...g.code, usedAt: at },
  refreshHash,
  refreshExpiresAt,
  lastUsedAt: at,
});

/** One refresh: the live hash is spent and replaced, but only if it is still `expected`. */
const rotate = (expected: string, next: string) => (current: OAuthGrant): OAuthGrant => {
  if (current.refreshHash !== expected) throw new Error(`refresh token ${expected} was already used`);
  return { ...current, refreshHash: next, spentRefreshHashes: [...current.spentRefreshHashes, expected], lastUsedAt: tick() };
};

/** A user with a session, an OAuth client and a grant to it: one record of each kind. */
async function seedUser(s: AccountStore) {
  const ada = user('ada@example.test');
  await s.createUser(ada);
  const session = newSession(ada.id, 'h', tick(), 60_000);
  await s.createSession(session);
  const client = newOAuthClient('client', ['http://127.0.0.1/cb'], tick());
  await s.createClient(client);
  const g = grant(ada.id, { clientId: client.id });
  await s.createGrant(g);
  return { ada, session, client, g };
}

function signingKey(kid: string): SigningKeyRecord {
  return { kid, alg: 'EdDSA', sealedPrivateJwk: `sealed:${kid}`, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: kid }, createdAt: tick() };
}

export function accountsContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`AccountStore contract: ${name}`, open);
  const store = (context: { harness?: ControlHarness }): AccountStore => harness(context).stores.accounts;
  /** The harness's second replica, or the same store when it has none. */
  const second = async (context: { harness?: ControlHarness }): Promise<AccountStore> =>
    (await harness(context).peer?.())?.accounts ?? store(context);

  test('users: create, get by id and by email; odd emails round-trip', async (context) => {
    const s = store(context);
    const emails = ['ada@example.test', 'first.last+tag@sub.example.test', 'ünï.cødé@example.test', `${'x'.repeat(300)}@example.test`];
    const users = emails.map(user);
    for (const u of users) await s.createUser(u);
    for (const u of users) {
      assert.equal(await s.getUser(u.id), u);
      assert.equal(await s.findUserByEmail(u.email), u, u.email);
    }
    assert.is(await s.getUser('usr_missing'), undefined);
    assert.is(await s.findUserByEmail('nobody@example.test'), undefined);
    assert.is(await s.findUserByEmail('ada@example.tes'), undefined, 'no prefix match');
  });

  test('users: an email is unique; a conflicting create changes nothing', async (context) => {
    const s = store(context);
    const ada = user('ada@example.test');
    await s.createUser(ada);
    const twin = user('ada@example.test');
    assert.ok(conflict(await rejects(() => s.createUser(twin))), 'a taken email is a conflict');
    assert.is(await s.getUser(twin.id), undefined, 'nothing half-written');
    assert.equal(await s.findUserByEmail('ada@example.test'), ada, 'the email still finds the first user');
    assert.ok(conflict(await rejects(() => s.createUser({ ...ada, email: 'other@example.test' }))), 'an id is unique too');
    assert.equal(await s.getUser(ada.id), ada);
    assert.is(await s.findUserByEmail('other@example.test'), undefined);
    await s.createUser(user('other@example.test'));
  });

  test('users: concurrent creates of one email on two replicas, exactly one wins', async (context) => {
    const stores = [store(context), await second(context)];
    const rivals = stores.map(() => user('race@example.test'));
    const outcomes = await Promise.allSettled(rivals.map((u, i) => stores[i].createUser(u)));
    const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [rivals[i]] : []));
    assert.is(won.length, 1, 'one create succeeded');
    for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(conflict(outcome.reason), String(outcome.reason));
    for (const s of stores) assert.equal(await s.findUserByEmail('race@example.test'), won[0]);
  });

  test('updateUser: replaces the record; undefined for a missing user; a throwing change changes nothing', async (context) => {
    const s = store(context);
    const ada = user('ada@example.test');
    await s.createUser(ada);
    const updated = await s.updateUser(ada.id, (current) => {
      assert.equal(current, ada, 'change sees the stored record');
      return { ...current, orgIds: ['org_a'], passwordHash: 'scrypt$new' };
    });
    assert.equal(updated, { ...ada, orgIds: ['org_a'], passwordHash: 'scrypt$new' });
    assert.equal(await s.getUser(ada.id), updated);
    assert.equal(await s.findUserByEmail(ada.email), updated);
    assert.is(await s.updateUser('usr_missing', (current) => current), undefined);

    const boom = new Error('refused');
    assert.is(await rejects(() => s.updateUser(ada.id, () => { throw boom; })), boom, "the change's own error reaches the caller");
    assert.ok(await rejects(() => s.updateUser(ada.id, (current) => ({ ...current, email: 'new@example.test' }))), 'the email is kept');
    assert.equal(await s.getUser(ada.id), updated, 'nothing changed by either');
    assert.is(await s.findUserByEmail('new@example.test'), undefined);
  });

  test('updateUser: concurrent changes from two replicas all land', async (context) => {
    const writers = [store(context), await second(context)];
    const ada = user('ada@example.test');
    await writers[0].createUser(ada);
    const orgIds = Array.from({ length: 10 }, (_, i) => `org_${i}`);
    await Promise.all(orgIds.map((orgId, i) => writers[i % 2].updateUser(ada.id, (current) => ({ ...current, orgIds: [...current.orgIds, orgId] }))));
    const final = await writers[1].getUser(ada.id);
    assert.equal([...(final?.orgIds ?? [])].sort(), orgIds, 'every append kept, none twice');
  });

  test('users: an invitation and a password-less hash round-trip whole, and go again on update', async (context) => {
    const s = store(context);
    const invited: User = { ...newUser('invited@example.test', NO_PASSWORD, tick()), orgIds: ['org_a'], invitation: { secretHash: 'ab'.repeat(32), expiresAt: tick() + 60_000 } };
    await s.createUser(invited);
    assert.equal(await s.getUser(invited.id), invited);
    assert.equal(await s.findUserByEmail(invited.email), invited);
    const accepted = await s.updateUser(invited.id, ({ invitation: _accepted, ...current }) => ({ ...current, passwordHash: 'scrypt$accepted' }));
    assert.is(accepted?.invitation, undefined);
    assert.equal(await s.getUser(invited.id), accepted);
    assert.not.ok('invitation' in (await s.getUser(invited.id))!, 'no invitation left in the stored record');
  });

  test('listUsers: every user as last written, oldest first, on every replica', async (context) => {
    const s = store(context);
    assert.equal(await s.listUsers(), [], 'none yet');
    const base = tick();
    const newest = { ...user('newest@example.test'), createdAt: base + 2 };
    const oldest = { ...user('oldest@example.test'), createdAt: base };
    const middle = { ...user('middle@example.test'), createdAt: base + 1, invitation: { secretHash: 'cd'.repeat(32), expiresAt: base + 60_000 } };
    for (const u of [newest, oldest, middle]) await s.createUser(u);
    const joined = await s.updateUser(oldest.id, (current) => ({ ...current, orgIds: ['org_a'] }));
    assert.equal(await s.listUsers(), [joined, middle, newest]);
    assert.ok(conflict(await rejects(() => s.createUser(user('middle@example.test')))));
    assert.equal((await (await second(context)).listUsers()).map((u) => u.email), ['oldest@example.test', 'middle@example.test', 'newest@example.test']);
  });

  test('sessions: create, get (expired too), delete', async (context) => {
    const s = store(context);
    const now = tick();
    const live = newSession('usr_a', 'hash-live', now, 60_000);
    const expired = newSession('usr_a', 'hash-expired', now - 120_000, 60_000);
    await s.createSession(live);
    await s.createSession(expired);
    assert.equal(await s.getSession(live.id), live);
    assert.equal(await s.getSession(expired.id), expired, 'the caller judges expiry');
    assert.is(await s.getSession('ses_missing'), undefined);
    await s.deleteSession(live.id);
    assert.is(await s.getSession(live.id), undefined);
    await s.deleteSession(live.id);
    assert.equal(await s.getSession(expired.id), expired, 'only that session');
  });

  test('clients: create, get', async (context) => {
    const s = store(context);
    const client = newOAuthClient('Claude Code ✓', ['http://127.0.0.1:5000/cb', 'https://app.example.test/oauth/callback'], tick());
    await s.createClient(client);
    assert.equal(await s.getClient(client.id), client);
    assert.is(await s.getClient('cli_missing'), undefined);
  });

  test('listClients: every client, oldest first, on every replica', async (context) => {
    const s = store(context);
    assert.equal(await s.listClients(), [], 'none yet');
    const base = tick();
    const newest = { ...newOAuthClient('newest', ['http://127.0.0.1/b'], base), createdAt: base + 2 };
    const oldest = { ...newOAuthClient('oldest', ['http://127.0.0.1/a', 'https://app.example.test/cb'], base), createdAt: base };
    const twin = { ...newOAuthClient('twin', ['http://127.0.0.1/c'], base), createdAt: base + 1 };
    const other = { ...twin, id: `${twin.id}z`, name: 'twin z' };
    for (const c of [newest, twin, oldest, other]) await s.createClient(c);
    assert.ok(conflict(await rejects(() => s.createClient({ ...oldest, name: 'again' }))));
    assert.equal(await s.listClients(), [oldest, twin, other, newest], 'by creation, then id');
    assert.equal((await (await second(context)).listClients()).map((c) => c.name), ['oldest', 'twin', 'twin z', 'newest']);
  });

  test('clients: a first sign-in is recorded once, on every replica; an unknown client is no error', async (context) => {
    const s = store(context);
    const client = newOAuthClient('client', ['http://127.0.0.1/cb'], tick());
    assert.is(client.signedInAt, null, 'a new client has not signed in');
    await s.createClient(client);
    const first = tick();
    await s.clientSignedIn(client.id, first);
    assert.equal(await s.getClient(client.id), { ...client, signedInAt: first });
    await (await second(context)).clientSignedIn(client.id, tick());
    assert.equal(await s.getClient(client.id), { ...client, signedInAt: first }, 'the first time is kept');
    await s.clientSignedIn('cli_missing', tick());
    assert.is(await s.getClient('cli_missing'), undefined, 'nothing made up');
  });

  test('clients: counted; concurrent first sign-ins on two replicas keep one time', async (context) => {
    const writers = [store(context), await second(context)];
    assert.is(await writers[0].countClients(), 0);
    const clients = Array.from({ length: 5 }, (_, i) => newOAuthClient(`client ${i}`, ['http://127.0.0.1/cb'], tick()));
    for (const client of clients) await writers[0].createClient(client);
    assert.is(await writers[0].countClients(), 5);
    assert.is(await writers[1].countClients(), 5, 'on the other replica too');
    const times = [tick(), tick()];
    await Promise.all(writers.map((w, i) => w.clientSignedIn(clients[0].id, times[i])));
    const marked = await writers[1].getClient(clients[0].id);
    assert.ok(marked?.signedInAt === times[0] || marked?.signedInAt === times[1], String(marked?.signedInAt));
    assert.equal(await writers[0].getClient(clients[0].id), marked);
  });

  test('pruneClients: deletes clients never signed in, registered before the cutoff; keeps the rest', async (context) => {
    const s = store(context);
    const cutoff = tick() + 1_000_000;
    const clients = {
      unusedOld: newOAuthClient('unused old', ['http://127.0.0.1/cb'], cutoff - 10),
      unusedAtCutoff: newOAuthClient('unused at the cutoff', ['http://127.0.0.1/cb'], cutoff),
      unusedYoung: newOAuthClient('unused young', ['http://127.0.0.1/cb'], cutoff + 10),
      signedInOld: newOAuthClient('signed in old', ['http://127.0.0.1/cb'], cutoff - 20),
      markedLater: newOAuthClient('marked before the prune', ['http://127.0.0.1/cb'], cutoff - 30),
      // Written by a version that did not record sign-ins: unknown, so never taken for unused.
      older: (({ signedInAt: _unknown, ...rest }) => rest)(newOAuthClient('older record', ['http://127.0.0.1/cb'], cutoff - 40)),
    };
    for (const client of Object.values(clients)) await s.createClient(client);
    await s.clientSignedIn(clients.signedInOld.id, cutoff - 5);
    await s.clientSignedIn(clients.markedLater.id, cutoff + 50);

    assert.is(await s.pruneClients(cutoff), 1, 'only the old unused one');
    assert.is(await s.getClient(clients.unusedOld.id), undefined);
    for (const kept of [clients.unusedAtCutoff, clients.unusedYoung, clients.signedInOld, clients.markedLater, clients.older]) {
      assert.ok(await s.getClient(kept.id), kept.name);
    }
    assert.equal(await s.getClient(clients.older.id), clients.older, 'an older record round-trips as it was');
    assert.is(await s.countClients(), 5);
    assert.is(await s.pruneClients(cutoff), 0, 'nothing left to prune');
    assert.is(await (await second(context)).pruneClients(cutoff + 11), 2, 'later, the other two unused ones, from any replica');
    assert.is(await s.countClients(), 3);
  });

  test('grants: create, get, update; undefined for a missing grant; a throwing change changes nothing', async (context) => {
    const s = store(context);
    const g = grant('usr_a');
    await s.createGrant(g);
    assert.equal(await s.getGrant(g.id), g);
    assert.is(await s.getGrant('grt_missing'), undefined);
    const at = tick();
    const live = await s.updateGrant(g.id, (current) => exchanged(current, at, at + 86_400_000));
    assert.equal(live, exchanged(g, at, at + 86_400_000));
    const rotated = await s.updateGrant(g.id, rotate('refresh-1', 'refresh-2'));
    assert.is(rotated?.refreshHash, 'refresh-2');
    assert.equal(rotated?.spentRefreshHashes, ['refresh-1']);
    assert.equal(await s.getGrant(g.id), rotated);
    assert.is(await s.updateGrant('grt_missing', (current) => current), undefined);

    const error = await rejects(() => s.updateGrant(g.id, rotate('refresh-1', 'refresh-3')), /already used/);
    assert.instance(error, Error);
    assert.ok(await rejects(() => s.updateGrant(g.id, (current) => ({ ...current, userId: 'usr_b' }))), 'the user is kept');
    assert.equal(await s.getGrant(g.id), rotated, 'nothing changed by either');
  });

  test('grants: two concurrent rotations of one refresh token, exactly one wins', async (context) => {
    const writers = [store(context), await second(context)];
    const at = tick();
    const g = exchanged(grant('usr_a'), at, at + 86_400_000);
    await writers[0].createGrant(g);
    const outcomes = await Promise.allSettled(writers.map((w, i) => w.updateGrant(g.id, rotate('refresh-1', `refresh-next-${i}`))));
    const won = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : []));
    assert.is(won.length, 1, 'one rotation succeeded');
    const lost = outcomes.find((outcome) => outcome.status === 'rejected');
    assert.match(String(lost?.status === 'rejected' && lost.reason), /already used/, "the loser saw the winner's rotation");
    const final = await writers[1].getGrant(g.id);
    assert.equal(final, won[0]);
    assert.equal(final?.spentRefreshHashes, ['refresh-1'], 'spent once');
  });

  test("listGrants: only that user's, oldest first, revoked ones included", async (context) => {
    const s = store(context);
    const base = tick();
    const newer = grant('usr_a', { createdAt: base + 30 });
    const older = grant('usr_a', { createdAt: base + 10 });
    const others = grant('usr_b', { createdAt: base + 20 });
    for (const g of [newer, others, older]) await s.createGrant(g);
    await s.updateGrant(older.id, (current) => ({ ...current, revokedAt: base + 40 }));
    assert.equal((await s.listGrants('usr_a')).map((g) => g.id), [older.id, newer.id]);
    assert.is((await s.listGrants('usr_a'))[0].revokedAt, base + 40, 'as last written');
    assert.equal(await s.listGrants('usr_b'), [others]);
    assert.equal(await s.listGrants('usr_missing'), []);
  });

  test('signingKey: the first stored wins, also between concurrent callers on two replicas', async (context) => {
    const stores = [store(context), await second(context)];
    const [a, b] = await Promise.all([stores[0].signingKey(signingKey('kid-a')), stores[1].signingKey(signingKey('kid-b'))]);
    assert.equal(a, b, 'both got the same key');
    assert.ok(a.kid === 'kid-a' || a.kid === 'kid-b');
    assert.equal(await stores[0].signingKey(signingKey('kid-c')), a, 'a later candidate is ignored');
  });

  test('prune: deletes expired sessions and dead grants, keeps live ones', async (context) => {
    const s = store(context);
    const before = tick() + 1_000_000;
    const sessions = {
      expired: newSession('usr_a', 'h1', before - 10_000, 9_999),
      expiring: newSession('usr_a', 'h2', before - 10_000, 10_000),
      live: newSession('usr_a', 'h3', before, 60_000),
    };
    for (const session of Object.values(sessions)) await s.createSession(session);
    const fresh = grant('usr_a', { now: before - 1_000 });
    const grants = {
      revoked: { ...exchanged(grant('usr_a'), before - 5, before + 86_400_000), revokedAt: before - 1 },
      revokedLater: { ...exchanged(grant('usr_a'), before - 5, before + 86_400_000), revokedAt: before + 1 },
      codeExpired: { ...fresh, id: newId('grt'), code: { ...fresh.code, expiresAt: before - 1 } },
      codeLive: { ...fresh, id: newId('grt'), code: { ...fresh.code, expiresAt: before + 1 } },
      codeUsedLongAgo: exchanged({ ...fresh, id: newId('grt'), code: { ...fresh.code, expiresAt: before - 50_000 } }, before - 60_000, before + 60_000),
      refreshExpired: exchanged(grant('usr_a'), before - 100, before - 1),
      refreshLive: exchanged(grant('usr_a'), before - 100, before + 1),
    };
    for (const g of Object.values(grants)) await s.createGrant(g);

    assert.is(await s.prune(before), 4, 'one session and three grants');
    assert.is(await s.getSession(sessions.expired.id), undefined);
    assert.equal(await s.getSession(sessions.expiring.id), sessions.expiring, 'expiring exactly at `before` is kept');
    assert.equal(await s.getSession(sessions.live.id), sessions.live);
    for (const dead of [grants.revoked, grants.codeExpired, grants.refreshExpired]) assert.is(await s.getGrant(dead.id), undefined, dead.id);
    const kept = [grants.revokedLater, grants.codeLive, grants.codeUsedLongAgo, grants.refreshLive];
    for (const live of kept) assert.equal(await s.getGrant(live.id), live);
    const listed = (await s.listGrants('usr_a')).map((g) => g.id).sort();
    assert.equal(listed, kept.map((g) => g.id).sort(), 'pruned grants are no longer listed');
    assert.is(await s.prune(before), 0, 'nothing left to prune');
  });

  test('prune sees an update: a grant rotated to a new expiry is kept', async (context) => {
    const s = store(context);
    const at = tick();
    const g = exchanged(grant('usr_a'), at, at + 10);
    await s.createGrant(g);
    await s.updateGrant(g.id, (current) => ({ ...rotate('refresh-1', 'refresh-2')(current), refreshExpiresAt: at + 1_000 }));
    assert.is(await s.prune(at + 500), 0);
    assert.ok(await s.getGrant(g.id));
    await s.updateGrant(g.id, (current) => ({ ...current, revokedAt: at + 600 }));
    assert.is(await s.prune(at + 700), 1);
  });

  test('a second replica sees every record', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const s = h.stores.accounts;
    const peer = (await h.peer()).accounts;
    const { ada, session, client, g } = await seedUser(s);
    assert.equal(await peer.findUserByEmail(ada.email), ada);
    assert.equal(await peer.getSession(session.id), session);
    assert.equal(await peer.getClient(client.id), client);
    assert.equal(await peer.listGrants(ada.id), [g]);
    await peer.deleteSession(session.id);
    assert.is(await s.getSession(session.id), undefined);
    assert.ok(conflict(await rejects(() => peer.createUser(user('ada@example.test')))), 'emails are unique across replicas');
  });

  test('data survives reopening', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    const s = h.stores.accounts;
    const { ada, session, client, g } = await seedUser(s);
    const updated = await s.updateUser(ada.id, (current) => ({ ...current, orgIds: ['org_a'] }));
    const key = await s.signingKey(signingKey('kid-durable'));

    const reopened = (await h.reopen()).accounts;
    assert.equal(await reopened.getUser(ada.id), updated);
    assert.equal(await reopened.listUsers(), [updated]);
    assert.equal(await reopened.findUserByEmail(ada.email), updated);
    assert.equal(await reopened.getSession(session.id), session);
    assert.equal(await reopened.getClient(client.id), client);
    assert.equal(await reopened.getGrant(g.id), g);
    assert.equal(await reopened.listGrants(ada.id), [g]);
    assert.equal(await reopened.signingKey(signingKey('kid-other')), key, 'the same signing key after a restart');
    assert.ok(conflict(await rejects(() => reopened.createUser(user('ada@example.test')))));
  });

  test.run();
}
