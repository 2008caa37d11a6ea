/**
 * What one input can cost Engram's two streaming parsers (issue 15). Starts `engram serve`
 * as a child process and measures, from the outside (admin latency is that of a
 * `GET /v0/orgs` every 50 ms from a process of its own; RSS is the child's, from /proc):
 *
 *   1. A transcript upload sent as one JSON document, an array of 16 million `{}` (64 MiB,
 *      the default upload limit), to `transcripts/copilot`: the time to its 4xx, the admin
 *      latency meanwhile, and Engram's RSS before, at its peak and 3 s after. Then three
 *      such uploads at once from three agents (so the per-agent upload cap does not hide
 *      the cost), and three at once from one agent (the statuses show the cap).
 *   2. A document the server must read whole: 1.5 million Copilot events it knows (64 MB,
 *      no turns), with the same measures.
 *   3. An upstream answering a streamed chat completion with one 40 MB SSE line that never
 *      ends: the time until the client has every byte, whether the bytes are the
 *      upstream's, and the admin latency meanwhile.
 *
 * Run: `node --import tsx bench/abuse/parsers.ts` (settings through the environment:
 * ABUSE_RECORDS, ABUSE_EVENTS, ABUSE_LINE_BYTES). Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN, mib, ms, rssOf, sleep, startEngram } from './child.js';

/** 16,777,215 records: `[\n` + `{},\n`... + `{}\n]` is then just under 64 MiB. */
const RECORDS = Number(process.env.ABUSE_RECORDS ?? 16 * 1024 * 1024 - 1);
const EVENTS = Number(process.env.ABUSE_EVENTS ?? 1_500_000);
const LINE_BYTES = Number(process.env.ABUSE_LINE_BYTES ?? 40_000_000);



async function admin(url: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

/**
 * Admin requests (`GET /v0/orgs`, every 50 ms) made from a process of their own, so that
 * what this one does (writing and hashing tens of megabytes) does not count as Engram's
 * latency. Resolves with their latencies once stopped.
 */
function probe(url: string): { stop(): Promise<number[]> } {
  const script = `
    const latencies = [];
    let running = true;
    process.stdin.on('data', () => { running = false; });
    (async () => {
      while (running) {
        const started = performance.now();
        try {
          const response = await fetch(${JSON.stringify(url)} + '/v0/orgs', { headers: { authorization: 'Bearer ${ADMIN}' } });
          await response.arrayBuffer();
          latencies.push(performance.now() - started);
        } catch {}
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      process.stdout.write(JSON.stringify(latencies));
      process.exit(0);
    })();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.stdin.write('stop\n');
      await exited;
      return JSON.parse(out || '[]') as number[];
    },
  };
}

/** Admin latency and the child's RSS, sampled while `run` goes on. */
async function watch<T>(url: string, pid: number, run: () => Promise<T>): Promise<{ result: T; admin: number[]; before: number; peak: number; after: number }> {
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 25);
  const probing = probe(url);
  await sleep(200);
  const result = await run();
  const latencies = await probing.stop();
  await sleep(3_000);
  clearInterval(sampler);
  return { result, admin: latencies, before, peak, after: rssOf(pid) };
}

interface Upload {
  status?: number;
  /** From the first byte sent to the status line. */
  answeredMs?: number;
  error?: string;
}

/** POSTs `body` as fast as the socket takes it; resolves once the answer (or a socket error) came. */
function post(url: string, token: string, body: Buffer): Promise<Upload> {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length } });
    request.on('response', (response) => {
      const outcome: Upload = { status: response.statusCode, answeredMs: performance.now() - started };
      response.resume();
      response.on('end', () => resolve(outcome));
      response.on('error', () => resolve(outcome));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, answeredMs: performance.now() - started }));
    request.end(body);
  });
}

function latencySummary(values: number[]): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  return `${values.length} requests, p50 ${ms(sorted[Math.floor(sorted.length / 2)])}, max ${ms(sorted[sorted.length - 1])}`;
}

function describe(uploads: Upload[]): string {
  return uploads.map((u) => (u.status ? `${u.status} after ${ms(u.answeredMs!)}` : `${u.error} after ${ms(u.answeredMs!)}`)).join('; ');
}

/** A misbehaving upstream: a streamed answer that is one line of `bytes` bytes, never ended by a newline. */
async function startLineUpstream(bytes: number): Promise<{ url: string; sha256: string; close(): Promise<void> }> {
  const piece = Buffer.alloc(64 * 1024, 'x');
  const hash = createHash('sha256').update('data: ');
  for (let sent = 0; sent < bytes; sent += piece.length) hash.update(piece.subarray(0, Math.min(piece.length, bytes - sent)));
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', async () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: ');
      for (let sent = 0; sent < bytes; sent += piece.length) {
        if (!response.write(piece.subarray(0, Math.min(piece.length, bytes - sent)))) await new Promise((drained) => response.once('drain', drained));
      }
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sha256: hash.digest('base64url'),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const document = Buffer.allocUnsafe(2 + 4 * RECORDS);
document.write('[\n', 0);
for (let i = 0; i < RECORDS; i++) document.write(i === RECORDS - 1 ? '{}\n]' : '{},\n', 2 + 4 * i, 'latin1');

const line = await startLineUpstream(LINE_BYTES);
const engram = await startEngram();
try {
  const org = await admin(engram.url, 'POST', '/v0/orgs', { name: 'abuse' });
  const agents: Array<{ token: string; base: string }> = [];
  for (let i = 0; i < 4; i++) {
    const created = await admin(engram.url, 'POST', `/v0/orgs/${org.json.id}/agents`, {
      name: `target-${i}`,
      type: 'api_provider',
      upstream: { base_url: line.url, api_key: 'sk-unused' },
    });
    agents.push({ token: created.json.token as string, base: `${engram.url}/v0/orgs/${org.json.id}/agents/${created.json.id}` });
  }
  await sleep(1_000);

  console.log(`Case 1: a ${mib(document.length)} JSON document of ${RECORDS} {} uploaded to transcripts/copilot`);
  const one = await watch(engram.url, engram.pid, () => post(`${agents[0].base}/transcripts/copilot`, agents[0].token, document));
  console.log(`  answer: ${describe([one.result])}`);
  console.log(`  admin GET /v0/orgs meanwhile: ${latencySummary(one.admin)}`);
  console.log(`  Engram RSS: before ${mib(one.before)}, peak ${mib(one.peak)}, 3 s after ${mib(one.after)}`);

  const three = await watch(engram.url, engram.pid, () => Promise.all(agents.slice(1, 4).map((agent) => post(`${agent.base}/transcripts/copilot`, agent.token, document))));
  console.log('  three at once, from three agents:');
  console.log(`    answers: ${describe(three.result)}`);
  console.log(`    admin GET /v0/orgs meanwhile: ${latencySummary(three.admin)}`);
  console.log(`    Engram RSS: before ${mib(three.before)}, peak ${mib(three.peak)}, 3 s after ${mib(three.after)}`);

  const same = await Promise.all([0, 1, 2].map(() => post(`${agents[0].base}/transcripts/copilot`, agents[0].token, document)));
  console.log(`  three at once, from one agent: ${describe(same)}`);

  const start = JSON.stringify({ type: 'session.start', data: { sessionId: 'bench-whole', selectedModel: 'gpt-5' }, id: '0', timestamp: 't', parentId: null });
  const event = '{"type":"session.usage_record","data":{}}';
  const known = Buffer.from(`[\n${start},\n${`${event},\n`.repeat(EVENTS - 1)}${event}\n]\n`);
  console.log(`Case 2: a ${mib(known.length)} JSON document of ${EVENTS} Copilot events, read whole`);
  const whole = await watch(engram.url, engram.pid, () => post(`${agents[1].base}/transcripts/copilot`, agents[1].token, known));
  console.log(`  answer: ${describe([whole.result])}`);
  console.log(`  admin GET /v0/orgs meanwhile: ${latencySummary(whole.admin)}`);
  console.log(`  Engram RSS: before ${mib(whole.before)}, peak ${mib(whole.peak)}, 3 s after ${mib(whole.after)}`);

  console.log(`Case 3: an upstream streaming one ${mib(LINE_BYTES)} SSE line without a newline`);
  const streamed = await watch(engram.url, engram.pid, async () => {
    const started = performance.now();
    const response = await fetch(`${agents[0].base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agents[0].token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of response.body!) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    return { status: response.status, bytes, sha256: hash.digest('base64url'), ms: performance.now() - started };
  });
  const { result } = streamed;
  console.log(`  ${result.status}, ${result.bytes} bytes in ${ms(result.ms)}; byte-identical to the upstream's: ${result.sha256 === line.sha256}`);
  console.log(`  admin GET /v0/orgs meanwhile: ${latencySummary(streamed.admin)}`);
  console.log(`  Engram RSS: before ${mib(streamed.before)}, peak ${mib(streamed.peak)}, 3 s after ${mib(streamed.after)}`);
} finally {
  await engram.stop();
  await line.close();
}
