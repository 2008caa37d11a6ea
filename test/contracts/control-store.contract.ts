/**
 * The ControlStore contract: every adapter (SQLite, NATS KV) runs this same suite,
 * written only against the port in src/memory/ports.ts.
 */
import * as assert from 'uvu/assert';
import { newConversationState } from '../../src/domain/conversation-state.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import type { ControlStore, NewAgent } from '../../src/memory/ports.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../src/security/tokens.js';
import { harnessSuite, rejects } from './helpers.js';

export interface ControlStoreHarness {
  store: ControlStore;
  /** Closes `store` and opens a new adapter on the same data. */
  reopen?: () => Promise<ControlStore>;
  cleanup: () => Promise<void>;
}

export function newAgentInput(orgId: string, name: string, apiKey = 'sk-test-key'): NewAgent {
  return {
    orgId,
    name,
    upstream: { baseUrl: 'https://api.example.test', headers: { 'x-extra': 'yes' } },
    memory: { ...DEFAULT_MEMORY_SETTINGS, topK: 7 },
    secrets: { upstreamApiKey: apiKey },
  };
}

export function controlStoreContract(name: string, open: () => Promise<ControlStoreHarness>): void {
  const { test, harness } = harnessSuite(`ControlStore contract: ${name}`, open);
  const store = (context: { harness?: ControlStoreHarness }): ControlStore => harness(context).store;

  test('orgs: create, get by id and by name, list, unique names', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    assert.type(org.id, 'string');
    assert.is(org.name, 'acme');
    assert.type(org.createdAt, 'number');
    assert.equal(await s.getOrg(org.id), org);
    assert.equal(await s.getOrg('acme'), org);
    assert.is(await s.getOrg('nope'), undefined);
    await s.createOrg('other');
    assert.equal((await s.listOrgs()).map((o) => o.name).sort(), ['acme', 'other']);
    await rejects(() => s.createOrg('acme'));
    assert.is((await s.listOrgs()).length, 2);
  });

  test('agents: create, get by id and by name, list, update, unique per org', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const other = await s.createOrg('other');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    assert.is(agent.orgId, org.id);
    assert.is(agent.type, 'api_provider');
    assert.is(agent.upstream.baseUrl, 'https://api.example.test');
    assert.equal(agent.upstream.headers, { 'x-extra': 'yes' });
    assert.is(agent.memory.topK, 7);
    assert.not.equal(agent.id, org.id);

    assert.equal(await s.getAgent(org.id, agent.id), agent);
    assert.equal(await s.getAgent(org.id, 'helper'), agent);
    assert.is(await s.getAgent(other.id, agent.id), undefined, 'an agent is only found in its own org');
    assert.is(await s.getAgent(other.id, 'helper'), undefined);

    await rejects(() => s.createAgent(newAgentInput(org.id, 'helper')));
    const sameNameElsewhere = await s.createAgent(newAgentInput(other.id, 'helper'));
    assert.is.not(sameNameElsewhere.id, agent.id);
    await s.createAgent(newAgentInput(org.id, 'second'));
    assert.equal((await s.listAgents(org.id)).map((a) => a.name).sort(), ['helper', 'second']);

    const updated = await s.updateAgent(org.id, agent.id, {
      name: 'renamed',
      upstream: { baseUrl: 'https://api.changed.test' },
      memory: { inject: false },
    });
    assert.ok(updated);
    assert.is(updated.name, 'renamed');
    assert.is(updated.upstream.baseUrl, 'https://api.changed.test');
    assert.equal(updated.upstream.headers, { 'x-extra': 'yes' }, 'unpatched upstream fields are kept');
    assert.is(updated.memory.inject, false);
    assert.is(updated.memory.topK, 7, 'unpatched memory fields are kept');
    assert.ok(updated.updatedAt >= agent.updatedAt);
    assert.equal(await s.getAgent(org.id, 'renamed'), updated);
    assert.is(await s.getAgent(org.id, 'helper'), undefined);
    await rejects(() => s.updateAgent(org.id, agent.id, { name: 'second' }));
    assert.is(await s.updateAgent(other.id, agent.id, { name: 'x' }), undefined, 'wrong org: no update');
    assert.is(await s.updateAgent(org.id, 'agt_missing', { name: 'x' }), undefined);
  });

  test('agent secrets: round trip and patch', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper', 'sk-first'));
    assert.equal(await s.getAgentSecrets(agent.id), { upstreamApiKey: 'sk-first' });
    await s.updateAgent(org.id, agent.id, { memory: { topK: 3 } });
    assert.equal(await s.getAgentSecrets(agent.id), { upstreamApiKey: 'sk-first' }, 'kept when not patched');
    await s.updateAgent(org.id, agent.id, { secrets: { upstreamApiKey: 'sk-second' } });
    assert.equal(await s.getAgentSecrets(agent.id), { upstreamApiKey: 'sk-second' });
    assert.is(await s.getAgentSecrets('agt_missing'), undefined);
  });

  test('tokens: lookup by hash, listing, revocation takes effect at once', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const clear = generateToken();
    const record = await s.createToken(agent.id, hashToken(clear), tokenDisplayPrefix(clear), 'laptop');
    assert.is(record.agentId, agent.id);
    assert.is(record.orgId, org.id);
    assert.is(record.name, 'laptop');
    assert.is(record.prefix, tokenDisplayPrefix(clear));
    assert.is(record.revokedAt, null);
    assert.not.ok(JSON.stringify(record).includes(clear), 'the record never holds the clear token');

    const found = await s.findToken(hashToken(clear));
    assert.ok(found);
    assert.is(found.token.id, record.id);
    assert.equal(found.agent, agent);
    assert.is(await s.findToken(hashToken(generateToken())), undefined);
    assert.is(await s.findToken(clear), undefined, 'the clear token is not a key');

    const second = await s.createToken(agent.id, hashToken(generateToken()), 'egm_xx', 'ci');
    assert.equal((await s.listTokens(agent.id)).map((t) => t.id).sort(), [record.id, second.id].sort());

    assert.is(await s.revokeToken(agent.id, 'tok_missing'), false);
    assert.is(await s.revokeToken('agt_other', record.id), false, 'only the owning agent revokes');
    assert.is(await s.revokeToken(agent.id, record.id), true);
    assert.is(await s.findToken(hashToken(clear)), undefined, 'revoked tokens are not found');
    const listed = (await s.listTokens(agent.id)).find((t) => t.id === record.id);
    assert.ok(listed?.revokedAt, 'listing shows when it was revoked');

    await rejects(() => s.createToken('agt_missing', hashToken(generateToken()), 'egm_x', 'n'));
  });

  test('findToken reflects agent updates', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const clear = generateToken();
    await s.createToken(agent.id, hashToken(clear), tokenDisplayPrefix(clear), 't');
    await s.updateAgent(org.id, agent.id, { memory: { topK: 2 } });
    assert.is((await s.findToken(hashToken(clear)))?.agent.memory.topK, 2);
  });

  test('conversations: round trip, upsert, keyed by agent', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const other = await s.createAgent(newAgentInput(org.id, 'other'));
    assert.is(await s.getConversation(agent.id, 'c1'), undefined);
    const state = newConversationState(agent.id, 'c1', 'messages', 1000);
    state.insertions.push({ index: 2, messageHash: 'abc', block: '\n<engram-reflections>x</engram-reflections>' });
    state.injectedIds.push('r1');
    await s.putConversation(state);
    assert.equal(await s.getConversation(agent.id, 'c1'), state);
    assert.is(await s.getConversation(other.id, 'c1'), undefined);

    const next = { ...state, extractedTurns: 4, lastActivityAt: 2000, injectedIds: ['r1', 'r2'] };
    await s.putConversation(next);
    assert.equal(await s.getConversation(agent.id, 'c1'), next, 'last writer wins');
  });

  test('conversations: an upload mark round-trips; hasConversation matches id prefixes of the agent only', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const other = await s.createAgent(newAgentInput(org.id, 'other'));
    const state = { ...newConversationState(agent.id, 's:abc:opening1', 'responses', 1000), upload: { sha256: 'h', turns: 3, fingerprint: 'f', at: 1000 } };
    await s.putConversation(state);
    assert.equal(await s.getConversation(agent.id, 's:abc:opening1'), state);
    assert.is(await s.hasConversation(agent.id, 's:abc:'), true);
    assert.is(await s.hasConversation(agent.id, 's:abc:opening1'), true, 'the whole id is a prefix of itself');
    assert.is(await s.hasConversation(agent.id, 's:ab:'), false, 'a prefix of the session digest is another session');
    assert.is(await s.hasConversation(agent.id, 's:abd:'), false);
    assert.is(await s.hasConversation(other.id, 's:abc:'), false, 'another agent');
    await s.putConversation(newConversationState(agent.id, 's:abc\u{10ffff}x', 'responses', 1000));
    assert.is(await s.hasConversation(agent.id, 's:abd'), false, 'the range ends before the next prefix');
  });

  test('conversations idle since before a time are pruned; active ones stay', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    await s.putConversation(newConversationState(agent.id, 'old', 'messages', 1_000));
    await s.putConversation(newConversationState(agent.id, 'recent', 'chat-completions', 5_000));
    const revived = newConversationState(agent.id, 'revived', 'messages', 1_000);
    await s.putConversation(revived);
    await s.putConversation({ ...revived, lastActivityAt: 6_000 });
    assert.is(await s.pruneConversations(2_000), 1);
    assert.is(await s.getConversation(agent.id, 'old'), undefined);
    assert.ok(await s.getConversation(agent.id, 'recent'));
    assert.ok(await s.getConversation(agent.id, 'revived'), 'the latest activity counts');
    assert.is(await s.pruneConversations(2_000), 0);
  });

  test('root index: put, replace, per agent', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const other = await s.createAgent(newAgentInput(org.id, 'other'));
    assert.is(await s.getIndex(agent.id), undefined);
    await s.putIndex(agent.id, '# Index\n- one');
    await s.putIndex(agent.id, '# Index\n- two');
    assert.is(await s.getIndex(agent.id), '# Index\n- two');
    assert.is(await s.getIndex(other.id), undefined);
  });

  test('deleting an agent removes its tokens, conversations and index', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const keep = await s.createAgent(newAgentInput(org.id, 'keep'));
    const clear = generateToken();
    const kept = generateToken();
    await s.createToken(agent.id, hashToken(clear), tokenDisplayPrefix(clear), 't');
    await s.createToken(keep.id, hashToken(kept), tokenDisplayPrefix(kept), 't');
    await s.putConversation(newConversationState(agent.id, 'c1', 'responses', 1));
    await s.putConversation(newConversationState(keep.id, 'c1', 'responses', 1));
    await s.putIndex(agent.id, 'x');

    const other = await s.createOrg('other');
    assert.is(await s.deleteAgent(other.id, agent.id), false, 'wrong org: nothing deleted');
    assert.is(await s.deleteAgent(org.id, agent.id), true);
    assert.is(await s.deleteAgent(org.id, agent.id), false);
    assert.is(await s.getAgent(org.id, agent.id), undefined);
    assert.is(await s.findToken(hashToken(clear)), undefined);
    assert.equal(await s.listTokens(agent.id), []);
    assert.is(await s.getConversation(agent.id, 'c1'), undefined);
    assert.is(await s.getIndex(agent.id), undefined);
    assert.is(await s.getAgentSecrets(agent.id), undefined);

    assert.ok(await s.findToken(hashToken(kept)), 'other agents are untouched');
    assert.ok(await s.getConversation(keep.id, 'c1'));
    // The name is free again.
    await s.createAgent(newAgentInput(org.id, 'helper'));
  });

  test('deleting an org removes its agents, tokens, conversations and indexes', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const survivor = await s.createOrg('survivor');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const safe = await s.createAgent(newAgentInput(survivor.id, 'helper'));
    const clear = generateToken();
    await s.createToken(agent.id, hashToken(clear), tokenDisplayPrefix(clear), 't');
    await s.putConversation(newConversationState(agent.id, 'c1', 'chat-completions', 1));
    await s.putIndex(agent.id, 'x');
    await s.putIndex(safe.id, 'safe');

    assert.is(await s.deleteOrg(org.id), true);
    assert.is(await s.deleteOrg(org.id), false);
    assert.is(await s.getOrg(org.id), undefined);
    assert.equal(await s.listAgents(org.id), []);
    assert.is(await s.findToken(hashToken(clear)), undefined);
    assert.is(await s.getConversation(agent.id, 'c1'), undefined);
    assert.is(await s.getIndex(agent.id), undefined);
    assert.is(await s.getIndex(safe.id), 'safe');
    assert.equal((await s.listOrgs()).map((o) => o.name), ['survivor']);
    await s.createOrg('acme');
  });

  test('responses: put, get, per agent, delete, prune, gone with their agent', async (context) => {
    const s = store(context);
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper'));
    const other = await s.createAgent(newAgentInput(org.id, 'other'));
    const record = (id: string, previous: string | null, createdAt: number) => ({
      id,
      agentId: agent.id,
      conversationId: 'c1',
      previousResponseId: previous,
      input: [{ role: 'user', content: `question ${id}` }],
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${id}` }] }],
      body: { id, object: 'response', status: 'completed' },
      createdAt,
    });
    await s.putResponse(record('resp_1', null, 100));
    await s.putResponse(record('resp_2', 'resp_1', 200));
    assert.equal(await s.getResponse(agent.id, 'resp_2'), record('resp_2', 'resp_1', 200));
    assert.is(await s.getResponse(other.id, 'resp_2'), undefined, "another agent's ids are not found");
    assert.is(await s.deleteResponse(other.id, 'resp_2'), false);
    await s.putResponse(record('resp_2', 'resp_1', 250));
    assert.is((await s.getResponse(agent.id, 'resp_2'))?.createdAt, 250, 'put is idempotent on the id');

    assert.is(await s.pruneResponses(150), 1);
    assert.is(await s.getResponse(agent.id, 'resp_1'), undefined);
    assert.ok(await s.getResponse(agent.id, 'resp_2'));
    assert.is(await s.deleteResponse(agent.id, 'resp_2'), true);
    assert.is(await s.getResponse(agent.id, 'resp_2'), undefined);

    await s.putResponse(record('resp_3', null, 300));
    await s.deleteAgent(org.id, agent.id);
    assert.is(await s.getResponse(agent.id, 'resp_3'), undefined, 'deleting the agent deletes its responses');
  });

  test('data survives reopening', async (context) => {
    const harness = context.harness;
    if (!harness?.reopen) return;
    const s = harness.store;
    const org = await s.createOrg('acme');
    const agent = await s.createAgent(newAgentInput(org.id, 'helper', 'sk-durable'));
    const clear = generateToken();
    await s.createToken(agent.id, hashToken(clear), tokenDisplayPrefix(clear), 't');
    const state = newConversationState(agent.id, 'c1', 'messages', 5);
    await s.putConversation(state);
    await s.putIndex(agent.id, 'idx');

    const reopened = await harness.reopen();
    assert.equal(await reopened.getOrg('acme'), org);
    assert.equal(await reopened.getAgent(org.id, agent.id), agent);
    assert.equal(await reopened.getAgentSecrets(agent.id), { upstreamApiKey: 'sk-durable' });
    assert.is((await reopened.findToken(hashToken(clear)))?.agent.id, agent.id);
    assert.equal(await reopened.getConversation(agent.id, 'c1'), state);
    assert.is(await reopened.getIndex(agent.id), 'idx');
  });

  test.run();
}
