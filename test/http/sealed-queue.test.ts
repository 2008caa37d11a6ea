/**
 * What waits in the extraction queue is sealed at rest: a settled conversation's turns,
 * as the client sent them (the worker redacts them), sit in the SQLite file (and its WAL)
 * encrypted until the job is delivered.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXTRACTION_SUBJECT, type UnredactedJob } from '../../src/memory/extraction-job.js';
import { idle, startEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

const KEY = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';

test('a queued extraction job holds no conversation text in the database bytes; it is learnt once delivered', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '1500' });
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.enqueue({ type: 'text', text: 'Noted: the hatch code is violet-heron-7731.' });
    const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `REMEMBER: The staging hatch code is violet-heron-7731. Deploy key ${KEY}.` }] }),
    });
    assert.is(answered.status, 200);
    await answered.text();
    assert.is(await engram.running.deps.bus.pending(EXTRACTION_SUBJECT), 1, 'the job waits for the settle time');

    // The answer ended once the turn was durable: its job is the turn as sent, redacted by the worker (DESIGN section 2).
    const [queued] = await engram.running.deps.bus.queued(EXTRACTION_SUBJECT);
    assert.is((queued.payload as UnredactedJob).unredacted, true);
    const file = path.join(engram.dataDir, 'engram.db');
    const bytes = [file, `${file}-wal`].filter(existsSync).map((name) => readFileSync(name).toString('latin1')).join('');
    assert.not.ok(bytes.includes('violet-heron-7731'), 'the queued turns are sealed');
    assert.not.ok(bytes.includes('staging hatch code'), 'nothing of the conversation in clear');
    assert.not.ok(bytes.includes(KEY), 'nor the secret it holds');
    const jobs = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/jobs`);
    assert.is(jobs.json.queued.length, 1);
    assert.not.match(JSON.stringify(jobs.json), 'hatch', 'a job listed shows what it covers, never its text');

    const [learnt] = await engram.waitForReflections(agent, 1);
    assert.match(learnt.content, 'violet-heron-7731', 'opened when delivered, and learnt');
    const [call] = upstream.extractionRequests();
    assert.match(call.raw.toString('utf8'), 'violet-heron-7731');
    assert.not.match(call.raw.toString('utf8'), KEY, 'redacted before it is sent for extraction');
    assert.match(call.raw.toString('utf8'), '[REDACTED:github_token]');
    await idle(engram);
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test.run();
