/**
 * What waits in the extraction queue is sealed at rest: a settled conversation's turns
 * sit in the SQLite file (and its WAL) encrypted until the job is delivered, and a job
 * sealed with another key is dead-lettered instead of retried forever.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { eventually, startEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

test('a queued extraction job holds no conversation text in the database bytes; it is learnt once delivered', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '1500' });
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.enqueue({ type: 'text', text: 'Noted: the hatch code is violet-heron-7731.' });
    const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'REMEMBER: The staging hatch code is violet-heron-7731.' }] }),
    });
    assert.is(answered.status, 200);
    await answered.text();
    assert.is(await engram.running.deps.bus.pending(EXTRACTION_SUBJECT), 1, 'the job waits for the settle time');

    const file = path.join(engram.dataDir, 'engram.db');
    const bytes = [file, `${file}-wal`].filter(existsSync).map((name) => readFileSync(name).toString('latin1')).join('');
    assert.not.ok(bytes.includes('violet-heron-7731'), 'the queued turns are sealed');
    assert.not.ok(bytes.includes('staging hatch code'), 'nothing of the conversation in clear');

    const [learnt] = await engram.waitForReflections(agent, 1);
    assert.match(learnt.content, 'violet-heron-7731', 'opened when delivered, and learnt');
    await eventually(async () => ((await engram.running.deps.bus.pending(EXTRACTION_SUBJECT)) === 0 ? true : undefined), 5_000, 'the job acked');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test.run();
