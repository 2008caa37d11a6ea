/**
 * What answers without end cost Engram (issue 31). Starts `engram serve` as a child process
 * and a scripted upstream that streams one text delta of `ABUSE_DELTA` bytes (60 KB) after
 * another without pause and never ends; `ABUSE_STREAMS` clients (10) stream a chat
 * completion through Engram at once, reading as fast as they can, for `ABUSE_SECONDS` (12)
 * or until Engram ends their streams. Prints Engram's resident set every second and at its
 * peak (VmHWM), whether it survived, and how each client's stream ended.
 *
 * Run: `node --import tsx bench/abuse/endless-answers.ts`. `ABUSE_SOURCE=<dir>`: run the
 * Engram checked out there instead (to compare with a version before the fix);
 * `ABUSE_FLAGS="--stream-max-ms 5000"`: more `serve` flags. Linux only (/proc).
 */
import fs from 'node:fs';
import { startScriptedUpstream } from '../../test/support/scripted-upstream/index.js';
import { ADMIN, mib, sleep, startEngram } from './child.js';

const STREAMS = Number(process.env.ABUSE_STREAMS ?? 10);
const DELTA = Number(process.env.ABUSE_DELTA ?? 60 * 1024);
const SECONDS = Number(process.env.ABUSE_SECONDS ?? 12);
const FLAGS = (process.env.ABUSE_FLAGS ?? '').split(/\s+/).filter(Boolean);

function memory(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

async function admin(url: string, pathname: string, body: unknown): Promise<any> {
  const response = await fetch(url + pathname, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.json();
}

/** Streams one chat completion to its end (or the deadline): bytes read and how it ended. */
async function stream(baseUrl: string, token: string, deadline: AbortSignal): Promise<{ bytes: number; ended: string }> {
  let bytes = 0;
  let tail = '';
  try {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'go on' }] }),
      signal: deadline,
    });
    if (response.status !== 200) return { bytes, ended: `status ${response.status}: ${await response.text()}` };
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      tail = (tail + Buffer.from(chunk).toString('utf8')).slice(-400);
    }
    const last = tail.trim().split('\n\n').pop() ?? '';
    return { bytes, ended: `ended by Engram: ${last.slice(0, 200)}` };
  } catch (error) {
    return { bytes, ended: deadline.aborted ? 'still streaming at the deadline' : `failed: ${(error as Error).message}` };
  }
}

const upstream = await startScriptedUpstream();
upstream.setDefaultReply(() => ({ type: 'endless', deltaBytes: DELTA }));
const engram = await startEngram({ flags: FLAGS, source: process.env.ABUSE_SOURCE });
try {
  const org = await admin(engram.url, '/v0/orgs', { name: 'endless' });
  const agent = await admin(engram.url, `/v0/orgs/${org.id}/agents`, { name: 'endless', type: 'api_provider', upstream: { base_url: upstream.url, api_key: 'sk-endless' } });
  const before = memory(engram.pid);
  console.log(`${STREAMS} endless streams of ${DELTA}-byte deltas for up to ${SECONDS} s; flags: ${FLAGS.join(' ') || '(none)'}; source: ${process.env.ABUSE_SOURCE ?? 'this checkout'}`);
  console.log(`before: RSS ${mib(before.rss)}`);
  const deadline = AbortSignal.timeout(SECONDS * 1000);
  const started = performance.now();
  const runs = Array.from({ length: STREAMS }, () => stream(engram.url, agent.token, deadline));
  const all = Promise.all(runs);
  let done = false;
  void all.finally(() => (done = true));
  while (!done && engram.alive()) {
    await sleep(1000);
    if (!engram.alive()) break;
    const now = memory(engram.pid);
    console.log(`  t=${((performance.now() - started) / 1000).toFixed(0)} s  RSS ${mib(now.rss)}  peak ${mib(now.peak)}`);
  }
  const results = await all;
  const alive = engram.alive();
  const after = alive ? memory(engram.pid) : undefined;
  console.log(`Engram ${alive ? 'survived' : 'DIED'}; peak RSS ${after ? mib(after.peak) : 'unknown (process gone)'}`);
  const total = results.reduce((sum, result) => sum + result.bytes, 0);
  console.log(`clients read ${mib(total)} in all`);
  const endings = new Map<string, number>();
  for (const { ended } of results) endings.set(ended, (endings.get(ended) ?? 0) + 1);
  for (const [ended, count] of endings) console.log(`  ${count} × ${ended}`);
} finally {
  if (engram.alive()) await engram.stop();
  await upstream.close();
}
