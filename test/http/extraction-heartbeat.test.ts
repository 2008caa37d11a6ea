/**
 * A live extraction keeps its lease: while the upstream takes several ack waits to
 * answer, the handler's heartbeats (`BusMessage.working()`) keep the job from being
 * delivered to another worker on the same SQLite file, so the provider is asked once.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { SqliteEventBus } from '../../src/adapters/sqlite/event-bus.js';
import { DATABASE_FILE } from '../../src/main.js';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram } from '../support/engram.js';

const ACK_WAIT_MS = 1_000;
/** How long the provider takes over the extraction call: several ack waits. */
const EXTRACTION_MS = 4_500;

/**
 * The provider, slow on extraction calls only: requests offering `record_reflections`
 * are held for `delayMs` before they reach the scripted upstream. `extracting` settles
 * when the first one arrives: Engram's worker holds the job from then on.
 */
async function slowExtractions(target: string, delayMs: number): Promise<{ url: string; server: Server; extracting: Promise<void> }> {
  let started!: () => void;
  const extracting = new Promise<void>((resolve) => (started = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const extraction = body.includes('record_reflections');
      if (extraction) started();
      const held = extraction ? delayMs : 0;
      setTimeout(() => {
        const forwarded = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        forwarded.on('error', () => res.destroy());
        forwarded.end(body);
      }, held);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, extracting };
}

test('an extraction longer than the ack wait is not redelivered to a second worker while it heartbeats', async () => {
  const upstream = await startScriptedUpstream();
  const provider = await slowExtractions(upstream.url, EXTRACTION_MS);
  const engram = await startEngram({ 'extraction-ack-wait-ms': String(ACK_WAIT_MS), 'settle-ms': '50' });
  // A second worker on the same file, as another process on the data dir would be. It
  // starts once Engram's worker is extracting: which of two idle workers takes a new job
  // first is a race; what must not happen is a job taken from a worker still working on it.
  const otherDb = openDatabase(path.join(engram.dataDir, DATABASE_FILE));
  const other = new SqliteEventBus(otherDb, { maxPollMs: 50 });
  const stolen: number[] = [];
  let subscription: { stop(): Promise<void> } | undefined;
  void provider.extracting.then(() => {
    subscription = other.consume(EXTRACTION_SUBJECT, async (message) => {
      stolen.push(message.attempt);
      await message.nak({ delayMs: 60_000 });
    }, { ackWaitMs: ACK_WAIT_MS });
  });
  try {
    const agent = await engram.createAgent(provider.url);
    const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'REMEMBER: The staging database is reset every Monday.' }] }),
    });
    assert.is(response.status, 200);
    await response.text();
    const started = Date.now();
    // Generous: a loaded machine may be slow to extract, and a job the second worker took
    // (a missed heartbeat) is held there 60 s, so the wait says which it was.
    const learnt = await eventually(async () => {
      const listed = await engram.reflections(agent);
      return listed.length > 0 ? listed : undefined;
    }, 30_000, `the reflection (the second worker took attempts ${JSON.stringify(stolen)})`);
    const took = Date.now() - started;
    assert.ok(learnt.some((reflection) => reflection.content.includes('every Monday')));
    // Idle now: the job is settled and nothing is queued.
    await eventually(async () => ((await other.pending(EXTRACTION_SUBJECT)) === 0 ? true : undefined), 5_000, 'an empty queue');
    assert.ok(took >= EXTRACTION_MS, `the extraction took ${took} ms, over ${Math.floor(took / ACK_WAIT_MS)} ack waits`);
    assert.is(upstream.extractionRequests().length, 1, 'the provider was asked once');
    assert.equal(stolen, [], 'the second worker got nothing');
  } finally {
    await subscription?.stop();
    await other.close();
    otherDb.close();
    await engram.close();
    provider.server.closeAllConnections();
    provider.server.close();
    await upstream.close();
  }
});

test.run();
