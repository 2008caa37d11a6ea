/** Changing the embedder re-embeds what the old one stored (DESIGN section 8). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { connect } from '../../src/main.js';
import { reembedStale } from '../../src/memory/reembed.js';
import { hybridSearch } from '../../src/memory/hybrid-search.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';

test('reflections of another embedder are re-embedded, keeping their times and use counts', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-reembed-'));
  const connected = await connect(loadConfig({ 'data-dir': dir, 'admin-token': 'egm_admin_6K-CyMdZGmBqRCoqb-BiVIdyNfGjOv1Zn9qKgpbcPiE' }, {}));
  const { control, reflections, embedder } = connected.deps;
  try {
    const org = await control.createOrg('acme');
    const agent = await control.createAgent({ orgId: org.id, name: 'bot', upstream: { baseUrl: 'http://127.0.0.1:9', headers: {} }, memory: DEFAULT_MEMORY_SETTINGS, secrets: { upstreamApiKey: 'k' } });
    const old = new Float32Array(8).fill(Math.sqrt(1 / 8));
    const facts = ['The deploy script lives in tools/deploy.sh.', 'Run npm run migrate before the tests.'];
    await reflections.upsert(
      facts.map((content, i) => ({
        id: `ref_old_${i}`, agentId: agent.id, kind: 'factual' as const, content, topic: 'ops', tags: [], source: 'conversation' as const,
        createdAt: 1_000 + i, updatedAt: 2_000 + i, lastUsedAt: 3_000, useCount: 7, embedderId: 'old-embedder-8', vector: old,
      })),
    );
    const [query] = await embedder.embed(['where is the deploy script?']);
    assert.equal(await hybridSearch(reflections, agent.id, { text: '', vector: query, limit: 5 }).then((r) => r.filter((x) => x.vectorScore > 0)), [], 'old vectors match nothing');

    assert.is(await reembedStale(connected.deps), 2);
    const after = await reflections.list(agent.id);
    assert.ok(after.every((r) => r.embedderId === embedder.id));
    const first = after.find((r) => r.id === 'ref_old_0')!;
    assert.equal([first.createdAt, first.updatedAt, first.useCount, first.lastUsedAt], [1_000, 2_000, 7, 3_000]);
    const found = await hybridSearch(reflections, agent.id, { text: '', vector: query, limit: 1 });
    assert.is(found[0].reflection.id, 'ref_old_0');
    assert.ok(found[0].vectorScore > 0.3);
    assert.is(await reembedStale(connected.deps), 0, 'nothing left to do');
  } finally {
    await connected.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
