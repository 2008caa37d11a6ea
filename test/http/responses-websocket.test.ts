/**
 * The Responses API in WebSocket mode, over real sockets and real TCP: warm-up and
 * chains on one connection (against a stateless upstream), one response at a time,
 * the memory loop, bad input, upstream errors, and the connection time limit.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket, { type RawData } from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  /** Started by the tests that need small limits, closed in `after`. */
  small?: TestEngram;
  brief?: TestEngram;
  late?: http.Server;
}
const test = suite<Context>('responses over websocket');

/** Every socket a test opened: whatever a failing test left open is closed in `after`. */
const sockets = new Set<WebSocket>();

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
});
// A test that fails midway leaves no scripted reply behind for the next one.
test.before.each(({ upstream }) => upstream.reset());
test.after(async ({ upstream, engram, small, brief, late }) => {
  for (const socket of sockets) socket.terminate();
  if (late) {
    late.closeAllConnections();
    await new Promise((resolve) => late.close(resolve));
  }
  await small?.close();
  await brief?.close();
  await engram.close();
  await upstream.close();
});

// ---------------------------------------------------------------- client helpers

/** No correctness depends on it: it only turns a hang into a failure with a message. */
const WAIT_MS = 10_000;

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error']);

function wsUrl(agent: TestAgent): string {
  return `${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`;
}

function authHeaders(agent: TestAgent): Record<string, string> {
  return { authorization: `Bearer ${agent.token}` };
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One open WebSocket, with its incoming frames queued in arrival order. */
class Client {
  readonly #frames: unknown[] = [];
  readonly #waiting: Array<(frame: unknown) => void> = [];
  /** Resolves with the close code and reason, whoever closed. */
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: RawData, isBinary: boolean) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8');
      const frame = isBinary ? { binary: text } : JSON.parse(text);
      const waiter = this.#waiting.shift();
      if (waiter) waiter(frame);
      else this.#frames.push(frame);
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static async open(agent: TestAgent, headers = authHeaders(agent)): Promise<Client> {
    const socket = new WebSocket(wsUrl(agent), { headers });
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      }),
      'the socket to open',
    );
    return new Client(socket);
  }

  /** The next frame from the server, parsed. */
  next(): Promise<any> {
    const queued = this.#frames.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return withTimeout(new Promise((resolve) => this.#waiting.push(resolve)), 'the next frame');
  }

  /** Sends an object as a JSON text frame; a string or buffer as it is. */
  send(frame: unknown, options: { binary?: boolean } = {}): void {
    const data = typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame);
    this.socket.send(data, { binary: options.binary ?? false });
  }

  /** Frames up to and including the next terminal one (`response.completed`, an error, ...). */
  async collect(): Promise<any[]> {
    const frames: any[] = [];
    for (;;) {
      const frame = await this.next();
      frames.push(frame);
      if (TERMINAL.has(frame.type)) return frames;
    }
  }

  /** One `response.create` and every frame of its answer. */
  create(body: Record<string, unknown>): Promise<any[]> {
    this.send({ type: 'response.create', ...body });
    return this.collect();
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close(1000);
    await withTimeout(this.closed, 'the socket to close');
  }
}

/** An upgrade Engram refuses: the HTTP status and JSON body it answered instead. */
function refusedUpgrade(agent: TestAgent, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const socket = new WebSocket(wsUrl(agent), { headers });
  sockets.add(socket);
  return withTimeout(
    new Promise((resolve, reject) => {
      socket.once('open', () => reject(new Error('the upgrade was accepted')));
      socket.once('unexpected-response', (request, response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          request.destroy();
          sockets.delete(socket);
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      });
      // Emitted after the aborted handshake; the result is already known by then.
      socket.on('error', () => undefined);
    }),
    'the refused upgrade',
  );
}

/** Frames in order with strictly increasing `sequence_number`, ending in `response.completed`. */
function assertCompleted(frames: any[], what: string): any {
  assert.ok(frames.length >= 2, `${what}: a whole response, got ${JSON.stringify(frames)}`);
  assert.is(frames[0].type, 'response.created', `${what}: starts with response.created`);
  assert.is(frames.at(-1).type, 'response.completed', `${what}: ends with response.completed (got ${JSON.stringify(frames.at(-1))})`);
  for (let index = 0; index < frames.length; index++) {
    assert.type(frames[index].sequence_number, 'number', `${what}: frame ${index} has a sequence_number`);
    if (index > 0) {
      assert.ok(frames[index].sequence_number > frames[index - 1].sequence_number, `${what}: sequence_number increases at frame ${index}`);
    }
  }
  assert.is(frames.filter((frame) => frame.type === 'response.completed').length, 1, `${what}: one response.completed`);
  return frames.at(-1).response;
}

function assertErrorFrame(frames: any[], status: number, code: string, param?: string): any {
  assert.is(frames.length, 1, `one error frame, got ${JSON.stringify(frames)}`);
  const [frame] = frames;
  assert.is(frame.type, 'error');
  assert.is(frame.status, status);
  assert.is(frame.error.code, code);
  assert.type(frame.error.message, 'string');
  if (param !== undefined) assert.is(frame.error.param, param);
  return frame;
}

function outputText(response: any): string {
  return response.output
    .filter((item: any) => item.type === 'message')
    .flatMap((item: any) => item.content.map((part: any) => part.text))
    .join('');
}

const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const tools = [
  { type: 'function', name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
];
const instructions = 'You are a careful coding agent.';

/** A small turn that must succeed: proves a connection (still) works. */
async function assertWorks(client: Client, upstream: ScriptedUpstream, what: string): Promise<void> {
  upstream.enqueue({ type: 'text', text: `Still here (${what}).` });
  const response = assertCompleted(await client.create({ model: 'gpt-test', input: [user('Are you there?')], store: false }), what);
  assert.is(outputText(response), `Still here (${what}).`);
}

/**
 * An upstream whose body ends `lateMs` after its last byte (as over a slow link): it
 * forwards each request to the scripted upstream (which records and answers it) and
 * relays the answer, holding back only the end of the body.
 */
async function startLateEndingUpstream(target: string, lateMs: number): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(target + req.url, {
      method: req.method,
      headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization ?? '') },
      body: Buffer.concat(chunks),
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    for await (const chunk of answer.body ?? []) res.write(chunk);
    setTimeout(() => res.end(), lateMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

// ---------------------------------------------------------------- tests

test('warm-up and a three-turn chain with a tool call on one connection, store: false, stateless upstream', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  // As Codex opens it: the beta header asks for WebSocket mode, which the upstream never sees.
  const client = await Client.open(agent, { ...authHeaders(agent), 'openai-beta': 'responses_websockets=2026-02-06', 'session-id': 'ws-session-1' });
  const developer = { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Work in the repository at /srv/app.' }] };
  const common = { model: 'gpt-test', instructions, tools, store: false };
  const requestsBefore = upstream.conversationRequests().length;

  const warm = await client.create({ ...common, input: [developer], generate: false });
  const warmResponse = assertCompleted(warm, 'warm-up');
  assert.is(warm.length, 2, 'warm-up: response.created and response.completed only');
  assert.match(warmResponse.id, /^resp_/);
  assert.is(warm[0].response.id, warmResponse.id);
  assert.equal(warmResponse.output, []);
  assert.is(upstream.conversationRequests().length, requestsBefore, 'a warm-up does not call the upstream');

  // Turn 1: the model calls a tool.
  upstream.enqueue({ type: 'tool_call', name: 'read_file', arguments: { path: 'README.md' } });
  const turn1Input = user('What does the README say?');
  const first = await client.create({ ...common, previous_response_id: warmResponse.id, input: [turn1Input] });
  const firstResponse = assertCompleted(first, 'turn 1');
  assert.ok(first.some((frame) => frame.type === 'response.function_call_arguments.delta'), 'turn 1 streams the call arguments');
  const call = firstResponse.output.find((item: any) => item.type === 'function_call');
  assert.ok(call, 'turn 1 answers a function call');
  assert.is(call.name, 'read_file');
  assert.equal(JSON.parse(call.arguments), { path: 'README.md' });

  // Turn 2: the tool's result; the model answers text.
  upstream.enqueue({ type: 'text', text: 'The README describes the deploy process.' });
  const output = { type: 'function_call_output', call_id: call.call_id, output: '# App\nDeploy with make deploy.' };
  const second = await client.create({ ...common, previous_response_id: firstResponse.id, input: [output] });
  const secondResponse = assertCompleted(second, 'turn 2');
  assert.ok(second.some((frame) => frame.type === 'response.output_text.delta'), 'turn 2 streams text deltas');
  assert.is(outputText(secondResponse), 'The README describes the deploy process.');
  const assistant = secondResponse.output.find((item: any) => item.type === 'message');

  // Turn 3: a new user message.
  upstream.enqueue({ type: 'text', text: 'Run make deploy.' });
  const turn3Input = user('So how do I deploy?');
  const third = await client.create({ ...common, previous_response_id: secondResponse.id, input: [turn3Input] });
  assert.is(outputText(assertCompleted(third, 'turn 3')), 'Run make deploy.');

  const sent = upstream.conversationRequests().slice(requestsBefore).map((request) => request.json);
  assert.is(sent.length, 3, 'one upstream request per generated turn');
  for (const [index, body] of sent.entries()) {
    assert.is(body.stream, true, `turn ${index + 1} streams from the upstream`);
    assert.is(body.store, false, `turn ${index + 1} keeps store: false`);
    assert.is(body.previous_response_id, undefined, `turn ${index + 1} reaches the stateless upstream unchained`);
    assert.is(body.instructions, instructions);
    assert.equal(body.tools, tools);
  }
  assert.equal(sent[0].input, [developer, turn1Input], 'turn 1: the warm-up input, then the new message');
  assert.equal(sent[1].input, [developer, turn1Input, call, output], 'turn 2: history, the call, its output');
  assert.equal(sent[2].input, [developer, turn1Input, call, output, assistant, turn3Input], 'turn 3: the whole history');
  for (const request of upstream.conversationRequests().slice(requestsBefore)) {
    assert.is(request.headers['openai-beta'], undefined, 'the websocket beta token is not sent upstream');
    assert.is(request.headers['sec-websocket-key'], undefined, 'nor the handshake headers');
    assert.is(request.headers['session-id'], 'ws-session-1', "the client's own headers are");
  }

  await client.close();
});

test('the next response.create, sent the moment response.completed arrives, is accepted and chains', async (context) => {
  const { engram, upstream } = context;
  // The upstream's body ends well after its response.completed event: Engram finishes
  // the exchange (and remembers the response) only then.
  const late = await startLateEndingUpstream(upstream.url, 200);
  context.late = late.server;
  const agent = await engram.createAgent(late.url);
  const client = await Client.open(agent);
  const requestsBefore = upstream.conversationRequests().length;

  upstream.enqueue({ type: 'text', text: 'First answer.' }, { type: 'text', text: 'Second answer.' });
  const firstInput = user('First question.');
  const first = assertCompleted(await client.create({ model: 'gpt-test', input: [firstInput], store: false }), 'first');
  // No wait: the frame is answered as soon as it is read, as an agent loop does.
  const secondInput = user('Second question.');
  const second = await client.create({ model: 'gpt-test', previous_response_id: first.id, input: [secondInput], store: false });
  assert.is(outputText(assertCompleted(second, 'second')), 'Second answer.');

  const sent = upstream.conversationRequests().slice(requestsBefore).map((request) => request.json);
  assert.is(sent.length, 2);
  assert.equal(sent[1].input, [firstInput, first.output[0], secondInput], 'the second turn carries the first');
  await client.close();
});

test('an unknown previous_response_id is an error frame; the connection stays usable', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = await Client.open(agent);
  const requestsBefore = upstream.conversationRequests().length;

  const frames = await client.create({ model: 'gpt-test', previous_response_id: 'resp_does_not_exist', input: [user('Continue.')], store: false });
  const frame = assertErrorFrame(frames, 400, 'previous_response_not_found', 'previous_response_id');
  assert.is(frame.error.type, 'invalid_request_error');
  assert.match(frame.error.message, 'resp_does_not_exist');
  assert.is(upstream.conversationRequests().length, requestsBefore, 'the upstream is not called');

  await assertWorks(client, upstream, 'after an unknown previous_response_id');
  await client.close();
});

test('a second response.create while one is in flight gets response_in_flight; the first completes', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = await Client.open(agent);
  const requestsBefore = upstream.conversationRequests().length;

  upstream.enqueue([{ type: 'text', text: 'A slow answer, streamed in several pieces.' }, { chunkDelayMs: 30 }]);
  client.send({ type: 'response.create', model: 'gpt-test', input: [user('First question.')], store: false });
  client.send({ type: 'response.create', model: 'gpt-test', input: [user('Second question.')], store: false });

  // The refusal may arrive anywhere among the first answer's frames.
  const frames: any[] = [];
  while (!frames.some((frame) => frame.type === 'response.completed')) frames.push(await client.next());
  const refusals = frames.filter((frame) => frame.type === 'error');
  assertErrorFrame(refusals, 400, 'response_in_flight');
  const response = assertCompleted(frames.filter((frame) => frame.type !== 'error'), 'the first response');
  assert.is(outputText(response), 'A slow answer, streamed in several pieces.');

  const sent = upstream.conversationRequests().slice(requestsBefore);
  assert.is(sent.length, 1, 'only the first reaches the upstream');
  assert.match(JSON.stringify(sent[0].json.input), 'First question.');

  await assertWorks(client, upstream, 'after response_in_flight');
  await client.close();
});

test('the memory loop over WebSocket: teach on one connection, recall on another', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const teaching = await Client.open(agent);
  upstream.enqueue({ type: 'text', text: 'Noted, I will keep that in mind.' });
  assertCompleted(
    await teaching.create({
      model: 'gpt-test',
      instructions,
      input: [user('REMEMBER: The deploy script lives in tools/deploy.sh and needs the staging profile.')],
      store: false,
    }),
    'teaching turn',
  );
  await teaching.close();

  const stored = await eventually(async () => {
    const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`);
    assert.is(listed.status, 200);
    const reflections: any[] = listed.json.data ?? listed.json.reflections ?? listed.json;
    return reflections.some((reflection) => reflection.content.includes('tools/deploy.sh')) ? reflections : undefined;
  }, WAIT_MS, 'the reflection to be stored');
  assert.ok(stored.length >= 1);

  const asking = await Client.open(agent);
  upstream.enqueue({ type: 'text', text: 'Run tools/deploy.sh.' });
  assertCompleted(
    await asking.create({ model: 'gpt-test', instructions, input: [user('Where is the deploy script kept?')], store: false }),
    'recall turn',
  );
  const forwarded = JSON.stringify(upstream.conversationRequests().at(-1)!.json);
  assert.match(forwarded, /<engram-reflections>[^]*tools\/deploy\.sh[^]*<\/engram-reflections>/);
  await asking.close();
});

test('bad frames get error frames and leave the connection and others usable', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = await Client.open(agent);

  client.send('{"type": "response.create", "model": ');
  assertErrorFrame(await client.collect(), 400, 'invalid_json');
  await assertWorks(client, upstream, 'after malformed JSON');

  client.send(Buffer.from(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'hi' })), { binary: true });
  assertErrorFrame(await client.collect(), 400, 'invalid_request');
  await assertWorks(client, upstream, 'after a binary frame');

  client.send({ type: 'session.update', session: {} });
  const unknown = assertErrorFrame(await client.collect(), 400, 'invalid_request', 'type');
  assert.match(unknown.error.message, 'session.update');
  await assertWorks(client, upstream, 'after an unknown event type');

  client.send([{ type: 'response.create', model: 'gpt-test', input: 'hi' }]);
  assertErrorFrame(await client.collect(), 400, 'invalid_request');
  await assertWorks(client, upstream, 'after a JSON array');

  // 100,000 levels deep: a stack overflow in the exchange took the whole process down before.
  client.send(`{"type": "response.create", "model": "gpt-test", "input": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
  const deep = assertErrorFrame(await client.collect(), 400, 'invalid_request');
  assert.match(deep.error.message, /nested deeper than 256/);
  await assertWorks(client, upstream, 'after a deeply nested frame');

  const other = await Client.open(agent);
  await assertWorks(other, upstream, 'a new connection');
  await other.close();
  await client.close();
});

test('a frame over ws-max-frame-bytes closes that socket with 1009; other connections go on', async (context) => {
  const { upstream } = context;
  context.small = await startEngram({ 'settle-ms': '50', 'ws-max-frame-bytes': '4096' });
  const agent = await context.small.createAgent(upstream.url);
  const bystander = await Client.open(agent);
  const client = await Client.open(agent);

  client.send({ type: 'response.create', model: 'gpt-test', input: [user('x'.repeat(8192))], store: false });
  const { code } = await withTimeout(client.closed, 'the oversized frame to close the socket');
  assert.is(code, 1009);

  await assertWorks(bystander, upstream, 'a connection open during the oversized frame');
  const fresh = await Client.open(agent);
  await assertWorks(fresh, upstream, 'a connection opened after the oversized frame');
  await fresh.close();
  await bystander.close();
});

test('upgrades without a valid token are refused with 401; a GET without upgrade is a 405', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);

  const missing = await refusedUpgrade(agent, {});
  assert.is(missing.status, 401);
  assert.is(missing.body.error.code, 'unauthorized');

  const wrong = await refusedUpgrade(agent, { authorization: 'Bearer egm_not_a_real_token_0000000000000000' });
  assert.is(wrong.status, 401);
  assert.is(wrong.body.error.code, 'unauthorized');

  const wrongKey = await refusedUpgrade(agent, { 'x-engram-api-key': 'egm_not_a_real_token_0000000000000000' });
  assert.is(wrongKey.status, 401);

  const plain = await fetch(`${agent.baseUrl}/v1/responses`, { headers: authHeaders(agent) });
  assert.is(plain.status, 405);
  assert.match(plain.headers.get('content-type') ?? '', 'application/json');
  const body: any = await plain.json();
  assert.is(body.error.code, 'method_not_allowed');

  // The other header is accepted too, and the refusals changed nothing.
  const client = await Client.open(agent, { 'x-engram-api-key': agent.token });
  await assertWorks(client, upstream, 'authenticated with x-engram-api-key');
  await client.close();
});

test('a token revoked while its connection is open is refused at the next response.create', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const created = await engram.api('POST', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens`, { name: 'laptop' });
  assert.is(created.status, 201, JSON.stringify(created.json));
  const client = await Client.open(agent, { authorization: `Bearer ${created.json.token}` });
  await assertWorks(client, upstream, 'before the revocation');
  const requestsBefore = upstream.conversationRequests().length;

  const revoked = await engram.api('DELETE', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens/${created.json.id}`);
  assert.is(revoked.status, 200);
  const frame = assertErrorFrame(await client.create({ model: 'gpt-test', input: [user('Still allowed?')], store: false }), 401, 'unauthorized');
  assert.match(frame.error.message, /revoked/i);
  assert.is(upstream.conversationRequests().length, requestsBefore, 'the upstream is not called');
  await client.close();
});

test('an upstream HTTP error becomes an error frame with its status; the connection stays usable', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = await Client.open(agent);

  upstream.enqueue({ type: 'error', status: 429 });
  const frames = await client.create({ model: 'gpt-test', input: [user('Hello?')], store: false });
  const frame = assertErrorFrame(frames, 429, 'rate_limit_exceeded');
  assert.is(frame.error.type, 'requests', "the upstream's own error object");
  assert.match(frame.error.message, 'Scripted upstream error (status 429)');

  await assertWorks(client, upstream, 'after an upstream 429');
  await client.close();
});

test('a mid-stream upstream error arrives as the stream\'s own error event', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = await Client.open(agent);

  upstream.enqueue({ type: 'error', status: 500, afterEvents: 4 });
  const frames = await client.create({ model: 'gpt-test', input: [user('Hello?')], store: false });
  assert.is(frames[0].type, 'response.created');
  const last = frames.at(-1);
  assert.is(last.type, 'error');
  assert.is(last.message, 'Scripted upstream error (status 500).');
  assert.not.ok(frames.some((frame) => frame.type === 'response.completed'));

  await assertWorks(client, upstream, 'after a mid-stream error');
  await client.close();
});

test('the connection ends at ws-max-connection-ms with an error frame, then a normal close', async (context) => {
  const { upstream } = context;
  context.brief = await startEngram({ 'settle-ms': '50', 'ws-max-connection-ms': '300' });
  const agent = await context.brief.createAgent(upstream.url);
  const client = await Client.open(agent);

  const frame = assertErrorFrame(await client.collect(), 400, 'websocket_connection_limit_reached');
  assert.is(frame.error.type, 'invalid_request_error');
  const closed = await withTimeout(client.closed, 'the close after the time limit');
  assert.is(closed.code, 1000);

  // A new connection starts its own clock.
  const fresh = await Client.open(agent);
  await assertWorks(fresh, upstream, 'a new connection after the limit');
  await fresh.close();
});

test.run();
