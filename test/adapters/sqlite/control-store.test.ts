import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteControlStore } from '../../../src/adapters/sqlite/control-store.js';
import { openDatabase } from '../../../src/adapters/sqlite/database.js';
import { SecretBox } from '../../../src/security/secret-box.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../../src/security/tokens.js';
import { controlStoreContract, newAgentInput } from '../../contracts/control-store.contract.js';
import { rejects } from '../../contracts/helpers.js';
import { tempDb } from './helpers.js';

controlStoreContract('sqlite (file)', async () => {
  const temp = tempDb();
  const box = new SecretBox(randomBytes(32));
  let store = new SqliteControlStore(temp.db, box);
  return {
    store,
    reopen: async () => {
      await store.close();
      store = new SqliteControlStore(temp.reopen(), box);
      return store;
    },
    cleanup: async () => {
      await store.close();
      temp.remove();
    },
  };
});

controlStoreContract('sqlite (:memory:)', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteControlStore(db, new SecretBox(randomBytes(32)));
  return {
    store,
    cleanup: async () => {
      await store.close();
      db.close();
    },
  };
});

const sqlite = suite('SqliteControlStore specifics');

sqlite('secrets are never written in clear: upstream key and token absent from the file', async () => {
  const temp = tempDb();
  try {
    const store = new SqliteControlStore(temp.db, new SecretBox(randomBytes(32)));
    const apiKey = 'sk-live-' + randomBytes(16).toString('hex');
    const org = await store.createOrg('acme');
    const agent = await store.createAgent(newAgentInput(org.id, 'helper', apiKey));
    const token = generateToken();
    await store.createToken(agent.id, hashToken(token), tokenDisplayPrefix(token), 't');
    await store.updateAgent(org.id, agent.id, { secrets: { upstreamApiKey: apiKey + '-v2' } });

    // Everything the process wrote, WAL included, before and after a checkpoint.
    const bytes = (): string =>
      [temp.file, temp.file + '-wal']
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file).toString('latin1'))
        .join('');
    for (const dump of [bytes(), (temp.db.pragma('wal_checkpoint(TRUNCATE)'), bytes())]) {
      assert.not.ok(dump.includes(apiKey), 'upstream key in clear');
      assert.not.ok(dump.includes(token), 'access token in clear');
      assert.ok(dump.includes(hashToken(token)), 'the token hash is what is stored');
    }
    temp.db.close();
    const all = readFileSync(temp.file).toString('latin1');
    assert.not.ok(all.includes(apiKey));
    assert.not.ok(all.includes(token));
  } finally {
    temp.remove();
  }
});

sqlite('another secret key cannot read stored upstream keys', async () => {
  const temp = tempDb();
  try {
    const store = new SqliteControlStore(temp.db, new SecretBox(randomBytes(32)));
    const org = await store.createOrg('acme');
    const agent = await store.createAgent(newAgentInput(org.id, 'helper', 'sk-abc'));
    const intruder = new SqliteControlStore(temp.reopen(), new SecretBox(randomBytes(32)));
    await rejects(() => intruder.getAgentSecrets(agent.id), /Cannot decrypt/);
    assert.ok(await intruder.getAgent(org.id, agent.id), 'non-secret data stays readable');
  } finally {
    temp.remove();
  }
});

sqlite('a sealed key copied onto another agent does not decrypt', async () => {
  const temp = tempDb();
  try {
    const store = new SqliteControlStore(temp.db, new SecretBox(randomBytes(32)));
    const org = await store.createOrg('acme');
    const a = await store.createAgent(newAgentInput(org.id, 'a', 'sk-a'));
    const b = await store.createAgent(newAgentInput(org.id, 'b', 'sk-b'));
    temp.db.prepare('UPDATE agents SET secrets = (SELECT secrets FROM agents WHERE id = ?) WHERE id = ?').run(a.id, b.id);
    await rejects(() => store.getAgentSecrets(b.id));
  } finally {
    temp.remove();
  }
});

sqlite('findToken records lastUsedAt at most once per resolution window', async () => {
  const db = openDatabase(':memory:');
  let now = 1_000_000;
  const store = new SqliteControlStore(db, new SecretBox(randomBytes(32)), {
    now: () => now,
    lastUsedResolutionMs: 60_000,
  });
  const org = await store.createOrg('acme');
  const agent = await store.createAgent(newAgentInput(org.id, 'helper'));
  const token = generateToken();
  await store.createToken(agent.id, hashToken(token), tokenDisplayPrefix(token), 't');
  assert.is((await store.findToken(hashToken(token)))?.token.lastUsedAt, 1_000_000);
  now += 1_000;
  assert.is((await store.findToken(hashToken(token)))?.token.lastUsedAt, 1_000_000);
  now += 60_000;
  assert.is((await store.findToken(hashToken(token)))?.token.lastUsedAt, 1_061_000);
  assert.is((await store.listTokens(agent.id))[0].lastUsedAt, 1_061_000);
  db.close();
});

sqlite('ids are opaque and prefixed', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteControlStore(db, new SecretBox(randomBytes(32)));
  const org = await store.createOrg('acme');
  const agent = await store.createAgent(newAgentInput(org.id, 'helper'));
  assert.match(org.id, /^org_[0-9A-Za-z]{16}$/);
  assert.match(agent.id, /^agt_[0-9A-Za-z]{16}$/);
  db.close();
});

sqlite.run();
