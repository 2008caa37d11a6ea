/**
 * A story told on both engines: once on the embedded SQLite stores (one server), once on
 * two replicas sharing one nats-server (Debian's, started on random ports), so that each
 * request of the story may be sent to either replica.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEngram, type TestEngram } from './engram.js';
import { natsServerBinary, startNatsServer } from './nats-server.js';

/** The story, its requests sent to `a` or `b` (the same server on SQLite). */
export type Story = (a: TestEngram, b: TestEngram) => Promise<void>;

export async function onSqlite(story: Story, settings: Record<string, string> = {}): Promise<void> {
  const engram = await startEngram(settings);
  try {
    await story(engram, engram);
  } finally {
    await engram.close();
  }
}

/** `prefix`: the deployment's NATS prefix, a name for the story. */
export async function onNatsReplicas(prefix: string, story: Story, settings: Record<string, string> = {}): Promise<void> {
  if (!natsServerBinary()) throw new Error('nats-server is not installed; .ci/run installs it (apt-get install nats-server)');
  const nats = await startNatsServer();
  const dataDir = mkdtempSync(path.join(tmpdir(), `engram-${prefix}-`));
  const shared = { 'nats-url': nats.url, 'nats-prefix': prefix, 'secret-key': 'cd'.repeat(32), ...settings };
  const a = await startEngram(shared, dataDir);
  const b = await startEngram(shared, dataDir);
  try {
    await story(a, b);
  } finally {
    await a.close();
    await b.close();
    await nats.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
