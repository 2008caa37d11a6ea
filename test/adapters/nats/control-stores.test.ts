/**
 * The NATS KV control stores against a real nats-server (Debian's 2.9): the
 * contract suites, then what only this adapter family has (mirrors across replicas, NATS
 * going away, key encoding, the Object Store for large records and states, name claims).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { nanos } from '@nats-io/transport-node';
import { connectNats, type NatsContext } from '../../../src/adapters/nats/connection.js';
import { controlBuckets, controlStreams, openNatsControl, type NatsControlOptions, type NatsControlStores } from '../../../src/adapters/nats/control/index.js';
import { NatsConversationStore } from '../../../src/adapters/nats/control/conversations.js';
import { accountKeys, activityKeys, directoryKeys, keyPart, requestKeys } from '../../../src/adapters/nats/control/keys.js';
import { LargeValues } from '../../../src/adapters/nats/control/large-values.js';
import { updateConversation } from '../../../src/control/conversation-updates.js';
import { newSession, newUser } from '../../../src/domain/account-records.js';
import { newConversationState, type ConversationState } from '../../../src/domain/conversation-state.js';
import { emptyCounts } from '../../../src/domain/activity.js';
import { EngramError } from '../../../src/errors.js';
import { accountsContract } from '../../contracts/accounts.contract.js';
import { activityContract } from '../../contracts/activity.contract.js';
import { requestsContract } from '../../contracts/requests.contract.js';
import { conversationsContract } from '../../contracts/conversations.contract.js';
import { directoryContract } from '../../contracts/directory.contract.js';
import { responsesContract } from '../../contracts/responses.contract.js';
import { rootIndexContract } from '../../contracts/root-index.contract.js';
import { agentEntry, org, token, type ControlHarness } from '../../contracts/control-harness.js';
import { rejects, sleep, waitFor } from '../../contracts/helpers.js';
import { startNatsServer, type NatsServer } from '../../support/nats-server.js';

const TIMEOUT_MS = 2_000;
const server = await startNatsServer();
const admin = await connectNats({ url: server.url, timeoutMs: TIMEOUT_MS, name: 'engram test admin' });
let prefixes = 0;

interface Replica {
  ctx: NatsContext;
  stores: NatsControlStores;
  /** What the stores reported through `onError`. */
  errors: string[];
}

async function replica(at: NatsServer, prefix: string, options: NatsControlOptions = {}): Promise<Replica> {
  const ctx = await connectNats({ url: at.url, timeoutMs: TIMEOUT_MS, name: `engram test ${prefix}` });
  const errors: string[] = [];
  const onError = (error: unknown, context: string) => errors.push(`${context}: ${error instanceof Error ? error.message : String(error)}`);
  try {
    return { ctx, errors, stores: await openNatsControl(ctx, { prefix, onError, ...options }) };
  } catch (error) {
    await ctx.close();
    throw error;
  }
}

async function closeReplica(r: Replica): Promise<void> {
  await r.stores.close();
  await r.ctx.close();
}

type NatsHarness = ControlHarness & Required<Pick<ControlHarness, 'reopen' | 'peer'>>;

/** A fresh bucket prefix per harness, so tests share the server but no data; replicas on their own connections. */
async function openHarness(): Promise<NatsHarness> {
  const prefix = `t${++prefixes}`;
  let current = await replica(server, prefix);
  const all = [current];
  return {
    stores: current.stores,
    reopen: async () => {
      await closeReplica(current);
      current = await replica(server, prefix);
      all.push(current);
      return current.stores;
    },
    peer: async () => {
      const peer = await replica(server, prefix);
      all.push(peer);
      return peer.stores;
    },
    cleanup: async () => {
      for (const r of all) await closeReplica(r);
      for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
      const reported = all.flatMap((r) => r.errors);
      assert.equal(reported, [], 'nothing reported through onError');
    },
  };
}

directoryContract('nats kv', openHarness);
conversationsContract('nats kv', openHarness);
responsesContract('nats kv', openHarness);
rootIndexContract('nats kv', openHarness);
accountsContract('nats kv', openHarness);
activityContract('nats kv', openHarness);
requestsContract('nats kv', openHarness);

const nats = suite('NATS control stores');

const streamMessages = async (ctx: NatsContext, stream: string) => (await ctx.jsm.streams.info(stream)).state.messages;

nats('keyPart: ids pass unchanged; anything else is encoded injectively into one key token', () => {
  assert.is(keyPart('agt_3fK9aZ-x'), 'agt_3fK9aZ-x');
  const odd = ['', 'a.b', 'a', '=YQ', '==x', 'with space', 'ünï ✓', '>', '*', 'a/b', 'x'.repeat(129), 'é'.repeat(300)];
  const parts = odd.map(keyPart);
  assert.is(new Set(parts).size, odd.length, 'no two values share a part');
  for (const part of parts) assert.match(part, /^[-_=A-Za-z0-9]+$/, 'one token: no dots, only key characters');
  assert.ok(keyPart('é'.repeat(300)).startsWith('=='), 'a long value becomes a digest');
  assert.ok(keyPart('é'.repeat(300)).length < 50);
});

nats('odd names and ids round-trip and stay apart', async () => {
  const h = await openHarness();
  try {
    const { directory: d, conversations: c, responses: r, indexes: i } = h.stores;
    const names = ['with spaces', 'ünïcødé ✓', 'dots.in.name', 'a', '=YQ', '>', 'n'.repeat(300), 'é'.repeat(300)];
    for (const name of names) {
      const created = org(name);
      await d.createOrg(created);
      assert.equal(await d.getOrg(name), created, name);
      const clash = await rejects(() => d.createOrg(org(name)));
      assert.ok(clash instanceof EngramError && clash.code === 'conflict', `${name} is taken`);
      const entry = agentEntry(created.id, name);
      await d.createAgent(entry);
      assert.equal(await d.getAgent(created.id, name), entry.agent);
    }
    assert.is((await d.listOrgs()).length, names.length);

    // Agent ids of any shape behind the other ports; `a` must not reach `a.b`'s keys.
    const agents = ['a', 'a.b', 'a.>', '', 'x'.repeat(2_000)];
    const ids = ['c1', 'a.b', '>', '', 'é'.repeat(5_000)];
    for (const agentId of agents) {
      for (const id of ids) {
        const state = newConversationState(agentId, id, 'messages', 1);
        assert.ok((await c.put(state, undefined)) !== undefined);
        assert.equal((await c.get(agentId, id))?.value, state);
        await c.markSession(agentId, id, 1);
        await r.put({ id, agentId, conversationId: 'c', previousResponseId: null, createdAt: 1, sealed: `${agentId}/${id}` });
      }
      await i.put(agentId, `index of ${agentId}`);
    }
    await c.deleteAgent('a');
    await r.deleteAgent('a');
    await i.delete('a');
    assert.is(await c.get('a', 'c1'), undefined);
    assert.is(await c.hasSession('a', '>'), false);
    assert.is(await r.get('a', 'c1'), undefined);
    assert.is(await i.get('a'), undefined);
    for (const agentId of agents.slice(1)) {
      for (const id of ids) {
        assert.ok(await c.get(agentId, id), `conversation ${agentId.slice(0, 9)} ${id.slice(0, 9)} kept`);
        assert.ok(await c.hasSession(agentId, id));
        assert.is((await r.get(agentId, id))?.sealed, `${agentId}/${id}`);
      }
      assert.is(await i.get(agentId), `index of ${agentId}`);
    }
  } finally {
    await h.cleanup();
  }
});

nats('concurrent creates of one name on two replicas: exactly one wins', async () => {
  const h = await openHarness();
  try {
    const replicas = [h.stores.directory, (await h.peer()).directory];
    const attempts = Array.from({ length: 10 }, (_, n) => replicas[n % 2].createOrg(org('race')));
    const results = await Promise.allSettled(attempts);
    assert.is(results.filter((result) => result.status === 'fulfilled').length, 1);
    for (const result of results) {
      if (result.status === 'rejected') assert.ok(result.reason instanceof EngramError && result.reason.code === 'conflict');
    }
    assert.equal((await h.stores.directory.listOrgs()).map((o) => o.name), ['race']);
  } finally {
    await h.cleanup();
  }
});

nats('a name claim left by a crash is free once stale; a live one never is', async () => {
  const prefix = `claims${++prefixes}`;
  const r = await replica(server, prefix, { staleClaimMs: 300 });
  try {
    const kv = await new Kvm(r.ctx.js).open(controlBuckets(prefix).directory);
    // What a crash between claiming "ghost" and writing its record leaves behind.
    await kv.put(directoryKeys.orgName('ghost'), JSON.stringify({ id: 'org_ghost', name: 'ghost' }));
    const young = await rejects(() => r.stores.directory.createOrg(org('ghost')));
    assert.ok(young instanceof EngramError && young.code === 'conflict', 'a young claim may still be in flight');
    await r.stores.directory.createOrg(org('alive'));
    await sleep(400);
    const ghost = org('ghost');
    await r.stores.directory.createOrg(ghost);
    assert.equal(await r.stores.directory.getOrg('ghost'), ghost);
    const alive = await rejects(() => r.stores.directory.createOrg(org('alive')));
    assert.ok(alive instanceof EngramError && alive.code === 'conflict', 'an old claim with its record stands');
  } finally {
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats('accounts: an email claim or a grant marker left by a crash is cleared once stale; removals leave no markers', async () => {
  const prefix = `accounts${++prefixes}`;
  const r = await replica(server, prefix, { staleClaimMs: 300 });
  try {
    const a = r.stores.accounts;
    const stream = `KV_${controlBuckets(prefix).accounts}`;
    const kv = await new Kvm(r.ctx.js).open(controlBuckets(prefix).accounts);
    // What a crash between claiming an email and writing its user leaves behind.
    await kv.put(accountKeys.email('ghost@example.test'), JSON.stringify({ id: 'usr_ghost', name: 'ghost@example.test' }));
    const ghost = newUser('ghost@example.test', 'hash', 1);
    const young = await rejects(() => a.createUser(ghost));
    assert.ok(young instanceof EngramError && young.code === 'conflict', 'a young claim may still be in flight');
    assert.is(await a.findUserByEmail('ghost@example.test'), undefined, 'a claim without its user finds nobody');
    // What a crash between writing a grant's marker and the grant leaves behind.
    const marker = accountKeys.userGrant('usr_a', 'grt_lost');
    await kv.put(marker, JSON.stringify({ userId: 'usr_a', grantId: 'grt_lost' }));
    assert.equal(await a.listGrants('usr_a'), [], 'a marker without its grant lists nothing');
    const session = newSession('usr_a', 'hash', 1, 1);
    await a.createSession(session);
    await a.createSession(newSession('usr_a', 'hash', 1, 1));
    await a.deleteSession(session.id);
    assert.is(await a.prune(10), 1);
    assert.is((await kv.get(marker))?.operation, 'PUT', 'a young marker may still get its grant');

    await sleep(400);
    await a.createUser(ghost);
    assert.equal(await a.findUserByEmail(ghost.email), ghost, 'the stale claim was taken over');
    assert.is(await a.prune(10), 0);
    assert.is(await kv.get(marker), null, 'the stale marker was swept');
    assert.is(await streamMessages(r.ctx, stream), 2, 'the claim and the user; no delete markers');
  } finally {
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats('activity: one key per agent and day; a day an older version wrote reads its spend as 0; deleteAgent and prune purge, leaving no markers', async () => {
  const prefix = `activity${++prefixes}`;
  const r = await replica(server, prefix);
  try {
    const a = r.stores.activity;
    const stream = `KV_${controlBuckets(prefix).activity}`;
    for (const agentId of ['agt_a', 'agt_b']) {
      for (const day of ['2024-03-04', '2024-03-05', '2024-03-06']) await a.add(agentId, day, { requests: 1 });
      await a.add(agentId, '2024-03-06', { injected: 1 });
    }
    assert.is(await streamMessages(r.ctx, stream), 6, 'an update replaces its day: one message per agent and day');
    await a.deleteAgent('agt_b');
    assert.is(await a.prune('2024-03-05'), 1);
    assert.is(await streamMessages(r.ctx, stream), 2, 'no delete markers');
    const kv = await new Kvm(r.ctx.js).open(controlBuckets(prefix).activity);
    assert.equal((await kv.get(activityKeys.day('agt_a', '2024-03-06')))?.json(), { agentId: 'agt_a', day: '2024-03-06', ...emptyCounts(), requests: 1, injected: 1 });
    // A day an older version wrote holds only the first three counts: the spend reads 0, and adds to it.
    await kv.put(activityKeys.day('agt_c', '2024-03-06'), JSON.stringify({ agentId: 'agt_c', day: '2024-03-06', requests: 4, injected: 2, extractions: 1 }));
    assert.equal(await a.read('agt_c', '2024-03-01'), [{ day: '2024-03-06', ...emptyCounts(), requests: 4, injected: 2, extractions: 1 }]);
    await a.add('agt_c', '2024-03-06', { extractionCalls: 1, extractionInputTokens: 50 });
    assert.equal(await a.read('agt_c', '2024-03-01'), [{ day: '2024-03-06', ...emptyCounts(), requests: 4, injected: 2, extractions: 1, extractionCalls: 1, extractionInputTokens: 50 }]);
  } finally {
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats('request log: its bucket keeps messages the retention; a changed retention reaches an existing bucket; prune and deleteAgent leave no markers', async () => {
  const prefix = `requests${++prefixes}`;
  const DAY = 24 * 3600_000;
  const stream = `KV_${controlBuckets(prefix).requests}`;
  let r = await replica(server, prefix, { requestLogMs: 3 * DAY });
  try {
    assert.is((await r.ctx.jsm.streams.info(stream)).config.max_age, nanos(3 * DAY));
    const entry = (id: string, agentId: string, at: number) => ({
      id, agentId, at, protocol: 'messages', conversationId: null, status: 200, outcome: 'settled', latencyMs: 1, upstreamMs: 1, injected: [],
      kept: [], rebuilt: null, reason: null, bar: null, nearMisses: [], scope: null, user: null, answerLimit: null,
    });
    await r.stores.requests.append(entry('req_1', 'agt_a', 10));
    await r.stores.requests.append(entry('req_2', 'agt_a', 20));
    await r.stores.requests.append(entry('req_3', 'agt_b', 20));
    await closeReplica(r);
    r = await replica(server, prefix, { requestLogMs: 1 * DAY });
    assert.is((await r.ctx.jsm.streams.info(stream)).config.max_age, nanos(1 * DAY), 'the new retention');
    assert.is((await r.stores.requests.list('agt_a', { limit: 5 })).entries.length, 2, 'entries kept across the change');
    assert.is(await r.stores.requests.prune(15), 1);
    await r.stores.requests.deleteAgent('agt_b');
    assert.is(await streamMessages(r.ctx, stream), 1, 'no delete markers');
    assert.equal((await r.stores.requests.list('agt_a', { limit: 5 })).entries.map((e) => e.id), ['req_2']);
  } finally {
    await closeReplica(r);
    for (const name of controlStreams(prefix)) await admin.jsm.streams.delete(name).catch(() => undefined);
  }
});

nats('request log: entries an older version wrote read with the fields they lacked (nothing kept, reason from `skipped`, injected `score` as relevance) and are filtered alike', async () => {
  const prefix = `oldrequests${++prefixes}`;
  const r = await replica(server, prefix);
  try {
    const kv = await new Kvm(r.ctx.js).open(controlBuckets(prefix).requests);
    const base = { agentId: 'agt_a', protocol: 'messages', conversationId: 'cnv_1', status: 200, outcome: 'settled', latencyMs: 1, upstreamMs: 1 };
    // Before issue 25 (no scope fields), before issue 32 (`score`, `skipped`), and the bare shape in between.
    await kv.put(requestKeys.request('agt_a', 'req_1'), JSON.stringify({ ...base, id: 'req_1', at: 10, injected: [{ reflectionId: 'ref_a', score: 0.61, why: 'tags' }] }));
    await kv.put(requestKeys.request('agt_a', 'req_2'), JSON.stringify({ ...base, id: 'req_2', at: 20, injected: [], scope: 'shop', user: null, skipped: 'client_chore' }));
    await kv.put(requestKeys.request('agt_a', 'req_3'), JSON.stringify({ ...base, id: 'req_3', at: 30, injected: [], scope: null, user: null, skipped: null }));
    const empty = { kept: [], rebuilt: null, bar: null, nearMisses: [], answerLimit: null };
    assert.equal(await r.stores.requests.get('agt_a', 'req_1'), {
      ...base, id: 'req_1', at: 10, injected: [{ reflectionId: 'ref_a', relevance: 0.61, why: 'tags' }], ...empty, reason: null, scope: null, user: null,
    });
    assert.equal(await r.stores.requests.get('agt_a', 'req_2'), { ...base, id: 'req_2', at: 20, injected: [], ...empty, reason: 'client_chore', scope: 'shop', user: null });
    const nothing = await r.stores.requests.list('agt_a', { limit: 1, nothingAdded: true });
    assert.equal(nothing.entries.map((e) => e.id), ['req_3'], 'an older entry that got nothing counts as nothing added, without a reason');
    assert.equal((await r.stores.requests.list('agt_a', { limit: 5, cursor: nothing.cursor, nothingAdded: true })).entries.map((e) => e.id), ['req_2']);
    assert.equal((await r.stores.requests.list('agt_a', { limit: 5, nothingAdded: false })).entries.map((e) => e.id), ['req_1']);
  } finally {
    await closeReplica(r);
    for (const name of controlStreams(prefix)) await admin.jsm.streams.delete(name).catch(() => undefined);
  }
});

nats('a second replica sees a revocation within milliseconds, from its own mirror', async () => {
  const h = await openHarness();
  try {
    const d = h.stores.directory;
    const peer = (await h.peer()).directory;
    const acme = org('acme');
    await d.createOrg(acme);
    const entry = agentEntry(acme.id, 'helper');
    await d.createAgent(entry);
    const record = token(entry.agent);
    await d.createToken(record, 'shared');
    await waitFor(async () => (await peer.findToken('shared')) !== undefined, 3_000, 'the token on the peer');
    const started = Date.now();
    await d.revokeToken(entry.agent.id, record.id, Date.now());
    await waitFor(async () => (await peer.findToken('shared')) === undefined, 3_000, 'the revocation on the peer');
    assert.ok(Date.now() - started < 1_000, `revocation reached the peer in ${Date.now() - started} ms`);
  } finally {
    await h.cleanup();
  }
});

nats('a watch whose consumer vanished is restarted, so a replica that only reads catches up', async () => {
  const prefix = `lost${++prefixes}`;
  const writer = await replica(server, prefix, { watchCheckMs: 200 });
  const reader = await replica(server, prefix, { watchCheckMs: 200 });
  try {
    const stream = `KV_${controlBuckets(prefix).directory}`;
    await writer.stores.directory.createOrg(org('first'));
    await waitFor(async () => (await reader.stores.directory.getOrg('first')) !== undefined, 3_000, 'both watches running');
    // What a server that kept the consumers only in memory, or a leader change, does to the watches.
    const consumers = await (await admin.jsm.consumers.list(stream)).next();
    assert.is(consumers.length, 2);
    for (const consumer of consumers) await admin.jsm.consumers.delete(stream, consumer.name);
    await writer.stores.directory.createOrg(org('second'));
    await waitFor(async () => (await reader.stores.directory.getOrg('second')) !== undefined, 3_000, 'the org on the reader');
    assert.ok(reader.errors.some((e) => e.includes('stalled')), 'the stall was reported');
  } finally {
    await closeReplica(writer);
    await closeReplica(reader);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats("a write resolves once its own replica's mirror has it, even when the watch had to be restarted", async () => {
  const prefix = `ryw${++prefixes}`;
  const r = await replica(server, prefix, { watchCheckMs: 60_000 });
  try {
    const stream = `KV_${controlBuckets(prefix).directory}`;
    await r.stores.directory.createOrg(org('first'));
    for (const consumer of await (await admin.jsm.consumers.list(stream)).next()) await admin.jsm.consumers.delete(stream, consumer.name);
    const second = org('second');
    await r.stores.directory.createOrg(second);
    assert.equal(await r.stores.directory.getOrg('second'), second);
    assert.ok(r.errors.some((e) => e.includes('has not applied revision')), 'the lag was reported');
  } finally {
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats('NATS down: reads answer from the mirror, writes fail clearly; after a restart both work again', async () => {
  const own = await startNatsServer();
  const a = await replica(own, 'r');
  const b = await replica(own, 'r');
  try {
    const acme = org('acme');
    await a.stores.directory.createOrg(acme);
    const entry = agentEntry(acme.id, 'helper');
    await a.stores.directory.createAgent(entry);
    const used = token(entry.agent, 'used');
    await a.stores.directory.createToken(used, 'used');
    await a.stores.directory.createToken(token(entry.agent, 'fresh'), 'fresh');
    await a.stores.directory.findToken('used');
    await waitFor(async () => (await b.stores.directory.listTokens(entry.agent.id)).length === 2, 3_000, 'the peer caught up');

    await own.stop();
    const started = Date.now();
    assert.is((await a.stores.directory.findToken('used'))?.token.id, used.id);
    assert.ok(await a.stores.directory.findToken('fresh'), 'a first use answers without waiting for its lastUsedAt write');
    assert.equal(await b.stores.directory.getOrg('acme'), acme);
    assert.is((await b.stores.directory.listAgents(acme.id)).length, 1);
    assert.ok(Date.now() - started < 200, 'reads never waited for NATS');

    const writes: [string, () => Promise<unknown>][] = [
      ['createOrg', () => a.stores.directory.createOrg(org('down'))],
      ['put', () => a.stores.conversations.put(newConversationState('agt_a', 'c', 'messages', 1), undefined)],
      ['get', () => a.stores.responses.get('agt_a', 'resp_1')],
      ['put', () => a.stores.indexes.put('agt_a', '# index')],
      ['add', () => a.stores.activity.add('agt_a', '2024-03-05', { requests: 1 })],
    ];
    const began = Date.now();
    const failures = await Promise.all(writes.map(([operation, write]) => rejects(write, new RegExp(`NATS KV \\w+: ${operation} failed: NATS is unreachable`))));
    for (const failure of failures) assert.ok(failure instanceof EngramError && failure.code === 'unavailable', 'a 503, not an internal error');
    assert.ok(Date.now() - began < TIMEOUT_MS + 1_500, 'each failed within the timeout');
    await waitFor(() => a.errors.some((e) => e.startsWith('recording a use of token')), TIMEOUT_MS + 2_000, 'the lastUsedAt failure reported');

    await own.restart({ downMs: 300 });
    const after = org('after');
    await waitFor(
      async () => {
        try {
          await a.stores.directory.createOrg(after);
          return true;
        } catch (error) {
          return error instanceof EngramError && error.code === 'conflict'; // an earlier attempt landed
        }
      },
      10_000,
      'a write after the restart',
    );
    assert.equal(await a.stores.directory.getOrg('after'), after, 'read-your-writes after the restart');
    await waitFor(async () => (await b.stores.directory.getOrg('after')) !== undefined, 3_000, 'the peer after the restart');
    await b.stores.directory.revokeToken(entry.agent.id, used.id, Date.now());
    await waitFor(async () => (await a.stores.directory.findToken('used')) === undefined, 3_000, 'the revocation after the restart');
    assert.equal(
      [...a.errors, ...b.errors].filter((e) => e.includes('has not applied revision')),
      [],
      'the watches resumed on reconnect, without waiting for a lag to be noticed',
    );
  } finally {
    await closeReplica(a);
    await closeReplica(b);
    await own.cleanup();
  }
});

nats('large records go to the Object Store (max_payload read from the server) and leave nothing behind', async () => {
  const small = await startNatsServer({ jetstreamMaxPayload: 64 * 1024 });
  const r = await replica(small, 'p');
  try {
    assert.is(r.ctx.nc.info?.max_payload, 64 * 1024);
    const buckets = controlBuckets('p');
    const kv = await new Kvm(r.ctx.js).open(buckets.responses);
    const bodies = `OBJ_${buckets.responseBodies}`;
    const big = (id: string, createdAt: number, agentId = 'agt_a') => ({
      id,
      agentId,
      conversationId: 'c',
      previousResponseId: null,
      createdAt,
      sealed: `v1:${id}:${'z'.repeat(200 * 1024)}`,
    });
    const s = r.stores.responses;
    await s.put(big('resp_1', 1));
    assert.equal(await s.get('agt_a', 'resp_1'), big('resp_1', 1));
    const stored = await kv.get('resp.agt_a.resp_1');
    assert.ok(stored && stored.length < 1024, 'the KV value is a pointer');
    assert.ok((await streamMessages(r.ctx, bodies)) > 1, 'chunked into the object store');

    await s.put({ ...big('resp_1', 2), sealed: 'small' });
    assert.is((await s.get('agt_a', 'resp_1'))?.sealed, 'small');
    assert.is(await streamMessages(r.ctx, bodies), 0, 'replaced by a small record: object and its metadata gone');

    await s.put(big('resp_2', 1));
    assert.ok(await s.delete('agt_a', 'resp_2'));
    await s.put(big('resp_3', 1));
    assert.is(await s.prune(5), 2, 'resp_1 and resp_3');
    await s.put(big('resp_4', 10, 'agt_b'));
    await s.deleteAgent('agt_b');
    assert.is(await streamMessages(r.ctx, bodies), 0, 'delete, prune and deleteAgent remove objects too');
    assert.is(await streamMessages(r.ctx, `KV_${buckets.responses}`), 0, 'and leave no delete markers');
  } finally {
    await closeReplica(r);
    await small.cleanup();
  }
});

nats('prune sweeps objects no record points to, once they are an hour old', async () => {
  const prefix = `sweep${++prefixes}`;
  let clock = Date.now();
  const r = await replica(server, prefix, { now: () => clock });
  try {
    const bodies = await new Objm(r.ctx.js).open(controlBuckets(prefix).responseBodies);
    // What a pointer write that failed after its object was stored leaves behind.
    await bodies.putBlob({ name: 'agt_a.resp_orphan' }, new Uint8Array(10));
    const big = { id: 'resp_big', agentId: 'agt_a', conversationId: 'c', previousResponseId: null, createdAt: 10, sealed: 'b'.repeat(1_100_000) };
    await r.stores.responses.put(big);
    assert.is(await r.stores.responses.prune(5), 0);
    assert.ok(await bodies.info('agt_a.resp_orphan'), 'a young orphan may still get its pointer');
    clock += 61 * 60 * 1000;
    assert.is(await r.stores.responses.prune(5), 0);
    assert.is(await bodies.info('agt_a.resp_orphan'), null, 'swept, metadata included');
    assert.is((await r.stores.responses.get('agt_a', 'resp_big'))?.sealed.length, big.sealed.length, 'a referenced object stays');
  } finally {
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

/** A state whose JSON is about `kb` KB: a conversation that kept `blocks` blocks. */
function conversationOf(agentId: string, id: string, blocks: number, kb: number, lastActivityAt = 1): ConversationState {
  const insertions = Array.from({ length: blocks }, (_, index) => ({
    index,
    messageHash: `m${index}`,
    block: `<engram-reflections>${index}:${'r'.repeat(Math.ceil((kb * 1024) / Math.max(blocks, 1)))}</engram-reflections>`,
    kind: 'reflections' as const,
  }));
  return { ...newConversationState(agentId, id, 'messages', lastActivityAt), insertions };
}

/** The live objects of the shared Object Store, by name. */
async function objectNames(ctx: NatsContext, prefix: string): Promise<string[]> {
  const os = await new Objm(ctx.js).open(controlBuckets(prefix).responseBodies);
  return (await os.list()).map((info) => info.name).sort();
}

nats('large conversation states go to the Object Store under fresh names; growing, replacing and shrinking leave no object behind', async () => {
  const small = await startNatsServer({ jetstreamMaxPayload: 64 * 1024 });
  const r = await replica(small, 'p');
  try {
    const c = r.stores.conversations;
    const buckets = controlBuckets('p');
    const kv = await new Kvm(r.ctx.js).open(buckets.conversations);
    const key = 'conv.agt_a.c1';
    const objects = `OBJ_${buckets.responseBodies}`;

    const first = conversationOf('agt_a', 'c1', 3, 1);
    let revision = await c.put(first, undefined);
    assert.ok(revision !== undefined);
    assert.equal((await kv.get(key))?.json(), first, 'a small state is the KV value itself');

    const large = conversationOf('agt_a', 'c1', 40, 200);
    revision = await c.put(large, revision);
    assert.ok(revision !== undefined);
    const pointer = (await kv.get(key))?.json<{ object: string; lastActivityAt: number }>();
    assert.ok(pointer && (await kv.get(key))!.length < 1024, 'the KV value is a pointer');
    assert.equal(await objectNames(r.ctx, 'p'), [pointer.object]);
    assert.ok(pointer.object.startsWith('conv/agt_a.c1.'), pointer.object);
    assert.ok((await streamMessages(r.ctx, objects)) > 2, 'chunked to the small max_payload');
    assert.equal(await c.get('agt_a', 'c1'), { value: large, revision });

    const larger = { ...conversationOf('agt_a', 'c1', 60, 300), lastActivityAt: 5 };
    const stale = revision;
    revision = await c.put(larger, revision);
    assert.ok(revision !== undefined);
    const replaced = (await kv.get(key))?.json<{ object: string; lastActivityAt: number }>();
    assert.ok(replaced && replaced.object !== pointer.object, 'a fresh name per write');
    assert.is(replaced.lastActivityAt, 5);
    assert.equal(await objectNames(r.ctx, 'p'), [replaced.object], 'the replaced object is gone');
    assert.is(await c.put(large, stale), undefined, 'a stale large write is refused');
    assert.equal(await objectNames(r.ctx, 'p'), [replaced.object], 'and leaves no object');
    assert.equal((await c.get('agt_a', 'c1'))?.value, larger);

    const shrunk = conversationOf('agt_a', 'c1', 1, 1);
    revision = await c.put(shrunk, revision);
    assert.ok(revision !== undefined);
    assert.equal(await c.get('agt_a', 'c1'), { value: shrunk, revision });
    assert.is(await streamMessages(r.ctx, objects), 0, 'back to small: the object and its metadata are gone');
  } finally {
    await closeReplica(r);
    await small.cleanup();
  }
});

nats('a small state costs one request per get and per put', async () => {
  const prefix = `cost${++prefixes}`;
  const r = await replica(server, prefix);
  // A connection of its own with no watch on it, so its counters see only the store.
  const ctx = await connectNats({ url: server.url, timeoutMs: TIMEOUT_MS, name: 'engram test cost' });
  try {
    const buckets = controlBuckets(prefix);
    const kv = await new Kvm(ctx.js).open(buckets.conversations);
    const os = await new Objm(ctx.js).open(buckets.responseBodies);
    const values = new LargeValues(os, ctx.jsm, { bucket: buckets.responseBodies, idleMs: TIMEOUT_MS, now: Date.now, onError: (error) => assert.unreachable(String(error)) });
    const c = new NatsConversationStore(ctx, kv, values, { bucket: buckets.conversations, timeoutMs: TIMEOUT_MS });
    const requests = async (run: () => Promise<unknown>) => {
      const before = ctx.nc.stats().outMsgs;
      await run();
      return ctx.nc.stats().outMsgs - before;
    };
    const state = conversationOf('agt_a', 'c1', 3, 1);
    let revision: number | undefined;
    assert.is(await requests(async () => (revision = await c.put(state, undefined))), 1, 'create');
    assert.is(await requests(() => c.get('agt_a', 'c1')), 1, 'get');
    assert.is(await requests(async () => (revision = await c.put({ ...state, extractedTurns: 1 }, revision))), 1, 'update');
    assert.is(await requests(async () => c.put({ ...state, extractedTurns: 2 }, 2)), 1, 'a refused update');
    assert.equal(await r.stores.conversations.get('agt_a', 'c1'), { value: { ...state, extractedTurns: 1 }, revision }, 'the same revisions as every replica');
  } finally {
    await ctx.close();
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats('concurrent writers on a large state lose nothing and leave one object', async () => {
  const small = await startNatsServer({ jetstreamMaxPayload: 64 * 1024 });
  const a = await replica(small, 'p');
  const b = await replica(small, 'p');
  try {
    const writers = [a.stores.conversations, b.stores.conversations];
    const agentId = 'agt_a';
    const id = 's:session:long';
    const opening = conversationOf(agentId, id, 30, 100);
    await writers[0].put(opening, undefined);
    const marks = [3, 7, 5, 12, 9, 1, 11, 4];
    const blocks = [100, 101, 102, 103, 104, 105, 106, 107];
    const block = (index: number) => ({ index, messageHash: `m${index}`, block: `<engram-reflections>${'b'.repeat(4_000)}</engram-reflections>`, kind: 'reflections' as const });
    await Promise.all([
      ...marks.map((upTo, i) =>
        updateConversation(writers[i % 2], agentId, id, (current) => current && { ...current, extractedTurns: Math.max(current.extractedTurns, upTo) }),
      ),
      ...blocks.map((index, i) =>
        updateConversation(writers[(i + 1) % 2], agentId, id, (current) => current && { ...current, insertions: [...current.insertions, block(index)], lastActivityAt: Math.max(current.lastActivityAt, index) }),
      ),
    ]);
    const final = (await writers[1].get(agentId, id))?.value;
    assert.is(final?.extractedTurns, 12, 'the highest watermark stands');
    assert.equal(final?.insertions.map((i) => i.index).sort((x, y) => x - y), [...opening.insertions.map((i) => i.index), ...blocks], 'every insertion kept');
    assert.is(final?.lastActivityAt, 107);
    assert.is((await objectNames(a.ctx, 'p')).length, 1, "losers' and replaced objects are gone");
  } finally {
    await closeReplica(a);
    await closeReplica(b);
    await small.cleanup();
  }
});

nats('a read racing the deletion of its object returns all of it or nothing, never a part', async () => {
  const small = await startNatsServer({ jetstreamMaxPayload: 64 * 1024 });
  const ctx = await connectNats({ url: small.url, timeoutMs: TIMEOUT_MS, name: 'engram test race' });
  try {
    const bucket = controlBuckets('p').responseBodies;
    const os = await new Objm(ctx.js).create(bucket);
    const values = new LargeValues(os, ctx.jsm, { bucket, idleMs: TIMEOUT_MS, now: Date.now, onError: (error) => assert.unreachable(String(error)) });
    const text = 'ü'.repeat(1024 * 1024);
    // Deletions start before, during or after the reads: a few land mid-read on every run.
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const name = `conv/race.${i}`;
        await values.put(name, text);
        const [read] = await Promise.all([values.get(name), sleep(i % 3).then(() => values.remove(name))]);
        assert.ok(read === undefined || read === text, `read ${read?.length} characters`);
      }),
    );
  } finally {
    await ctx.close();
    await small.cleanup();
  }
});

nats('prune and deleteAgent remove the objects of large states; prune sweeps only its own orphans', async () => {
  const small = await startNatsServer({ jetstreamMaxPayload: 64 * 1024 });
  let clock = Date.now();
  const r = await replica(small, 'p', { now: () => clock });
  try {
    const { conversations: c, responses } = r.stores;
    const buckets = controlBuckets('p');
    const os = await new Objm(r.ctx.js).open(buckets.responseBodies);
    await c.put(conversationOf('agt_a', 'idle', 20, 100, 1_000), undefined);
    await c.put(conversationOf('agt_a', 'recent', 20, 100, 5_000), undefined);
    await c.put(conversationOf('agt_b', 'other', 20, 100, 5_000), undefined);
    const record = { id: 'resp_1', agentId: 'agt_a', conversationId: 'c', previousResponseId: null, createdAt: 5_000, sealed: 's'.repeat(100 * 1024) };
    await responses.put(record);
    // What a crash between an object's write and its pointer's leaves behind.
    await os.putBlob({ name: 'conv/agt_a.lost.x' }, new Uint8Array(10));
    assert.is((await objectNames(r.ctx, 'p')).length, 5);

    assert.is(await c.prune(2_000), 1);
    assert.is(await c.get('agt_a', 'idle'), undefined);
    assert.ok(await os.info('conv/agt_a.lost.x'), 'a young orphan may still get its pointer');
    assert.is((await objectNames(r.ctx, 'p')).length, 4, "the idle state's object went with it");

    await c.deleteAgent('agt_b');
    assert.is(await c.get('agt_b', 'other'), undefined);
    assert.is((await objectNames(r.ctx, 'p')).length, 3, "the agent's objects went with it");

    clock += 61 * 60 * 1000;
    assert.is(await c.prune(2_000), 0);
    assert.is(await os.info('conv/agt_a.lost.x'), null, 'an old orphan is swept');
    assert.is(await responses.prune(2_000), 0);
    assert.is((await c.get('agt_a', 'recent'))?.value.insertions.length, 20, "the responses' sweep leaves conversation objects alone");
    assert.is((await responses.get('agt_a', 'resp_1'))?.sealed, record.sealed, "and the conversations' sweep leaves response bodies alone");

    assert.is(await c.prune(10_000), 1);
    assert.is(await responses.prune(10_000), 1);
    assert.is(await streamMessages(r.ctx, `OBJ_${buckets.responseBodies}`), 0, 'nothing left, metadata included');
    assert.is(await streamMessages(r.ctx, `KV_${buckets.conversations}`), 0);
  } finally {
    await closeReplica(r);
    await small.cleanup();
  }
});

nats('pruning and deleting leave no markers behind; close leaves the connection open', async () => {
  const prefix = `prune${++prefixes}`;
  const r = await replica(server, prefix);
  try {
    const c = r.stores.conversations;
    for (const id of ['a', 'b', 'c']) await c.put(newConversationState('agt_a', id, 'messages', 1), undefined);
    await c.markSession('agt_a', 'd', 1);
    await r.stores.indexes.put('agt_a', 'x');
    assert.is(await c.prune(2), 3);
    await r.stores.indexes.delete('agt_a');
    const buckets = controlBuckets(prefix);
    assert.is(await streamMessages(r.ctx, `KV_${buckets.conversations}`), 0);
    assert.is(await streamMessages(r.ctx, `KV_${buckets.indexes}`), 0);

    await r.stores.close();
    assert.is(r.ctx.nc.isClosed(), false, 'the shared connection stays open');
    r.stores = await openNatsControl(r.ctx, { prefix });
  } finally {
    await closeReplica(r);
    for (const stream of controlStreams(prefix)) await admin.jsm.streams.delete(stream).catch(() => undefined);
  }
});

nats.after(async () => {
  await admin.close();
  await server.cleanup();
});

nats.run();
