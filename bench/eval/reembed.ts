/**
 * Changing the embedder re-embeds stored reflections in the background: how long 10,000
 * take (from the hashing embedder's vectors to the default embedder's), and how long the
 * event loop is held meanwhile (the longest gap between timer ticks: what a request
 * arriving during the re-embedding would wait at most).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { Control } from '../../src/control/control.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import { reembedStale } from '../../src/memory/reembed.js';
import type { Embedder, StoredReflection } from '../../src/ports/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';
import { reflectionSeeds } from '../workload.js';

export interface ReembedResult {
  reflections: number;
  from: string;
  to: string;
  seconds: number;
  perSecond: number;
  /** Longest event-loop stall while it ran, in ms. */
  maxStallMs: number;
}

export async function benchReembed(from: Embedder, to: Embedder, count = 10_000): Promise<ReembedResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-reembed-'));
  const adapters = openSqliteAdapters(path.join(dir, 'engram.db'));
  const control = new Control(adapters.control, { vault: new Vault(new SecretBox(randomBytes(32))), now: Date.now });
  try {
    const org = await control.createOrg('reembed');
    const agent = await control.createAgent({
      orgId: org.id,
      name: 'agent',
      upstream: { baseUrl: 'http://127.0.0.1:9', headers: {} },
      memory: DEFAULT_MEMORY_SETTINGS,
      secrets: { upstreamApiKey: 'unused' },
    });
    const seeds = reflectionSeeds(count);
    for (let at = 0; at < seeds.length; at += 500) {
      const batch = seeds.slice(at, at + 500);
      const vectors = await from.embed(batch.map((s) => s.content));
      const rows: StoredReflection[] = batch.map((s, i) => ({
        id: `ref_${at + i}`,
        agentId: agent.id,
        kind: s.kind,
        content: s.content,
        topic: s.topic,
        tags: s.tags,
        source: 'conversation',
        createdAt: 1,
        updatedAt: 1,
        lastUsedAt: null,
        useCount: 0,
        embedderId: from.id,
        vector: vectors[i],
      }));
      await adapters.reflections.upsert(rows);
    }
    let maxStallMs = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      maxStallMs = Math.max(maxStallMs, now - last - 1);
      last = now;
    }, 1);
    const started = performance.now();
    const done = await reembedStale({ control, reflections: adapters.reflections, embedder: to });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(ticker);
    return { reflections: done, from: from.id, to: to.id, seconds: round(seconds), perSecond: Math.round(done / seconds), maxStallMs: round(maxStallMs) };
  } finally {
    await adapters.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
