import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../../src/adapters/sqlite/database.js';
import { SqliteDirectory } from '../../../src/adapters/sqlite/directory.js';
import { sqliteControlStores } from '../../../src/adapters/sqlite/index.js';
import { Control } from '../../../src/control/control.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../../src/domain/types.js';
import { SecretBox } from '../../../src/security/secret-box.js';
import { Vault } from '../../../src/security/vault.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../../src/security/tokens.js';
import { accountsContract } from '../../contracts/accounts.contract.js';
import { activityContract } from '../../contracts/activity.contract.js';
import { requestsContract } from '../../contracts/requests.contract.js';
import type { ControlHarness } from '../../contracts/control-harness.js';
import { agentEntry, org, token } from '../../contracts/control-harness.js';
import { conversationsContract } from '../../contracts/conversations.contract.js';
import { directoryContract } from '../../contracts/directory.contract.js';
import { responsesContract } from '../../contracts/responses.contract.js';
import { rootIndexContract } from '../../contracts/root-index.contract.js';
import { rejects } from '../../contracts/helpers.js';
import { tempDb } from './helpers.js';

/** A file, reopened on restart; a peer is a second connection to the same file (a second process). */
async function fileHarness(): Promise<ControlHarness> {
  const temp = tempDb();
  const peers: ReturnType<typeof openDatabase>[] = [];
  return {
    stores: sqliteControlStores(temp.db),
    reopen: async () => sqliteControlStores(temp.reopen()),
    peer: async () => {
      const db = openDatabase(temp.file);
      peers.push(db);
      return sqliteControlStores(db);
    },
    cleanup: async () => {
      for (const db of peers) db.close();
      temp.remove();
    },
  };
}

async function memoryHarness(): Promise<ControlHarness> {
  const db = openDatabase(':memory:');
  return {
    stores: sqliteControlStores(db),
    cleanup: async () => {
      db.close();
    },
  };
}

for (const [name, open] of [
  ['sqlite (file)', fileHarness],
  ['sqlite (:memory:)', memoryHarness],
] as const) {
  directoryContract(name, open);
  conversationsContract(name, open);
  responsesContract(name, open);
  rootIndexContract(name, open);
  accountsContract(name, open);
  activityContract(name, open);
  requestsContract(name, open);
}

const sqlite = suite('SQLite control stores: specifics');

const newAgentInput = (orgId: string, name: string, apiKey: string) => ({
  orgId,
  name,
  upstream: { baseUrl: 'https://api.example.test', headers: {} },
  memory: DEFAULT_MEMORY_SETTINGS,
  secrets: { upstreamApiKey: apiKey },
});

sqlite('secrets are never written in clear: upstream key and token absent from the file', async () => {
  const temp = tempDb();
  try {
    const control = new Control(sqliteControlStores(temp.db), { vault: new Vault(new SecretBox(randomBytes(32))), now: Date.now });
    const apiKey = 'sk-live-' + randomBytes(16).toString('hex');
    const acme = await control.createOrg('acme');
    const azureKey = 'azure-' + randomBytes(16).toString('hex');
    const agent = await control.createAgent({ ...newAgentInput(acme.id, 'helper', apiKey), upstream: { baseUrl: 'https://x.test', headers: { 'api-key': azureKey } } });
    const clear = generateToken();
    await control.createToken(agent, hashToken(clear), tokenDisplayPrefix(clear), 't');
    await control.updateAgent(acme.id, agent.id, { secrets: { upstreamApiKey: apiKey + '-v2' } });
    await control.putResponse({
      id: 'resp_1',
      agentId: agent.id,
      conversationId: 'c1',
      previousResponseId: null,
      input: [{ role: 'user', content: `my key is ${apiKey}` }],
      output: [],
      body: {},
      createdAt: 1,
    }, {});

    // Everything the process wrote, WAL included, before and after a checkpoint.
    const bytes = (): string =>
      [temp.file, temp.file + '-wal']
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file).toString('latin1'))
        .join('');
    for (const dump of [bytes(), (temp.db.pragma('wal_checkpoint(TRUNCATE)'), bytes())]) {
      assert.not.ok(dump.includes(apiKey), 'upstream key in clear');
      assert.not.ok(dump.includes(azureKey), 'extra header value in clear');
      assert.ok(dump.includes('"headerNames":["api-key"]'), 'the header name is what is stored');
      assert.not.ok(dump.includes(clear), 'access token in clear');
      assert.ok(dump.includes(hashToken(clear)), 'the token hash is what is stored');
    }
  } finally {
    temp.remove();
  }
});

sqlite('findToken records lastUsedAt at most once per resolution window', async () => {
  const db = openDatabase(':memory:');
  let now = 1_000_000;
  const directory = new SqliteDirectory(db, { now: () => now, lastUsedResolutionMs: 60_000 });
  const acme = org('acme');
  await directory.createOrg(acme);
  const entry = agentEntry(acme.id, 'helper');
  await directory.createAgent(entry);
  await directory.createToken(token(entry.agent), 'h');
  assert.is((await directory.findToken('h'))?.token.lastUsedAt, 1_000_000);
  now += 1_000;
  assert.is((await directory.findToken('h'))?.token.lastUsedAt, 1_000_000);
  now += 60_000;
  assert.is((await directory.findToken('h'))?.token.lastUsedAt, 1_061_000);
  assert.is((await directory.listTokens(entry.agent.id))[0].lastUsedAt, 1_061_000);
  db.close();
});

sqlite('a database written before revision-checked conversations is migrated: states keep, sessions become marks', async () => {
  const temp = tempDb();
  try {
    // What version 5 of the schema held: conversations without revisions, sessions only in ids (and no origins, 7,
    // nor lease holders, 8, nor supersession keys, 9, nor accounts, 10, nor activity, 11, nor superseded reflections
    // and tag authors, 12, nor the request log, 14, nor spend counts, 15, nor scopes, 16).
    temp.db.prepare('DELETE FROM conversation_sessions').run();
    const stores = sqliteControlStores(temp.db);
    await stores.conversations.put({ ...baseState('agt_a', 's:SessionDigest:opening'), lastActivityAt: 5 }, undefined);
    temp.db.prepare('DELETE FROM conversation_sessions').run();
    temp.db.pragma('user_version = 5');
    temp.db.exec('DROP TABLE conversation_sessions; ALTER TABLE conversations DROP COLUMN revision; ALTER TABLE reflections DROP COLUMN origin;');
    temp.db.exec('ALTER TABLE bus_messages DROP COLUMN lease_owner; ALTER TABLE bus_messages DROP COLUMN lease_pid; ALTER TABLE bus_messages DROP COLUMN lease_host;');
    temp.db.exec('DROP INDEX bus_messages_supersede; ALTER TABLE bus_messages DROP COLUMN supersede_key;');
    // Nor the reasons of failed deliveries, 19.
    temp.db.exec('ALTER TABLE bus_messages DROP COLUMN last_error; ALTER TABLE bus_dead_letters DROP COLUMN last_error;');
    temp.db.exec('DROP TABLE account_users; DROP TABLE account_sessions; DROP TABLE oauth_clients; DROP TABLE oauth_grants; DROP TABLE oauth_signing_key;');
    temp.db.exec('DROP TABLE agent_activity; DROP TABLE request_log;');
    temp.db.exec('ALTER TABLE reflections DROP COLUMN superseded_by; ALTER TABLE reflections DROP COLUMN superseded_at; ALTER TABLE reflections DROP COLUMN tags_by;');
    temp.db.exec('DROP INDEX reflections_by_scope; ALTER TABLE reflections DROP COLUMN scope; ALTER TABLE reflections DROP COLUMN user_id;');
    const migrated = sqliteControlStores(temp.reopen());
    assert.is((await migrated.conversations.get('agt_a', 's:SessionDigest:opening'))?.value.lastActivityAt, 5);
    assert.is(await migrated.conversations.hasSession('agt_a', 'SessionDigest'), true);
  } finally {
    temp.remove();
  }
});

sqlite('migration 18: the request log keeps what older entries said (skipped becomes the reason, score the relevance); they read with nothing kept', async () => {
  const temp = tempDb();
  try {
    // What version 17 of the schema held.
    temp.db.exec(`
      DROP INDEX request_log_by_conversation;
      ALTER TABLE request_log DROP COLUMN kept; ALTER TABLE request_log DROP COLUMN rebuilt; ALTER TABLE request_log DROP COLUMN reason;
      ALTER TABLE request_log DROP COLUMN bar; ALTER TABLE request_log DROP COLUMN near_misses;
      ALTER TABLE request_log ADD COLUMN skipped TEXT;
      ALTER TABLE bus_messages DROP COLUMN last_error; ALTER TABLE bus_dead_letters DROP COLUMN last_error;
      ALTER TABLE request_log DROP COLUMN answer_limit;
      ALTER TABLE agent_activity DROP COLUMN extraction_cached_input_tokens; ALTER TABLE agent_activity DROP COLUMN tagging_cached_input_tokens;
    `);
    temp.db.pragma('user_version = 17');
    const insert = temp.db.prepare(
      `INSERT INTO request_log (id, agent_id, at, protocol, conversation_id, status, outcome, latency_ms, upstream_ms, injected, scope, user_id, skipped)
       VALUES (?, 'agt_a', ?, 'messages', 'cnv_1', 200, 'settled', 5.5, 4.25, ?, NULL, NULL, ?)`,
    );
    insert.run('req_1', 10, JSON.stringify([{ reflectionId: 'ref_a', score: 0.61, why: 'tags' }, { reflectionId: 'ref_b', score: 0.2, why: 'named term "x"' }]), null);
    insert.run('req_2', 20, '[]', 'client_chore');
    insert.run('req_3', 30, '[]', 'injection_off');
    insert.run('req_4', 40, '[]', null);
    const requests = sqliteControlStores(temp.reopen()).requests;
    const base = { agentId: 'agt_a', protocol: 'messages', conversationId: 'cnv_1', status: 200, outcome: 'settled', latencyMs: 5.5, upstreamMs: 4.25, kept: [], rebuilt: null, bar: null, nearMisses: [], scope: null, user: null, answerLimit: null };
    assert.equal(await requests.get('agt_a', 'req_1'), {
      ...base,
      id: 'req_1',
      at: 10,
      injected: [{ reflectionId: 'ref_a', relevance: 0.61, why: 'tags' }, { reflectionId: 'ref_b', relevance: 0.2, why: 'named term "x"' }],
      reason: null,
    });
    assert.equal((await requests.list('agt_a', { limit: 10, nothingAdded: true })).entries.map((e) => [e.id, e.reason]), [['req_4', null], ['req_3', 'injection_off'], ['req_2', 'client_chore']]);
    assert.equal((await requests.list('agt_a', { limit: 10, nothingAdded: false })).entries.map((e) => e.id), ['req_1']);
    assert.ok(temp.db.prepare("SELECT 1 FROM pragma_index_list('request_log') WHERE name = 'request_log_by_conversation'").get(), 'listings by conversation use an index');
  } finally {
    temp.remove();
  }
});

function baseState(agentId: string, id: string) {
  return {
    agentId,
    id,
    protocol: 'messages' as const,
    insertions: [],
    injectedIds: [],
    extractedTurns: 0,
    lastActivityAt: 1,
    lastFinalAt: 0,
    seenMessages: 0,
    createdAt: 1,
  };
}

sqlite.run();

const control = suite('Control over the SQLite stores: sealing, cascades');

const withControl = async (run: (control: Control, box: SecretBox, db: ReturnType<typeof openDatabase>) => Promise<void>) => {
  const db = openDatabase(':memory:');
  const box = new SecretBox(randomBytes(32));
  try {
    await run(new Control(sqliteControlStores(db), { vault: new Vault(box), now: Date.now }), box, db);
  } finally {
    db.close();
  }
};

control('agent secrets: sealed above the store, round trip and patch', () =>
  withControl(async (c) => {
    const acme = await c.createOrg('acme');
    const agent = await c.createAgent(newAgentInput(acme.id, 'helper', 'sk-first'));
    assert.match(acme.id, /^org_[0-9A-Za-z]{16}$/);
    assert.match(agent.id, /^agt_[0-9A-Za-z]{16}$/);
    assert.equal(await c.agentSecrets(agent.id), { upstreamApiKey: 'sk-first', upstreamHeaders: {} });
    assert.not.ok((await c.directory.agentEntry(agent.id))?.sealedSecrets.includes('sk-first'), 'the store holds it sealed');
    await c.updateAgent(acme.id, agent.id, { memory: { topK: 3 } });
    assert.equal(await c.agentSecrets(agent.id), { upstreamApiKey: 'sk-first', upstreamHeaders: {} }, 'kept when not patched');
    const updated = await c.updateAgent(acme.id, agent.id, { secrets: { upstreamApiKey: 'sk-second' }, upstream: { baseUrl: 'https://other.test' } });
    assert.is(updated?.upstream.baseUrl, 'https://other.test');
    assert.equal(updated?.upstream.headerNames, [], 'unpatched upstream fields are kept');
    assert.is(updated?.memory.topK, 3);
    assert.equal(await c.agentSecrets(agent.id), { upstreamApiKey: 'sk-second', upstreamHeaders: {} });
    const withHeaders = await c.updateAgent(acme.id, agent.id, { upstream: { headers: { 'api-key': 'az-1', 'x-gateway': 'gw' } } });
    assert.equal(withHeaders?.upstream.headerNames, ['api-key', 'x-gateway']);
    assert.equal(await c.agentSecrets(agent.id), { upstreamApiKey: 'sk-second', upstreamHeaders: { 'api-key': 'az-1', 'x-gateway': 'gw' } });
    await c.updateAgent(acme.id, agent.id, { secrets: { upstreamApiKey: 'sk-third' } });
    assert.equal((await c.agentSecrets(agent.id))?.upstreamHeaders, { 'api-key': 'az-1', 'x-gateway': 'gw' }, 'a new key keeps the headers');
    await c.updateAgent(acme.id, agent.id, { upstream: { headers: {} } });
    assert.equal([(await c.directory.getAgent(acme.id, agent.id))?.upstream.headerNames, (await c.agentSecrets(agent.id))?.upstreamHeaders], [[], {}]);
    assert.is(await c.agentSecrets('agt_missing'), undefined);
  }));

control('header values an older version stored in clear are used, then sealed at start-up; the record keeps names only', () =>
  withControl(async (c, box, db) => {
    const acme = await c.createOrg('acme');
    const agent = await c.createAgent(newAgentInput(acme.id, 'legacy', 'sk-legacy'));
    const untouched = await c.createAgent(newAgentInput(acme.id, 'plain', 'sk-plain'));
    // What such a version wrote: the values in the agent's upstream JSON, the secrets without them.
    const legacyUpstream = { baseUrl: 'https://gw.test', headers: { 'api-key': 'azure-clear-value', 'x-title': 'Engram' }, responsesState: 'service' };
    db.prepare('UPDATE agents SET upstream = ?, secrets = ? WHERE id = ?').run(
      JSON.stringify(legacyUpstream),
      new Vault(box).sealAgentSecrets(agent.id, { upstreamApiKey: 'sk-legacy' } as never),
      agent.id,
    );
    const before = await c.directory.getAgent(acme.id, agent.id);
    assert.equal(before?.upstream.headerNames, ['api-key', 'x-title']);
    assert.equal((await c.agentSecrets(agent.id))?.upstreamHeaders, legacyUpstream.headers, 'still sent before the move');

    assert.is(await c.sealClearHeaders(), 1, 'only the agent that had clear values');
    const row = db.prepare('SELECT upstream, updated_at FROM agents WHERE id = ?').get(agent.id) as { upstream: string; updated_at: number };
    assert.not.match(row.upstream, /azure-clear-value/);
    assert.equal(JSON.parse(row.upstream).headerNames, ['api-key', 'x-title']);
    assert.is(row.updated_at, before?.updatedAt, 'the move is not an edit');
    assert.equal(await c.agentSecrets(agent.id), { upstreamApiKey: 'sk-legacy', upstreamHeaders: legacyUpstream.headers });
    assert.is(await c.sealClearHeaders(), 0, 'idempotent');
    assert.equal((await c.agentSecrets(untouched.id))?.upstreamHeaders, {});
  }));

control('another secret key cannot read stored upstream keys; a sealed key copied onto another agent does not open', () =>
  withControl(async (c, _box, db) => {
    const acme = await c.createOrg('acme');
    const a = await c.createAgent(newAgentInput(acme.id, 'a', 'sk-a'));
    const b = await c.createAgent(newAgentInput(acme.id, 'b', 'sk-b'));
    const intruder = new Control(sqliteControlStores(db), { vault: new Vault(new SecretBox(randomBytes(32))), now: Date.now });
    await rejects(() => intruder.agentSecrets(a.id), /Cannot decrypt/);
    assert.ok(await intruder.directory.getAgent(acme.id, a.id), 'non-secret data stays readable');
    db.prepare('UPDATE agents SET secrets = (SELECT secrets FROM agents WHERE id = ?) WHERE id = ?').run(a.id, b.id);
    await rejects(() => c.agentSecrets(b.id), /Cannot decrypt/);
  }));

control('responses are sealed, bound to their agent and id', () =>
  withControl(async (c, _box, db) => {
    const record = {
      id: 'resp_1',
      agentId: 'agt_a',
      conversationId: 'c1',
      previousResponseId: null,
      input: [{ role: 'user', content: 'the launch code is 0000' }],
      output: [{ type: 'message' }],
      body: { id: 'resp_1' },
      createdAt: 5,
    };
    await c.putResponse(record, {});
    assert.equal(await c.getResponse('agt_a', 'resp_1', {}), record);
    assert.not.ok((await c.responses.get('agt_a', 'resp_1'))?.sealed.includes('launch code'));
    await c.putResponse({ ...record, id: 'resp_2' }, {});
    db.prepare("UPDATE responses SET sealed = (SELECT sealed FROM responses WHERE id = 'resp_1') WHERE id = 'resp_2'").run();
    await rejects(() => c.getResponse('agt_a', 'resp_2', {}), /Cannot decrypt/);
  }));

control('deleting an agent or an org reaches its tokens, conversations, responses and index', () =>
  withControl(async (c) => {
    const acme = await c.createOrg('acme');
    const agent = await c.createAgent(newAgentInput(acme.id, 'helper', 'k'));
    const keep = await c.createAgent(newAgentInput(acme.id, 'keep', 'k'));
    const other = await c.createOrg('other');
    const elsewhere = await c.createAgent(newAgentInput(other.id, 'x', 'k'));
    for (const a of [agent, keep, elsewhere]) {
      await c.createToken(a, hashToken(`egm_${a.id}`), 'egm_', 't');
      await c.conversations.put(baseState(a.id, 'c1'), undefined);
      await c.conversations.markSession(a.id, 'd', 1);
      await c.putResponse({ id: 'r', agentId: a.id, conversationId: 'c1', previousResponseId: null, input: [], output: [], body: {}, createdAt: 1 }, {});
      await c.indexes.put(a.id, 'index');
    }
    assert.is(await c.deleteAgent(other.id, agent.id), false, 'wrong org');
    assert.is(await c.deleteAgent(acme.id, agent.id), true);
    assert.is(await c.directory.findToken(hashToken(`egm_${agent.id}`)), undefined);
    assert.is(await c.conversations.get(agent.id, 'c1'), undefined);
    assert.is(await c.conversations.hasSession(agent.id, 'd'), false);
    assert.is(await c.getResponse(agent.id, 'r', {}), undefined);
    assert.is(await c.indexes.get(agent.id), undefined);
    assert.ok(await c.conversations.get(keep.id, 'c1'), 'others untouched');

    assert.equal(await c.deleteOrg(acme.id), [keep.id]);
    assert.is(await c.indexes.get(keep.id), undefined);
    assert.is(await c.getResponse(keep.id, 'r', {}), undefined);
    assert.is(await c.deleteOrg(acme.id), undefined);
    assert.is(await c.indexes.get(elsewhere.id), 'index', 'another org untouched');
  }));

control.run();
