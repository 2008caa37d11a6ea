/**
 * Issue 31, the audit's load: ten answers without end at once (60 KB deltas, as fast as
 * the clients read) through `engram serve` as a process of its own. Before the fix its
 * resident set grew by some 90 MiB a second until the heap gave out; now it stays under
 * RSS_BOUND (measured: about 100 MiB over its idle size of some 250 MiB), each client's stream
 * ends at the time limit with the protocol's error event, and the process lives on.
 */
import fs from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { adminApi, serveProcess } from '../support/engram-process.js';

const STREAMS = 10;
const STREAM_MAX_MS = 4_000;
/** Peak resident set allowed (VmHWM): the idle process is ~250 MiB; before the fix it passed 1.8 GiB in 20 s. */
const RSS_BOUND = 600 * 1024 * 1024;

function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

test('ten endless streams at once: RSS stays bounded, each ends at the time limit with the error event, Engram lives on', async () => {
  const upstream = await startScriptedUpstream();
  upstream.setDefaultReply(() => ({ type: 'endless', deltaBytes: 60 * 1024 }));
  const dir = fs.mkdtempSync('/tmp/engram-endless-');
  const engram = await serveProcess({ ENGRAM_DATA_DIR: dir, ENGRAM_STREAM_MAX_MS: String(STREAM_MAX_MS) });
  try {
    const org = await adminApi(engram.url, 'POST', '/v0/orgs', { name: 'endless' });
    const agent = await adminApi(engram.url, 'POST', `/v0/orgs/${org.id}/agents`, { name: 'endless', type: 'api_provider', upstream: { base_url: upstream.url, api_key: 'sk-endless' } });
    const started = performance.now();
    const streams = Array.from({ length: STREAMS }, async (_, i) => {
      const messages = i % 2 === 1;
      const response = await fetch(`${engram.url}/v1/${messages ? 'messages' : 'chat/completions'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.token}`, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: `stream ${i}` }] }),
      });
      assert.is(response.status, 200);
      let bytes = 0;
      let tail = '';
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        tail = (tail + Buffer.from(chunk.subarray(Math.max(0, chunk.length - 600))).toString('latin1')).slice(-600);
      }
      return { messages, bytes, last: tail.trimEnd().split('\n\n').pop()! };
    });
    const results = await Promise.all(streams);
    const took = performance.now() - started;
    const peak = peakRss(engram.child.pid!);
    const total = results.reduce((sum, result) => sum + result.bytes, 0);
    console.log(`  ${STREAMS} endless streams: ${(total / 2 ** 20).toFixed(0)} MiB relayed in ${(took / 1000).toFixed(1)} s; Engram's peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`);
    assert.ok(peak < RSS_BOUND, `peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`);
    assert.ok(took < STREAM_MAX_MS + 5_000, `all ended after ${took.toFixed(0)} ms`);
    for (const { messages, bytes, last } of results) {
      assert.ok(bytes > 1024 * 1024, 'the stream flowed');
      if (messages) {
        assert.match(last, /^event: error\ndata: /);
        assert.is(JSON.parse(last.split('\ndata: ')[1]).error.type, 'timeout_error');
      } else {
        assert.is(JSON.parse(last.replace(/^data: /, '')).error.code, 'stream_time_limit');
      }
    }
    assert.is(engram.child.exitCode, null, 'Engram is still running');
    assert.is((await fetch(`${engram.url}/healthz`)).status, 200);
    const log = await adminApi(engram.url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/requests?limit=20`);
    assert.is(log.data.length, STREAMS);
    for (const entry of log.data) assert.is(entry.answer_limit, 'stream_max_ms');
  } finally {
    await engram.stop();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
