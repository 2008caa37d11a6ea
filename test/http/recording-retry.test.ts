/**
 * No answered turn lost in silence: a turn whose recording the store refuses (a data dir
 * on a full disk for real, a nats-server killed during the turn) still gets its 200, is
 * kept and retried, `/readyz` says not ready meanwhile, and once the store takes writes
 * again the turn is recorded and learnt. Asserted on the idle system: after the retry
 * queue drained and the reflection is there, never after a fixed sleep.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram } from '../support/engram.js';
import { adminApi, inSmallDisk, serveProcess, smallDiskPath } from '../support/engram-process.js';
import { startNatsServer } from '../support/nats-server.js';
import WebSocket from 'ws';

/** One metric's value in a Prometheus text exposition (0 when the series is absent). */
function metric(text: string, series: string): number {
  const line = text.split('\n').find((row) => row.startsWith(series + ' '));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function scrape(url: string): Promise<string> {
  return (await fetch(url + '/metrics')).text();
}

async function readyz(url: string): Promise<{ status: number; json: any }> {
  const response = await fetch(url + '/readyz');
  return { status: response.status, json: await response.json() };
}

/** Fills the disk holding `dir` until it refuses a single byte more. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1024 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          if (fs.writeSync(fd, chunk) < size) break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

function ask(baseUrl: string, token: string, question: string): Promise<{ status: number; body: string; text: string }> {
  return chat(baseUrl, token, [{ role: 'user', content: question }]);
}

async function chat(baseUrl: string, token: string, messages: unknown[]): Promise<{ status: number; body: string; text: string }> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ model: 'gpt-test', stream: true, messages }),
  });
  const body = await response.text();
  // The answer's text, from the stream's deltas.
  const text = body
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');
  return { status: response.status, body, text };
}

/** One `response.create` over a Responses WebSocket; every frame up to the terminal one. */
async function overWebSocket(baseUrl: string, token: string, body: Record<string, unknown>): Promise<any[]> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${token}` } });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const frames: any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data));
        frames.push(frame);
        if (['response.completed', 'response.failed', 'response.incomplete', 'error'].includes(frame.type)) resolve();
      });
      socket.once('close', () => reject(new Error(`closed after ${frames.length} frames`)));
    });
    socket.send(JSON.stringify({ type: 'response.create', ...body }));
    await done;
    return frames;
  } finally {
    socket.close();
  }
}

test('data dir on a full disk: every turn answered 200, /readyz 503 naming recording; once there is room the turns are recorded and learnt', async () => {
  const upstream = await startScriptedUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-full-disk-'));
  const engram = await serveProcess({ ENGRAM_DATA_DIR: dataDir, ENGRAM_SETTLE_MS: '200' }, { wrap: inSmallDisk(dataDir, '64m') });
  try {
    const org = await adminApi(engram.url, 'POST', '/v0/orgs', { name: 'full-disk' });
    const agent = await adminApi(engram.url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-full-disk-0000000000' },
    });
    // The token's first use is recorded on the full disk: a write that fails there, and
    // must refuse no request.
    assert.is((await readyz(engram.url)).status, 200);
    const filler = fill(smallDiskPath(engram.child, dataDir));

    const facts = ['Releases are tagged from the main branch only.', 'The staging database is called birch.', 'Deploys need two approvals.'];
    for (const fact of facts) {
      upstream.enqueue({ type: 'text', text: 'Understood.' });
      const answered = await ask(agent.base_url, agent.token, `REMEMBER: ${fact}`);
      assert.is(answered.status, 200, `the client gets its whole answer: ${answered.body}\n${engram.stderr()}`);
      assert.is(answered.text, 'Understood.');
      assert.match(answered.body, 'data: [DONE]');
    }
    // The Responses WebSocket settles turns the same way; its response record is among the writes kept.
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    const frames = await overWebSocket(agent.base_url, agent.token, { model: 'gpt-test', store: true, input: 'REMEMBER: Hotfixes branch from the latest tag.' });
    const completed = frames.at(-1);
    assert.is(completed.type, 'response.completed', JSON.stringify(completed));
    facts.push('Hotfixes branch from the latest tag.');
    const notReady = await readyz(engram.url);
    assert.is(notReady.status, 503);
    assert.equal(notReady.json.failed, ['recording']);
    assert.match(notReady.json.checks.recording, /^4 answered turns not yet recorded \(retrying\): .*database or disk is full/);
    let scraped = await scrape(engram.url);
    assert.is(metric(scraped, 'engram_recordings_pending'), 4);
    assert.is(metric(scraped, 'engram_recordings_deferred_total'), 4);

    fs.rmSync(filler);
    await eventually(async () => ((await readyz(engram.url)).status === 200 ? true : undefined), 20_000, '/readyz ready again');
    const learnt = await eventually(async () => {
      const listed = await adminApi(engram.url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/reflections`);
      return listed.data?.length >= facts.length ? listed.data : undefined;
    }, 20_000, 'the reflections of the turns answered while the disk was full');
    for (const fact of facts) assert.ok(learnt.some((r: any) => r.content.includes(fact.slice(0, 20))), `learnt: ${fact}`);
    const kept = await fetch(`${agent.base_url}/v1/responses/${completed.response.id}`, { headers: { authorization: `Bearer ${agent.token}` } });
    assert.is(kept.status, 200, 'the response record, refused at first, is stored');
    scraped = await scrape(engram.url);
    assert.is(metric(scraped, 'engram_recordings_pending'), 0);
    assert.is(metric(scraped, 'engram_recording_retries_total{outcome="recorded"}'), 4);
    assert.is(metric(scraped, 'engram_recordings_lost_total{reason="overflow"}'), 0);
  } finally {
    await engram.crash();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a retried turn that lands after a newer turn of its conversation undoes nothing: both turns are learnt', async () => {
  const upstream = await startScriptedUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-full-disk-'));
  // Jobs wait long enough that the newer turn's job still waits when the older turn's retry publishes its own.
  const engram = await serveProcess({ ENGRAM_DATA_DIR: dataDir, ENGRAM_SETTLE_MS: '4000' }, { wrap: inSmallDisk(dataDir, '64m') });
  try {
    const org = await adminApi(engram.url, 'POST', '/v0/orgs', { name: 'retry-order' });
    const agent = await adminApi(engram.url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-retry-order-000000000' },
    });
    upstream.enqueue({ type: 'text', text: 'Hello.' });
    assert.is((await ask(agent.base_url, agent.token, 'Hello')).status, 200);
    const filler = fill(smallDiskPath(engram.child, dataDir));
    const first = [{ role: 'user', content: 'REMEMBER: The nightly job runs at 02:00 UTC.' }];
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    assert.is((await chat(agent.base_url, agent.token, first)).status, 200);
    // Let the retries fail a few rounds, so the next one is a second or more away.
    await eventually(async () => (metric(await scrape(engram.url), 'engram_recording_retries_total{outcome="failed"}') >= 4 ? true : undefined), 20_000, 'failed retries');
    fs.rmSync(filler);
    // The newer turn of the same conversation lands first; its landing wakes the retry of the older one.
    upstream.enqueue({ type: 'text', text: 'Also noted.' });
    const second = [...first, { role: 'assistant', content: 'Noted.' }, { role: 'user', content: 'REMEMBER: The nightly job writes to the archive bucket.' }];
    assert.is((await chat(agent.base_url, agent.token, second)).status, 200);
    await eventually(async () => ((await readyz(engram.url)).status === 200 ? true : undefined), 20_000, 'every turn recorded');
    const learnt = await eventually(async () => {
      const listed = await adminApi(engram.url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/reflections`);
      const contents: string[] = (listed.data ?? []).map((r: any) => r.content);
      return contents.some((c) => c.includes('02:00')) && contents.some((c) => c.includes('archive bucket')) ? contents : undefined;
    }, 30_000, 'both turns learnt');
    assert.ok(learnt.length >= 2);
    assert.is(metric(await scrape(engram.url), 'engram_recording_retries_total{outcome="recorded"}'), 1);
  } finally {
    await engram.crash();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('nats-server killed during a turn and restarted: the turn is answered, kept, and recorded and learnt after the restart', async () => {
  const nats = await startNatsServer();
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'nats-url': nats.url, 'settle-ms': '200' });
  try {
    const agent = await engram.createAgent(upstream.url);
    // A slow answer: NATS is killed while it streams, so the turn settles against a dead server.
    upstream.enqueue([{ type: 'text', text: 'Noted.' }, { chunkDelayMs: 300 }]);
    const answering = ask(agent.baseUrl, agent.token, 'REMEMBER: The build cache lives on the fast disk.');
    await eventually(async () => (upstream.conversationRequests().length > 0 ? true : undefined), 5_000, 'the upstream asked');
    // Down longer than the NATS client waits for an answer, so the turn's writes fail.
    const restarted = nats.restart({ kill: true, downMs: 12_000 });
    const answered = await answering;
    assert.is(answered.status, 200);
    assert.is(answered.text, 'Noted.');
    assert.match(answered.body, 'data: [DONE]');
    const notReady = await readyz(engram.url);
    assert.is(notReady.status, 503, JSON.stringify(notReady.json));
    assert.ok(notReady.json.failed.includes('recording'), JSON.stringify(notReady.json));
    await restarted;
    await eventually(async () => ((await readyz(engram.url)).status === 200 ? true : undefined), 30_000, '/readyz ready again');
    const learnt = await engram.waitForReflections(agent, 1);
    assert.ok(learnt.some((r: any) => r.content.includes('fast disk')));
    const scraped = await scrape(engram.url);
    assert.is(metric(scraped, 'engram_recordings_pending'), 0);
    assert.ok(metric(scraped, 'engram_recording_retries_total{outcome="recorded"}') >= 1);
  } finally {
    await engram.close();
    await upstream.close();
    await nats.cleanup();
  }
});

test.run();
