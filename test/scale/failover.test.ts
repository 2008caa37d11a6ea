/**
 * What a deployment of several replicas on NATS survives: a replica killed (`kill -9`)
 * while its extraction call is in flight, and a restart of nats-server while requests
 * flow. Real processes and a real nats-server; the upstream is the scripted one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openNatsAdapters, type NatsAdapters } from '../../src/adapters/nats/index.js';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram } from '../support/engram.js';
import { adminApi, serveProcess, type EngramProcess } from '../support/engram-process.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';

interface Context {
  nats: NatsServer;
  upstream: ScriptedUpstream;
}
const test = suite<Context>('replicas on NATS: failover');

test.before(async (context) => {
  context.nats = await startNatsServer();
  context.upstream = await startScriptedUpstream();
});
test.after(async ({ nats, upstream }) => {
  await upstream?.close();
  await nats?.cleanup();
});

const SECRET_KEY = 'cd'.repeat(32);

test('kill -9 of the replica whose extraction call is in flight: the other finishes the job after the ack wait, once', async ({ nats, upstream }) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-failover-'));
  const settings = {
    ENGRAM_DATA_DIR: dataDir,
    ENGRAM_NATS_URL: nats.url,
    ENGRAM_NATS_PREFIX: 'failover',
    ENGRAM_SECRET_KEY: SECRET_KEY,
    ENGRAM_SETTLE_MS: '50',
    ENGRAM_EXTRACTION_ACK_WAIT_MS: '2000',
  };
  let calls = 0;
  upstream.setExtractor((_request, transcript) => {
    calls++;
    // The first replica's call never gets an answer: it is still in flight when the replica dies.
    if (calls === 1) return { type: 'hang' };
    return /release branch/.test(transcript) ? [{ kind: 'procedural', content: 'Never push to the release branch directly.', topic: 'git' }] : [];
  });
  let a: EngramProcess | undefined;
  let b: EngramProcess | undefined;
  let bus: NatsAdapters | undefined;
  try {
    a = await serveProcess({ ...settings, ENGRAM_ROLE: 'all' });
    const org = await adminApi(a.url, 'POST', '/v0/orgs', { name: 'failover' });
    const agent = await adminApi(a.url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-failover-0000000000' },
    });
    upstream.enqueue({ type: 'text', text: 'Understood.' });
    const answered = await fetch(`${agent.base_url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'AVOID: pushing to the release branch directly.' }] }),
    });
    assert.is(answered.status, 200);
    await answered.text();
    await eventually(async () => (upstream.extractionRequests().length === 1 ? true : undefined), 10_000, 'A to call the upstream');

    // B starts after A took the job, so only a redelivery can give it the job.
    b = await serveProcess({ ...settings, ENGRAM_ROLE: 'all' });
    await a.crash();
    const startedAt = Date.now();
    const path_ = `/v0/orgs/${org.id}/agents/${agent.id}/reflections`;
    const learnt = await eventually(async () => {
      const listed = await adminApi(b!.url, 'GET', path_);
      return listed.data.length > 0 ? listed.data : undefined;
    }, 20_000, 'B to finish the job');
    assert.match(learnt[0].content, 'release branch');
    assert.ok(Date.now() - startedAt < 15_000, 'redelivered after the ack wait, not after the old two minutes');

    // Idle: the bus holds nothing more, so no second extraction can still be coming.
    bus = await openNatsAdapters({ url: nats.url, prefix: 'failover' });
    await eventually(async () => ((await bus!.bus.pending(EXTRACTION_SUBJECT)) === 0 ? true : undefined), 10_000, 'an empty queue');
    assert.is(upstream.extractionRequests().length, 2, 'one call by A (lost with it), one by B');
    assert.is((await adminApi(b.url, 'GET', path_)).data.length, 1, 'stored once');
    assert.equal((await adminApi(b.url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/extraction/dead-letters`)).data, []);
  } finally {
    upstream.reset();
    await bus?.close();
    await a?.crash();
    await b?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('nats-server restarts while requests flow: Engram reconnects, no request hangs, nothing settled is lost', async ({ nats, upstream }) => {
  // What Engram logs: where it says it lost NATS and got it back.
  const log: string[] = [];
  const engram = await startEngram({ 'nats-url': nats.url, 'nats-prefix': 'restart', 'secret-key': SECRET_KEY, 'settle-ms': '50' }, undefined, { log });
  const logged = (message: string) => log.some((line) => (JSON.parse(line) as { msg?: string }).msg === message);
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.setDefaultReply(() => ({ type: 'text', text: 'Noted.' }));
    const results: Array<{ fact: string; status: number; started: number; ms: number; body: string }> = [];
    const ask = async (i: number) => {
      const fact = `Worker pool ${i} drains queue q${i}.`;
      const started = Date.now();
      const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', 'x-engram-conversation': `restart-${i}` },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `REMEMBER: ${fact}` }] }),
        signal: AbortSignal.timeout(30_000),
      });
      results.push({ fact, status: response.status, started, ms: Date.now() - started, body: await response.text() });
    };
    let i = 0;
    const traffic = (async () => {
      const until = Date.now() + 4_000;
      // Paced, as a few busy clients are: the outage must fall between requests and inside some.
      while (Date.now() < until) {
        await ask(i++);
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.not.ok(logged('NATS connection lost; reconnecting'), 'connected before the restart');
    const downAt = Date.now();
    await nats.restart({ downMs: 1_000 });
    const upAt = Date.now();
    await traffic;
    // The outage happened, to Engram and amid the traffic: else this test proves nothing.
    assert.ok(logged('NATS connection lost; reconnecting'), 'Engram saw NATS go away');
    await eventually(async () => (logged('NATS connection restored') ? true : undefined), 20_000, 'Engram to reconnect');
    assert.ok(
      results.some((result) => result.started < upAt && result.started + result.ms > downAt),
      'a request was under way while NATS was down',
    );
    // Once reconnected, requests succeed again.
    await eventually(async () => {
      await ask(i++);
      return results.at(-1)!.status === 200 ? true : undefined;
    }, 20_000, 'a request to succeed after the restart');

    for (const result of results) {
      assert.ok([200, 503].includes(result.status), `status ${result.status}: ${result.body}`);
      if (result.status !== 200) assert.match(result.body, /"error"/, 'a failure is in the protocol envelope');
      assert.ok(result.ms < 20_000, `no request hangs (${result.ms} ms)`);
    }
    const answered = results.filter((result) => result.status === 200).map((result) => result.fact);
    assert.ok(answered.length > 3);
    const learnt = await eventually(async () => {
      const page = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections?limit=200`);
      const listed = (page.json.data as Array<{ content: string }>).map((r) => r.content);
      return answered.every((fact) => listed.includes(fact)) ? listed : undefined;
    }, 30_000, 'every answered fact learnt');
    assert.ok(learnt.length >= answered.length);
  } finally {
    upstream.reset();
    await engram.close();
  }
});

test.run();
