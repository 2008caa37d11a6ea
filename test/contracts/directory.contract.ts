/**
 * The Directory contract (orgs, agents, tokens): every adapter runs this same suite,
 * written only against the port in src/ports/directory.ts.
 */
import * as assert from 'uvu/assert';
import type { AgentEntry, Directory } from '../../src/ports/index.js';
import type { Agent } from '../../src/domain/types.js';
import { EngramError } from '../../src/errors.js';
import { harnessSuite, rejects, waitFor } from './helpers.js';
import { agentEntry, org, tick, token, type ControlHarness } from './control-harness.js';

const conflict = (error: unknown) => error instanceof EngramError && error.code === 'conflict';

export function directoryContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`Directory contract: ${name}`, open);
  const dir = (context: { harness?: ControlHarness }): Directory => harness(context).stores.directory;

  test('orgs: create, get by id and by name, list oldest first, unique names', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    await d.createOrg(acme);
    assert.equal(await d.getOrg(acme.id), acme);
    assert.equal(await d.getOrg('acme'), acme);
    assert.is(await d.getOrg('nope'), undefined);
    const other = org('other');
    await d.createOrg(other);
    assert.equal((await d.listOrgs()).map((o) => o.name), ['acme', 'other']);
    const error = await rejects(() => d.createOrg(org('acme')));
    assert.ok(conflict(error), 'a taken name is a conflict');
    assert.is((await d.listOrgs()).length, 2, 'nothing half-written');
  });

  test('an org named like another org id: the id wins', async (context) => {
    const d = dir(context);
    const first = org('first');
    await d.createOrg(first);
    const tricky = org(first.id);
    await d.createOrg(tricky);
    assert.equal(await d.getOrg(first.id), first);
  });

  test('agents: create, get by id and by name, list, unique per org, org must exist', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    const other = org('other');
    await d.createOrg(acme);
    await d.createOrg(other);
    const entry = agentEntry(acme.id, 'helper');
    await d.createAgent(entry);
    assert.equal(await d.getAgent(acme.id, entry.agent.id), entry.agent);
    assert.equal(await d.getAgent(acme.id, 'helper'), entry.agent);
    assert.is(await d.getAgent(other.id, entry.agent.id), undefined, 'an agent is only found in its own org');
    assert.is(await d.getAgent(other.id, 'helper'), undefined);
    assert.equal(await d.agentEntry(entry.agent.id), entry);
    assert.is(await d.agentEntry('agt_missing'), undefined);

    assert.ok(conflict(await rejects(() => d.createAgent(agentEntry(acme.id, 'helper')))));
    await d.createAgent(agentEntry(other.id, 'helper'));
    await d.createAgent(agentEntry(acme.id, 'second'));
    assert.equal((await d.listAgents(acme.id)).map((a) => a.name), ['helper', 'second']);
    const missing = await rejects(() => d.createAgent(agentEntry('org_missing', 'x')));
    assert.ok(missing instanceof EngramError && missing.code === 'not_found', 'no org: not_found');
  });

  test('updateAgent: replaces the record, keeps names unique, only in its org', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    const other = org('other');
    await d.createOrg(acme);
    await d.createOrg(other);
    const entry = agentEntry(acme.id, 'helper', 'sealed-1');
    await d.createAgent(entry);
    await d.createAgent(agentEntry(acme.id, 'second'));
    const renamed = { ...entry.agent, name: 'renamed', memory: { ...entry.agent.memory, inject: false }, updatedAt: tick() };
    const updated = await d.updateAgent(acme.id, entry.agent.id, (current) => {
      assert.equal(current, entry, 'change sees the stored entry');
      return { agent: renamed, sealedSecrets: 'sealed-2' };
    });
    assert.equal(updated, renamed);
    assert.equal(await d.getAgent(acme.id, 'renamed'), renamed);
    assert.is(await d.getAgent(acme.id, 'helper'), undefined, 'the old name is free');
    assert.is((await d.agentEntry(entry.agent.id))?.sealedSecrets, 'sealed-2');
    await d.createAgent(agentEntry(acme.id, 'helper'));

    const clash = await rejects(() => d.updateAgent(acme.id, entry.agent.id, (c) => ({ ...c, agent: { ...c.agent, name: 'second' } })));
    assert.ok(conflict(clash));
    assert.is((await d.getAgent(acme.id, entry.agent.id))?.name, 'renamed', 'nothing changed by a conflict');
    assert.is(await d.updateAgent(other.id, entry.agent.id, (c) => c), undefined, 'wrong org: no update');
    assert.is(await d.updateAgent(acme.id, 'agt_missing', (c) => c), undefined);
  });

  test('updateAgent: concurrent changes are all applied', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    await d.createOrg(acme);
    const entry = agentEntry(acme.id, 'helper');
    await d.createAgent(entry);
    const headers = Array.from({ length: 8 }, (_, i) => `x-h${i}`);
    await Promise.all(
      headers.map((name) =>
        d.updateAgent(acme.id, entry.agent.id, (current) => ({
          ...current,
          agent: { ...current.agent, upstream: { ...current.agent.upstream, headerNames: [...current.agent.upstream.headerNames, name] } },
        })),
      ),
    );
    const final = await d.getAgent(acme.id, entry.agent.id);
    assert.equal([...(final?.upstream.headerNames ?? [])].sort(), ['x-extra', ...headers].sort());
  });

  test("who set an agent's upstream is kept; an agent stored before it was kept reads as the operator's", async (context) => {
    const h = harness(context);
    const d = h.stores.directory;
    const acme = org('acme');
    await d.createOrg(acme);
    const mine = agentEntry(acme.id, 'user-set');
    const users: AgentEntry = { ...mine, agent: { ...mine.agent, upstream: { ...mine.agent.upstream, setBy: 'user' } } };
    await d.createAgent(users);
    await d.createToken(token(users.agent), 'user-hash');
    const legacy = agentEntry(acme.id, 'legacy');
    const { setBy: _dropped, ...before } = legacy.agent.upstream;
    await d.createAgent({ ...legacy, agent: { ...legacy.agent, upstream: before as Agent['upstream'] } });

    const read = async (directory: Directory) => {
      assert.is((await directory.getAgent(acme.id, 'user-set'))?.upstream.setBy, 'user');
      assert.is((await directory.agentEntry(users.agent.id))?.agent.upstream.setBy, 'user');
      assert.is((await directory.findToken('user-hash'))?.agent.upstream.setBy, 'user', 'the proxy sees it with the token');
      assert.is((await directory.getAgent(acme.id, 'legacy'))?.upstream.setBy, 'operator');
      assert.equal((await directory.listAgents(acme.id)).map((a) => a.upstream.setBy), ['user', 'operator']);
    };
    await read(d);
    const updated = await d.updateAgent(acme.id, users.agent.id, (current) => ({ ...current, agent: { ...current.agent, name: 'renamed' } }));
    assert.is(updated?.upstream.setBy, 'user', 'kept through an update');
    if (h.reopen) {
      const reopened = (await h.reopen()).directory;
      assert.is((await reopened.getAgent(acme.id, 'renamed'))?.upstream.setBy, 'user', 'kept through a restart');
      assert.is((await reopened.getAgent(acme.id, 'legacy'))?.upstream.setBy, 'operator');
    }
  });

  test('tokens: lookup by hash with the agent, listing, revocation takes effect at once', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    await d.createOrg(acme);
    const { agent } = agentEntry(acme.id, 'helper');
    await d.createAgent({ agent, sealedSecrets: 's' });
    const record = token(agent, 'laptop');
    await d.createToken(record, 'hash-1');
    const found = await d.findToken('hash-1');
    assert.is(found?.token.id, record.id);
    assert.is(found?.token.name, 'laptop');
    assert.equal(found?.agent, agent);
    assert.is(await d.findToken('hash-2'), undefined);

    const second = token(agent, 'ci');
    await d.createToken(second, 'hash-2');
    assert.equal((await d.listTokens(agent.id)).map((t) => t.id), [record.id, second.id]);
    assert.ok(conflict(await rejects(() => d.createToken(token(agent), 'hash-1'))), 'a hash is unique');
    assert.equal(await d.tokenHashes(agent.id), new Map([[record.id, 'hash-1'], [second.id, 'hash-2']]));
    assert.equal(await d.tokenHashes('agt_other'), new Map());

    assert.is(await d.revokeToken(agent.id, 'tok_missing', tick()), false);
    assert.is(await d.revokeToken('agt_other', record.id, tick()), false, 'only the owning agent revokes');
    const at = tick();
    assert.is(await d.revokeToken(agent.id, record.id, at), true);
    assert.is(await d.revokeToken(agent.id, record.id, tick()), false, 'already revoked');
    assert.is(await d.findToken('hash-1'), undefined, 'a revoked token is not found');
    assert.is((await d.revokedToken('hash-1'))?.id, record.id, 'a revoked token is found among the revoked');
    assert.is((await d.revokedToken('hash-1'))?.revokedAt, at);
    assert.is(await d.revokedToken('hash-2'), undefined, 'a live token is not revoked');
    assert.is(await d.revokedToken('hash-never'), undefined);
    assert.is((await d.listTokens(agent.id)).find((t) => t.id === record.id)?.revokedAt, at);
    assert.ok(await d.findToken('hash-2'));
    assert.is((await d.tokenHashes(agent.id)).get(record.id), 'hash-1', 'a revoked token keeps its hash');

    const noAgent = await rejects(() => d.createToken({ ...token(agent), agentId: 'agt_missing' }, 'hash-3'));
    assert.ok(noAgent instanceof EngramError && noAgent.code === 'not_found');
  });

  test('findToken records the use and reflects agent updates', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    await d.createOrg(acme);
    const entry = agentEntry(acme.id, 'helper');
    await d.createAgent(entry);
    await d.createToken(token(entry.agent), 'h');
    await d.findToken('h');
    await waitFor(async () => (await d.listTokens(entry.agent.id))[0].lastUsedAt !== null, 3000, 'lastUsedAt set');
    await d.updateAgent(acme.id, entry.agent.id, (c) => ({ ...c, agent: { ...c.agent, memory: { ...c.agent.memory, topK: 2 } } }));
    assert.is((await d.findToken('h'))?.agent.memory.topK, 2);
  });

  test('deleting an agent removes it and its tokens; the name is free again', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    const other = org('other');
    await d.createOrg(acme);
    await d.createOrg(other);
    const gone = agentEntry(acme.id, 'helper');
    const keep = agentEntry(acme.id, 'keep');
    await d.createAgent(gone);
    await d.createAgent(keep);
    await d.createToken(token(gone.agent), 'gone');
    await d.createToken(token(keep.agent), 'kept');
    assert.is(await d.deleteAgent(other.id, gone.agent.id), false, 'wrong org: nothing deleted');
    assert.is(await d.deleteAgent(acme.id, gone.agent.id), true);
    assert.is(await d.deleteAgent(acme.id, gone.agent.id), false);
    assert.is(await d.getAgent(acme.id, gone.agent.id), undefined);
    assert.is(await d.agentEntry(gone.agent.id), undefined);
    assert.is(await d.findToken('gone'), undefined);
    assert.equal(await d.listTokens(gone.agent.id), []);
    assert.ok(await d.findToken('kept'), 'other agents are untouched');
    await d.createAgent(agentEntry(acme.id, 'helper'));
  });

  test('deleting an org removes its agents and tokens and names them', async (context) => {
    const d = dir(context);
    const acme = org('acme');
    const survivor = org('survivor');
    await d.createOrg(acme);
    await d.createOrg(survivor);
    const a = agentEntry(acme.id, 'a');
    const b = agentEntry(acme.id, 'b');
    const safe = agentEntry(survivor.id, 'a');
    for (const entry of [a, b, safe]) await d.createAgent(entry);
    await d.createToken(token(a.agent), 'ta');
    await d.createToken(token(safe.agent), 'tsafe');
    assert.equal((await d.deleteOrg(acme.id))?.sort(), [a.agent.id, b.agent.id].sort());
    assert.is(await d.deleteOrg(acme.id), undefined);
    assert.is(await d.getOrg(acme.id), undefined);
    assert.equal(await d.listAgents(acme.id), []);
    assert.is(await d.agentEntry(a.agent.id), undefined);
    assert.is(await d.findToken('ta'), undefined);
    assert.ok(await d.findToken('tsafe'));
    assert.equal((await d.listOrgs()).map((o) => o.name), ['survivor']);
    await d.createOrg(org('acme'));
  });

  test('a second replica sees writes, updates and revocations', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const d = h.stores.directory;
    const peer = (await h.peer()).directory;
    const acme = org('acme');
    await d.createOrg(acme);
    const entry = agentEntry(acme.id, 'helper');
    await d.createAgent(entry);
    const record = token(entry.agent);
    await d.createToken(record, 'shared');
    await waitFor(async () => (await peer.findToken('shared'))?.agent.id === entry.agent.id, 3000, 'the token on the peer');
    await waitFor(async () => (await peer.getOrg('acme'))?.id === acme.id, 3000, 'the org on the peer');
    await peer.updateAgent(acme.id, entry.agent.id, (c) => ({ ...c, agent: { ...c.agent, name: 'renamed' } }));
    await waitFor(async () => (await d.getAgent(acme.id, entry.agent.id))?.name === 'renamed', 3000, 'the rename on the first');
    await d.revokeToken(entry.agent.id, record.id, tick());
    await waitFor(async () => (await peer.findToken('shared')) === undefined, 3000, 'the revocation on the peer');
    assert.ok(conflict(await rejects(() => peer.createOrg(org('acme')))), 'names are unique across replicas');
  });

  test('data survives reopening', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    const acme = org('acme');
    await h.stores.directory.createOrg(acme);
    const entry = agentEntry(acme.id, 'helper', 'sealed-durable');
    await h.stores.directory.createAgent(entry);
    await h.stores.directory.createToken(token(entry.agent), 'durable');
    const reopened = (await h.reopen()).directory;
    assert.equal(await reopened.getOrg('acme'), acme);
    assert.equal(await reopened.agentEntry(entry.agent.id), entry);
    assert.is((await reopened.findToken('durable'))?.agent.id, entry.agent.id);
  });

  test.run();
}
