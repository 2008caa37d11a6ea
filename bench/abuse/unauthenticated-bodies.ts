/**
 * What a caller without a token can cost Engram (issue 15). Starts `engram serve` as a
 * child process and measures, from the outside:
 *
 *   1. `ABUSE_SOCKETS` raw sockets (default 20) POST a chat completion without a token,
 *      each declaring `ABUSE_DECLARED` bytes (33 MB) and writing `ABUSE_SENT` of them
 *      (25 MB) as fast as the socket takes them, then holding the socket open: Engram's
 *      RSS before, at its peak and 3 s after; when each socket got its answer or was
 *      closed by Engram; the latency of an admin request made every 100 ms meanwhile.
 *   2. A whole 30 MB body without a token, sent by real clients: the time to the 401 and
 *      how much of the body was uploaded by then. curl (which asks `Expect: 100-continue`
 *      before a large body), curl told not to ask, and Node's fetch (undici).
 *
 * Run: `node --import tsx bench/abuse/unauthenticated-bodies.ts`. Settings through the
 * environment: ABUSE_SOCKETS, ABUSE_DECLARED, ABUSE_SENT, ABUSE_WHOLE, ABUSE_WAIT_MS.
 * Needs Linux (the RSS is read from /proc) and curl.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ADMIN, mib, ms, rssOf, sleep, startEngram } from './child.js';

const SOCKETS = Number(process.env.ABUSE_SOCKETS ?? 20);
const DECLARED = Number(process.env.ABUSE_DECLARED ?? 33_000_000);
const SENT = Number(process.env.ABUSE_SENT ?? 25_000_000);
const WHOLE = Number(process.env.ABUSE_WHOLE ?? 30_000_000);
/** How long the first case waits on the sockets Engram neither answered nor closed. */
const WAIT_MS = Number(process.env.ABUSE_WAIT_MS ?? 15_000);
const CHUNK = Buffer.alloc(64 * 1024, 'a');

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;


async function admin(url: string, method: string, pathname: string, body?: unknown): Promise<any> {
  const response = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

interface Attempt {
  /** The status of the answer, when one was read. */
  status?: number;
  /** From the first byte sent to the server answering or ending the connection. */
  refusedMs?: number;
  /** How it ended: answered, closed by the server, reset, or given up by the client. */
  ended?: string;
  bodyBytesWritten: number;
}

/**
 * The attacker of case 1: headers declaring `declared` bytes, then `send` of them as fast
 * as the socket takes them, then the socket held open until `holdUntil`.
 */
function flood(url: string, pathname: string, declared: number, send: number, holdUntil: Promise<void>): Promise<Attempt> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const attempt: Attempt = { bodyBytesWritten: 0 };
    const socket = net.connect(Number(port), hostname);
    let started = 0;
    let text = '';
    const end = (how: string) => {
      if (attempt.ended) return;
      attempt.ended = how;
      if (how !== 'given up') attempt.refusedMs ??= performance.now() - started;
      socket.destroy();
      resolve(attempt);
    };
    socket.on('data', (chunk: Buffer) => {
      attempt.refusedMs ??= performance.now() - started;
      text += chunk.toString('latin1');
      attempt.status ??= Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]) || undefined;
    });
    socket.on('end', () => end('closed by Engram'));
    socket.on('error', (error: NodeJS.ErrnoException) => end(`${error.code ?? error.message} (Engram closed it)`));
    socket.on('close', () => end('closed by Engram'));
    void holdUntil.then(() => end(attempt.status === undefined ? 'given up' : 'answered, left open'));
    socket.once('connect', async () => {
      started = performance.now();
      socket.write(`POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`);
      while (attempt.bodyBytesWritten < send && !attempt.ended) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, send - attempt.bodyBytesWritten));
        attempt.bodyBytesWritten += piece.length;
        if (!socket.write(piece)) {
          await new Promise<void>((drained) => {
            const done = () => (socket.off('drain', done), socket.off('close', done), drained());
            socket.once('drain', done);
            socket.once('close', done);
          });
        }
      }
    });
  });
}

/** curl posting `file`: the status, the time the request took, the bytes it uploaded. */
async function curl(url: string, file: string, askFirst: boolean): Promise<string> {
  const args = ['-s', '-o', '/dev/null', '-w', '%{http_code} %{time_total} %{size_upload}', '-H', 'content-type: application/json'];
  if (!askFirst) args.push('-H', 'expect:');
  const child = spawn('curl', [...args, '--data-binary', `@${file}`, url], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const [status, seconds, uploaded] = out.trim().split(' ');
  return `${status} after ${ms(Number(seconds) * 1000)}, ${mb(Number(uploaded))} uploaded by then (curl exit ${code})`;
}

async function undiciFetch(url: string, body: Uint8Array<ArrayBuffer>): Promise<string> {
  const started = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return `${response.status} after ${ms(performance.now() - started)}`;
  } catch (error) {
    return `failed after ${ms(performance.now() - started)}: ${String((error as Error).cause ?? error)}`;
  }
}

function summary(values: number[], unit = 'ms'): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const show = unit === 'ms' ? ms : mb;
  return `min ${show(sorted[0])}, p50 ${show(at(0.5))}, max ${show(sorted[sorted.length - 1])}`;
}

const engram = await startEngram();
try {
  const org = await admin(engram.url, 'POST', '/v0/orgs', { name: 'abuse' });
  const agent = await admin(engram.url, 'POST', `/v0/orgs/${org.id}/agents`, {
    name: 'target',
    type: 'api_provider',
    upstream: { base_url: 'http://127.0.0.1:9', api_key: 'sk-unused' },
  });
  const pathname = `/v0/orgs/${org.id}/agents/${agent.id}/v1/chat/completions`;
  await sleep(1_000);

  // Case 1: many sockets, large declared bodies, never finished.
  const before = rssOf(engram.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(engram.pid))), 25);
  const adminLatencies: number[] = [];
  let attacking = true;
  const probing = (async () => {
    while (attacking) {
      const started = performance.now();
      await admin(engram.url, 'GET', '/v0/orgs').catch(() => undefined);
      adminLatencies.push(performance.now() - started);
      await sleep(100);
    }
  })();
  let giveUp!: () => void;
  const givenUp = new Promise<void>((resolve) => (giveUp = resolve));
  const timer = setTimeout(giveUp, WAIT_MS);
  const started = performance.now();
  const attempts = await Promise.all(Array.from({ length: SOCKETS }, () => flood(engram.url, pathname, DECLARED, SENT, givenUp)));
  const settledMs = performance.now() - started;
  clearTimeout(timer);
  // At least a second of admin probes, under attack or just after it.
  await sleep(Math.max(0, 1_000 - settledMs));
  attacking = false;
  await probing;
  await sleep(3_000);
  clearInterval(sampler);
  const after = rssOf(engram.pid);

  const refused = attempts.filter((a) => a.refusedMs !== undefined);
  const endings = new Map<string, number>();
  for (const a of attempts) endings.set(`${a.ended}${a.status ? ` (read ${a.status})` : ''}`, (endings.get(`${a.ended}${a.status ? ` (read ${a.status})` : ''}`) ?? 0) + 1);
  console.log(`Case 1: ${SOCKETS} sockets without a token, each declaring ${mb(DECLARED)} and writing up to ${mb(SENT)}`);
  console.log(`  Engram RSS: before ${mib(before)}, peak ${mib(peak)}, 3 s after ${mib(after)}`);
  console.log(`  answered or closed by Engram: ${refused.length}/${SOCKETS}, after ${summary(refused.map((a) => a.refusedMs!))}`);
  console.log(`  how they ended: ${[...endings].map(([how, n]) => `${n} ${how}`).join('; ')}; all within ${ms(settledMs)}`);
  console.log(`  body bytes the client got to write: ${summary(attempts.map((a) => a.bodyBytesWritten), 'bytes')}`);
  console.log(`  admin GET /v0/orgs meanwhile (${adminLatencies.length} requests): ${summary(adminLatencies)}`);

  // Case 2: one whole body, by real clients.
  const file = path.join(os.tmpdir(), `engram-abuse-${process.pid}.json`);
  const body = new Uint8Array(WHOLE).fill(0x61);
  fs.writeFileSync(file, body);
  try {
    console.log(`Case 2: one ${mb(WHOLE)} body without a token`);
    console.log(`  curl (asks Expect: 100-continue): ${await curl(engram.url + pathname, file, true)}`);
    console.log(`  curl (sends at once):             ${await curl(engram.url + pathname, file, false)}`);
    console.log(`  fetch (undici):                   ${await undiciFetch(engram.url + pathname, body)}`);
  } finally {
    fs.rmSync(file, { force: true });
  }
} finally {
  await engram.stop();
}
