/**
 * The NATS KV control stores against a real nats-server (Debian's 2.9): the four
 * contract suites, then what only this adapter family has (mirrors across replicas, NATS
 * going away, key encoding, the Object Store for large records, name claims).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { connectNats, type NatsContext } from '../../../src/adapters/nats/connection.js';
import { controlBuckets, controlStreams, openNatsControl, type NatsControlOptions, type NatsControlStores } from '../../../src/adapters/nats/control/index.js';
import { directoryKeys, keyPart } from '../../../src/adapters/nats/control/keys.js';
import { newConversationState } from '../../../src/domain/conversation-state.js';
import { EngramError } from '../../../src/errors.js';
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
