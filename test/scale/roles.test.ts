/**
 * `engram serve --role`: API replicas only proxy and queue extraction jobs; worker
 * replicas only extract. On one NATS they make one service, and extraction scales apart
 * from the request path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { idle, startEngram } from '../support/engram.js';
import { startNatsServer } from '../support/nats-server.js';

test('an api replica queues the job and runs no extraction; a worker replica extracts it and serves no API', async () => {
  const nats = await startNatsServer();
  const upstream = await startScriptedUpstream();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-roles-'));
  const settings = { 'nats-url': nats.url, 'nats-prefix': 'roles', 'secret-key': '12'.repeat(32), 'settle-ms': '20' };
  const api = await startEngram({ ...settings, role: 'api' }, dataDir);
  let worker: Awaited<ReturnType<typeof startEngram>> | undefined;
  try {
    const agent = await api.createAgent(upstream.url);
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'REMEMBER: Feature flags live in flags.yaml.' }] }),
    });
    assert.is(answered.status, 200);
    await answered.text();
    // The job waits on the bus for a worker.
    assert.is(await api.running.deps.bus.pending(EXTRACTION_SUBJECT), 1);

    worker = await startEngram({ ...settings, role: 'worker' }, dataDir);
    const learnt = await api.waitForReflections(agent, 1);
    assert.match(learnt[0].content, 'flags.yaml');
    assert.is(upstream.extractionRequests().length, 1, 'extracted once, by the worker');
    await idle(api);

    const onWorker = await fetch(`${worker.url}/v0/orgs/${agent.orgId}/agents/${agent.agentId}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.is(onWorker.status, 404, 'a worker serves no API route');
    await onWorker.text();
  } finally {
    await worker?.close();
    await api.close();
    await upstream.close();
    await nats.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
