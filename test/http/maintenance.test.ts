/** Idle conversations, ended sessions and OAuth clients never used are pruned by the running server, active ones kept. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { connect } from '../../src/main.js';
import { newConversationState } from '../../src/domain/conversation-state.js';
import { maintenancePlugin } from '../../src/http/maintenance.js';
import { newOAuthClient, newSession, UNUSED_CLIENT_GRACE_MS } from '../../src/domain/account-records.js';
import { eventually } from '../support/engram.js';
import { ACTIVITY_KEEP_DAYS } from '../../src/http/maintenance.js';
import { dayOf } from '../../src/observability/activity.js';

test('conversations idle longer than the TTL, ended sessions and old activity counts are pruned on schedule', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-maintenance-'));
  const config = loadConfig({ 'data-dir': dir, 'admin-token': 'egm_admin_WjjxN7Tt_dNm7EQ7rnC693eJ7vcaiUdk3EOKsXM6_FU', 'conversation-ttl-days': '1' }, {});
  const connected = await connect(config);
  const { control } = connected.deps;
  const org = await control.createOrg('acme');
  const agent = await control.createAgent({
    orgId: org.id,
    name: 'bot',
    upstream: { baseUrl: 'http://127.0.0.1:9', headers: {} },
    memory: { inject: true, extract: true, topK: 5, tokenBudget: 800, minScore: 0.2, extractionModel: null },
    secrets: { upstreamApiKey: 'sk-x' },
  });
  const now = Date.now();
  await control.conversations.put(newConversationState(agent.id, 'stale', 'messages', now - 2 * 24 * 3600_000), undefined);
  await control.conversations.put(newConversationState(agent.id, 'fresh', 'messages', now - 3600_000), undefined);
  // Dashboard sessions: one ended an hour ago, one still open.
  const { store } = connected.deps.accounts;
  await store.createSession({ ...newSession('usr_a', 'ab'.repeat(32), now - 2 * 3600_000, 3600_000), id: 'ses_ended' });
  await store.createSession({ ...newSession('usr_a', 'cd'.repeat(32), now, 3600_000), id: 'ses_open' });
  // Activity counts: a day past the kept span, and one within it.
  const oldDay = dayOf(now - (ACTIVITY_KEEP_DAYS + 1) * 24 * 3600_000);
  const keptDay = dayOf(now - (ACTIVITY_KEEP_DAYS - 1) * 24 * 3600_000);
  await control.activity.add(agent.id, oldDay, { requests: 3 });
  await control.activity.add(agent.id, keptDay, { requests: 2 });
  // OAuth clients: one that never signed in, registered past the grace; one that signed in; one still within it.
  const unused = { ...newOAuthClient('unused', ['http://127.0.0.1/cb'], now - UNUSED_CLIENT_GRACE_MS - 3600_000), id: 'cli_unused' };
  const used = { ...newOAuthClient('used', ['http://127.0.0.1/cb'], now - 2 * UNUSED_CLIENT_GRACE_MS), id: 'cli_used' };
  const young = { ...newOAuthClient('young', ['http://127.0.0.1/cb'], now - 3600_000), id: 'cli_young' };
  for (const client of [unused, used, young]) await store.createClient(client);
  await store.clientSignedIn(used.id, now - UNUSED_CLIENT_GRACE_MS);

  const app = Fastify();
  await app.register(maintenancePlugin, { deps: connected.deps, firstAfterMs: 10, everyMs: 50 });
  await app.ready();
  try {
    await eventually(async () => ((await control.getConversation(agent.id, 'stale')) === undefined ? true : undefined), 5000, 'the stale conversation to go');
    assert.ok(await control.getConversation(agent.id, 'fresh'));
    await eventually(async () => ((await connected.deps.accounts.store.getSession('ses_ended')) === undefined ? true : undefined), 5000, 'the ended session to go');
    assert.ok(await connected.deps.accounts.store.getSession('ses_open'));
    await eventually(async () => ((await store.getClient('cli_unused')) === undefined ? true : undefined), 5000, 'the unused client to go');
    assert.ok(await store.getClient('cli_used'), 'a client that signed in stays');
    assert.ok(await store.getClient('cli_young'), 'a client within its grace stays');
    await eventually(async () => ((await control.activity.read(agent.id, oldDay)).length === 1 ? true : undefined), 5000, 'the old activity day to go');
    assert.equal((await control.activity.read(agent.id, oldDay)).map((d) => [d.day, d.requests]), [[keptDay, 2]]);
  } finally {
    await app.close();
    await connected.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
