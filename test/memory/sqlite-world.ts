/**
 * The real embedded storage for memory tests (no mocks of our own storage or bus): a
 * temp SQLite file with the control store, reflection store and event bus, one org and
 * one agent. Not a test file: it never calls `run()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteAdapters, type SqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';
import { Control } from '../../src/control/control.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent, type MemorySettings } from '../../src/domain/types.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { createReflectionWriter, type ReflectionWriter } from '../../src/memory/reflection-writer.js';
import type { Embedder } from '../../src/ports/index.js';

export interface World extends Omit<SqliteAdapters, 'control'> {
  control: Control;
  agent: Agent;
  embedder: Embedder;
  writer: ReflectionWriter;
  clock: { now: number };
  dispose(): Promise<void>;
}

export async function openWorld(
  options: { upstreamUrl?: string; memory?: Partial<MemorySettings>; headers?: Record<string, string>; maxReflections?: number } = {},
): Promise<World> {
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-memory-'));
  const adapters = openSqliteAdapters(path.join(dir, 'engram.db'), { bus: { maxPollMs: 20 } });
  const clock = { now: 1_700_000_000_000 };
  const control = new Control(adapters.control, { vault: new Vault(new SecretBox(randomBytes(32))), now: () => clock.now });
  const org = await control.createOrg('acme');
  const agent = await control.createAgent({
    orgId: org.id,
    name: 'coder',
    upstream: { baseUrl: options.upstreamUrl ?? 'http://127.0.0.1:9', headers: options.headers ?? {} },
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...options.memory },
    secrets: { upstreamApiKey: 'sk-upstream-test-key-0123456789' },
  });
  const embedder = createLocalEmbedder();
  const writer = createReflectionWriter({
    reflections: adapters.reflections,
    embedder,
    control,
    now: () => clock.now,
    ...(options.maxReflections ? { maxReflections: options.maxReflections } : {}),
  });
  return {
    ...adapters,
    control,
    agent,
    embedder,
    writer,
    clock,
    async dispose() {
      await adapters.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
