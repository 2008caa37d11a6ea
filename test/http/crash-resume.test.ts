/**
 * Crash recovery on the embedded store: an extraction job that a server had leased when
 * it was killed (`kill -9`) runs again right after a restart on the same data dir, not
 * when its lease would have expired. The ack wait is set to two minutes so the two are
 * far apart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually } from '../support/engram.js';
import { adminApi, freePort, serveProcess, type EngramProcess } from '../support/engram-process.js';

const ACK_WAIT_MS = 120_000;
/**
 * The issue asks for 10 s from the restart; most of that is the process starting (2 to 5 s
 * here, tsx compiling included). The job itself must run at once once the server is up.
 */
const AFTER_LISTENING_BOUND_MS = 5_000;
/** From the spawn, with room for a loaded machine: still a sixth of the ack wait. */
const RESUME_BOUND_MS = 20_000;

test('kill -9 while an extraction is in flight: it runs again within seconds of the restart, not after the ack wait', async () => {
  const upstream = await startScriptedUpstream();
  // The first extraction call never gets an answer: the server is killed while waiting on it.
  let extractions = 0;
  upstream.setExtractor(() => {
    extractions += 1;
    if (extractions === 1) return { type: 'hang' };
    return [{ kind: 'factual', content: 'Releases are cut on Thursdays.', topic: 'releases' }];
  });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-crash-resume-'));
  const port = await freePort();
  const settings = { ENGRAM_DATA_DIR: dataDir, ENGRAM_SETTLE_MS: '200', ENGRAM_EXTRACTION_ACK_WAIT_MS: String(ACK_WAIT_MS) };
  let engram: EngramProcess = await serveProcess(settings, { port });
  try {
    const org = await adminApi(engram.url, 'POST', '/v0/orgs', { name: 'crash' });
    const agent = await adminApi(engram.url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-crash-00000000000000' },
    });
    upstream.enqueue({ type: 'text', text: 'Understood.' });
    const response = await fetch(`${agent.base_url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'REMEMBER: Releases are cut on Thursdays.' }] }),
    });
    assert.is(response.status, 200);
    await response.text();
    await eventually(async () => (upstream.extractionRequests().length === 1 ? true : undefined), 15_000, 'the extraction call');

    await engram.crash();
    const restartedAt = Date.now();
    engram = await serveProcess(settings, { port });
    const listening = Date.now() - restartedAt;
    const learnt = await eventually(async () => {
      const listed = await adminApi(engram.url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/reflections`);
      return listed.data?.length > 0 ? listed.data : undefined;
    }, 30_000, 'the reflection after the restart');
    const resumed = Date.now() - restartedAt;
    console.log(`  restart listening after ${listening} ms; job resumed and its reflection stored ${resumed} ms after the restart (ack wait ${ACK_WAIT_MS} ms)`);
    assert.ok(learnt.some((reflection: any) => reflection.content.includes('Thursdays')));
    assert.is(upstream.extractionRequests().length, 2, 'delivered once more, after the restart');
    assert.ok(resumed - listening < AFTER_LISTENING_BOUND_MS, `resumed ${resumed - listening} ms after the restarted server listened`);
    assert.ok(resumed < RESUME_BOUND_MS, `resumed ${resumed} ms after the restart`);
  } finally {
    await engram.crash();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
