/**
 * Graceful stop: once `close()` is called or `engram serve` gets SIGTERM, Engram takes no
 * new work (a new connection is refused; a request arriving on an open connection gets a
 * 503 in its protocol's envelope), lets the streams in flight finish, up to
 * `ENGRAM_SHUTDOWN_GRACE_MS`, then cuts what remains and exits.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import WebSocket from 'ws';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent } from '../support/engram.js';
import { adminApi, serveProcess } from '../support/engram-process.js';

const ANSWER = 'The deploy runs in three steps: build the image, push it to the registry, then roll the service.';

/** A streamed chat completion, read as it arrives; `firstBytes` resolves with the first chunk. */
function streamChat(agent: { baseUrl: string; token: string }) {
  let firstBytes!: () => void;
  const started = new Promise<void>((resolve) => (firstBytes = resolve));
  const whole = (async () => {
    const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'How does the deploy work?' }] }),
    });
    assert.is(response.status, 200);
    const decoder = new TextDecoder();
    let text = '';
    let error: unknown;
    try {
      for await (const chunk of response.body!) {
        text += decoder.decode(chunk, { stream: true });
        firstBytes();
      }
    } catch (caught) {
      error = caught;
    }
    return { text, error, endedAt: Date.now() };
  })();
  return { started, whole };
}

/** The text of the streamed answer, from its chunks. */
function contentOf(sse: string): string {
  return sse
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');
}

/** Resolves with the error code of a request on a new connection, or its status if one was answered. */
function onNewConnection(url: string): Promise<string | number> {
  return new Promise((resolve) => {
    const request = http.get(`${url}/healthz`, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/**
 * A request whose first lines are sent now and the rest later (`socket.write`): under way
 * when the stop begins. Its answer is read as it comes; a reset (the old behaviour: every
 * connection cut at once) fails the test's assertions, not the run.
 */
async function beginRequest(url: string, requestLine: string, token: string) {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`${requestLine} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\n`);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise((resolve) => socket.once('close', resolve));
  return { socket, closed, answer: () => answer };
}

async function apiAgent(url: string, upstream: ScriptedUpstream): Promise<TestAgent> {
  const org = await adminApi(url, 'POST', '/v0/orgs', { name: 'stopping' });
  const agent = await adminApi(url, 'POST', `/v0/orgs/${org.id}/agents`, {
    name: 'bot',
    type: 'api_provider',
    upstream: { base_url: upstream.url, api_key: 'sk-upstream-stop-000000000000000' },
  });
  return { orgId: org.id, agentId: agent.id, token: agent.token, baseUrl: agent.base_url };
}

test('close() mid-stream: the stream finishes with [DONE], new connections are refused, a request arriving on an open one gets a 503 in its envelope', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '60000' });
  try {
    const agent = await engram.createAgent(upstream.url);
    // About seven events 300 ms apart: two seconds of streaming.
    upstream.enqueue([{ type: 'text', text: ANSWER }, { chunkDelayMs: 300 }]);
    const stream = streamChat(agent);
    await stream.started;
    // A request whose headers are on their way when the stop begins (its connection is not idle).
    const late = await beginRequest(engram.url, `POST ${new URL(`${agent.baseUrl}/v1/messages`).pathname}`, agent.token);
    // Time for the server to read those lines: a connection with a request begun is not idle.
    await new Promise((resolve) => setTimeout(resolve, 100));

    const closing = engram.running.close();
    let closed = false;
    void closing.then(() => (closed = true));
    assert.is(await onNewConnection(engram.url), 'ECONNREFUSED', 'a new connection is refused');
    late.socket.write('content-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    await late.closed;
    assert.match(late.answer(), /^HTTP\/1\.1 503 /);
    assert.match(late.answer(), /connection: close/i);
    assert.match(late.answer(), /x-engram-injected: 0\r\n/i, 'the headers every answer of the proxy carries');
    assert.match(late.answer(), /x-engram-request-id: req_/i);
    const body = JSON.parse(late.answer().slice(late.answer().indexOf('\r\n\r\n') + 4));
    assert.equal(body.type, 'error', 'the Messages envelope');
    assert.is(body.error.type, 'overloaded_error');
    assert.not.ok(closed, 'still draining while the stream runs');

    const { text, error } = await stream.whole;
    assert.is(error, undefined);
    assert.ok(text.trimEnd().endsWith('data: [DONE]'), 'the stream ends with [DONE]');
    assert.is(contentOf(text), ANSWER);
    await closing;
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('close() with a Responses WebSocket answering: the answer finishes on it, a new upgrade gets a 503, then the socket goes away (1001)', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '60000' });
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.enqueue([{ type: 'text', text: ANSWER }, { chunkDelayMs: 200 }]);
    const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const frames: any[] = [];
    let firstFrame!: () => void;
    const started = new Promise<void>((resolve) => (firstFrame = resolve));
    const completed = new Promise<void>((resolve) =>
      socket.on('message', (data: Buffer) => {
        const frame = JSON.parse(data.toString('utf8'));
        frames.push(frame);
        firstFrame();
        if (frame.type === 'response.completed') resolve();
      }),
    );
    const socketClosed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
    socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'How does the deploy work?' }));
    await started;
    // An upgrade whose request is under way when the stop begins.
    const late = await beginRequest(engram.url, `GET ${new URL(agent.baseUrl).pathname}/v1/responses`, agent.token);
    await new Promise((resolve) => setTimeout(resolve, 100));

    const closing = engram.running.close();
    let closed = false;
    void closing.then(() => (closed = true));
    late.socket.write('connection: upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    await late.closed;
    assert.match(late.answer(), /^HTTP\/1\.1 503 /);
    assert.is(JSON.parse(late.answer().slice(late.answer().indexOf('\r\n\r\n') + 4)).error.code, 'unavailable');

    await completed;
    const text = frames.filter((frame) => frame.type === 'response.output_text.delta').map((frame) => frame.delta).join('');
    assert.is(text, ANSWER);
    // Its answer complete, the socket is closed by Engram: the stop need not wait for the client.
    assert.is(await socketClosed, 1001);
    await closing;
    assert.ok(closed);
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('close() with an idle Responses WebSocket open: it goes away at once (1001) and the stop does not wait out the grace', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '60000', 'shutdown-grace-ms': '600000' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const socketClosed = new Promise<[number, string]>((resolve) => socket.once('close', (code: number, reason: Buffer) => resolve([code, reason.toString()])));
    await engram.running.close();
    assert.equal(await socketClosed, [1001, 'Engram is shutting down']);
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('many open WebSockets: each waits on the stop signal without a listener-leak warning, and all go away at the stop', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '60000' });
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on('warning', onWarning);
  try {
    const agent = await engram.createAgent(upstream.url);
    const sockets = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
        return { closed: new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code))) };
      }),
    );
    await engram.running.close();
    assert.equal(await Promise.all(sockets.map((socket) => socket.closed)), Array(20).fill(1001));
    // Warnings are emitted on the next tick: by now any would have been.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings.filter((name) => name === 'MaxListenersExceededWarning'), []);
  } finally {
    process.off('warning', onWarning);
    await engram.close();
    await upstream.close();
  }
});

test('SIGTERM mid-stream: the stream finishes, then the process exits 0', async () => {
  const upstream = await startScriptedUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-sigterm-'));
  const engram = await serveProcess({ ENGRAM_DATA_DIR: dataDir });
  try {
    const agent = await apiAgent(engram.url, upstream);
    upstream.enqueue([{ type: 'text', text: ANSWER }, { chunkDelayMs: 400 }]);
    const stream = streamChat(agent);
    await stream.started;
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      engram.child.once('exit', (code) => resolve({ code, at: Date.now() })),
    );
    engram.child.kill('SIGTERM');
    // Refused once the signal is handled, while the stream still runs.
    await eventually(async () => ((await onNewConnection(engram.url)) === 'ECONNREFUSED' ? true : undefined), 5000, 'new connections refused');
    const { text, error, endedAt } = await stream.whole;
    assert.is(error, undefined);
    assert.ok(text.trimEnd().endsWith('data: [DONE]'), 'the stream ends with [DONE]');
    assert.is(contentOf(text), ANSWER);
    const exit = await exited;
    assert.is(exit.code, 0);
    assert.ok(exit.at >= endedAt - 50, 'the process outlived the stream');
    assert.match(engram.stderr(), /SIGTERM: shutting down/);
  } finally {
    await engram.crash();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a stream longer than ENGRAM_SHUTDOWN_GRACE_MS is cut at the deadline and the process exits', async () => {
  const upstream = await startScriptedUpstream();
  const graceMs = 1000;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-grace-'));
  const engram = await serveProcess({
    ENGRAM_DATA_DIR: dataDir,
    ENGRAM_SHUTDOWN_GRACE_MS: String(graceMs),
  });
  try {
    const agent = await apiAgent(engram.url, upstream);
    // Seven events three seconds apart: twenty seconds of streaming.
    upstream.enqueue([{ type: 'text', text: ANSWER }, { chunkDelayMs: 3000 }]);
    const stream = streamChat(agent);
    await stream.started;
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      engram.child.once('exit', (code) => resolve({ code, at: Date.now() })),
    );
    const signalled = Date.now();
    engram.child.kill('SIGTERM');
    const { text, endedAt } = await stream.whole;
    assert.not.ok(text.includes('[DONE]'), 'cut before its end');
    const exit = await exited;
    const cutAfter = endedAt - signalled;
    const exitAfter = exit.at - signalled;
    console.log(`  SIGTERM with a ${graceMs} ms grace: stream cut after ${cutAfter} ms, process exited after ${exitAfter} ms (code ${exit.code})`);
    assert.ok(cutAfter >= graceMs - 100, `cut after ${cutAfter} ms, not before the grace`);
    assert.ok(exitAfter < graceMs + 5000, `exited after ${exitAfter} ms`);
    assert.is(exit.code, 0);
  } finally {
    await engram.crash();
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
