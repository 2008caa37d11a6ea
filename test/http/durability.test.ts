/**
 * Nothing lost: a settled exchange survives `kill -9` of the server before its
 * extraction ran, and is learnt after the restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually } from '../support/engram.js';
import { adminApi, freePort, serveProcess, type EngramProcess } from '../support/engram-process.js';

test('kill -9 after the exchange settled, before extraction: learnt after restart', async () => {
  const upstream = await startScriptedUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-durable-'));
  const port = await freePort();
  const settings = { ENGRAM_DATA_DIR: dataDir, ENGRAM_SETTLE_MS: '3000' };
  let engram: EngramProcess = await serveProcess(settings, { port });
  try {
    const org = await adminApi(engram.url, 'POST', '/v0/orgs', { name: 'durable' });
    const agent = await adminApi(engram.url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-durable-0000000000' },
    });
    upstream.enqueue({ type: 'text', text: 'Understood.' });
    const response = await fetch(`${agent.base_url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'REMEMBER: Releases are tagged from the main branch only.' }] }),
    });
    assert.is(response.status, 200);
    await response.text();

    await engram.crash();
    assert.is(upstream.extractionRequests().length, 0, 'extraction had not run before the crash');

    engram = await serveProcess(settings, { port });
    const learnt = await eventually(async () => {
      const listed = await adminApi(engram.url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/reflections`);
      return listed.data?.length > 0 ? listed.data : undefined;
    }, 20_000, 'the reflection after restart');
    assert.ok(learnt.some((r: any) => r.content.includes('main branch')));
  } finally {
    await engram.crash();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
