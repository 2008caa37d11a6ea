/**
 * Codex CLI 0.169 over the OpenAI Responses API, replayed through Engram from what the
 * real client sent (test/fixtures/codex, see its README): four HTTP requests (a REMEMBER
 * session; a question whose answer is an exec_command call, the call's output, a cold
 * resume of that session) and three WebSocket connections (warm-up with
 * `generate: false`, then turns chained by `previous_response_id`).
 *
 * What a Codex user depends on: streamed 200s, Codex's body reaching the provider
 * byte for byte apart from Engram's block (developer messages, tools, parameters
 * untouched), a fact taught in one session injected in the next, the block re-sent
 * unchanged on every later request of the same session (`session-id` /
 * `prompt_cache_key`), and the same over a WebSocket with chained turns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { startScriptedUpstream, type RecordedRequest, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/codex');
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

const UPSTREAM_KEY = 'sk-upstream-secret-key-0000000000000000';
const FACT = 'the release checklist lives in docs/RELEASE.md';
/** Engram's block as Codex's provider receives it: one more `input_text` part in the user message. */
const BLOCK_PART = /,\{"type":"input_text","text":"<engram-reflections>(?:[^"\\]|\\.)*?<\/engram-reflections>"\}/g;

const isBlock = (part: any) => part?.type === 'input_text' && typeof part.text === 'string' && part.text.startsWith('<engram-reflections>');
const blockCount = (raw: string) => raw.match(BLOCK_PART)?.length ?? 0;
/** The input without Engram's blocks: what the client sent. */
const withoutBlocks = (input: any[]) =>
  input.map((item) => (Array.isArray(item?.content) ? { ...item, content: item.content.filter((part: any) => !isBlock(part)) } : item));
/** The request's bytes from its `input` array on. */
const inputOf = (raw: string) => raw.slice(raw.indexOf('"input":[') + '"input":'.length);
const textOf = (item: any) => (Array.isArray(item?.content) ? item.content.map((part: any) => part.text ?? '').join('\n') : '');

const test = suite<{ upstream: ScriptedUpstream; engram: TestEngram }>('Codex CLI (recorded) through Engram');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

async function reflections(engram: TestEngram, agent: TestAgent): Promise<any[]> {
  return (await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`)).json.data;
}

async function learned(engram: TestEngram, agent: TestAgent): Promise<void> {
  await eventually(async () => ((await reflections(engram, agent)).some((r) => r.content.includes('docs/RELEASE.md')) ? true : undefined), 10_000, 'the REMEMBER fact');
}

// ---------------------------------------------------------------- HTTP

/** Replays a recorded POST as Codex sent it: its headers, its body bytes, the agent's token. */
async function post(agent: TestAgent, recorded: any): Promise<{ status: number; headers: Headers; text: string; sent: string }> {
  const sent = JSON.stringify(recorded.body);
  const response = await fetch(agent.baseUrl + recorded.path, {
    method: 'POST',
    headers: { ...recorded.headers, authorization: `Bearer ${agent.token}` },
    body: sent,
  });
  return { status: response.status, headers: response.headers, text: await response.text(), sent };
}

function assertStreamed(result: { status: number; headers: Headers; text: string }, what: string) {
  assert.is(result.status, 200, what);
  assert.match(result.headers.get('content-type') ?? '', /^text\/event-stream/, `${what}: streamed as Codex asked`);
  assert.match(result.text, /^event: response\.created\n/, `${what}: starts with response.created`);
  assert.match(result.text, /event: response\.completed\n/, `${what}: ends with response.completed`);
  assert.ok(result.headers.has('x-engram-injected'), `${what}: x-engram-injected present`);
}

/** What reached the provider for a replayed request, and the client headers it carried on. */
function forwarded(upstream: ScriptedUpstream, recorded: any): RecordedRequest {
  const request = upstream.conversationRequests().at(-1)!;
  assert.is(request.path, '/v1/responses');
  for (const name of ['session-id', 'thread-id', 'originator', 'x-codex-turn-metadata', 'x-codex-window-id', 'x-client-request-id']) {
    assert.is(request.headers[name], recorded.headers[name], `${name} reaches the provider`);
  }
  assert.is(request.headers.authorization, `Bearer ${UPSTREAM_KEY}`, "the agent's upstream key, not Engram's token");
  return request;
}

test('HTTP: REMEMBER in one Codex session, injected in the next, re-sent unchanged through a tool call and a resume', async ({ upstream, engram }) => {
  const agent = await engram.createAgent(upstream.url, { name: 'codex-http' });
  const [remember, question, toolOutput, resumed] = ['http-1-remember', 'http-2-question', 'http-3-tool-output', 'http-4-resumed'].map((n) => fixture(`${n}.json`));
  assert.is.not(question.headers['session-id'], remember.headers['session-id'], 'two Codex sessions');
  assert.is(resumed.headers['session-id'], question.headers['session-id'], 'the resume continues session B');
  assert.is(question.body.prompt_cache_key, question.headers['session-id']);

  // Session A: nothing learned yet, so the provider gets Codex's exact bytes.
  const r1 = await post(agent, remember);
  assertStreamed(r1, 'REMEMBER');
  assert.is(r1.headers.get('x-engram-injected'), '0');
  const f1 = forwarded(upstream, remember);
  assert.is(f1.raw.toString('utf8'), r1.sent, 'byte-identical when there is nothing to inject');
  await learned(engram, agent);

  // Session B: the question. The model answers with Codex's shell tool.
  upstream.enqueue({ type: 'tool_call', name: 'exec_command', arguments: { cmd: 'cat docs/RELEASE.md' }, id: 'call_codex_rec_1' });
  const r2 = await post(agent, question);
  assertStreamed(r2, 'question');
  assert.match(r2.text, /"type":"function_call"[^\n]*"name":"exec_command"/, 'the tool call reaches Codex');
  assert.is(r2.headers.get('x-engram-injected'), '1');
  const f2 = forwarded(upstream, question);
  const raw2 = f2.raw.toString('utf8');
  assert.is(blockCount(raw2), 1);
  assert.is(raw2.replace(BLOCK_PART, ''), r2.sent, "Codex's body byte-identical apart from the block");
  assert.not.ok('instructions' in f2.json, 'no instructions field added');
  assert.ok(raw2.includes(JSON.stringify(question.body.tools)), 'tools byte-identical');
  const developer = question.body.input.filter((item: any) => item.role === 'developer');
  assert.is(developer.length, 2);
  for (const item of developer) assert.ok(raw2.includes(JSON.stringify(item)), 'developer messages byte-identical');
  const asked = f2.json.input.length - 1;
  const block = f2.json.input[asked];
  assert.is(block.role, 'user');
  assert.equal(block.content.slice(0, -1), question.body.input[asked].content, "the user's own part comes first, unchanged");
  assert.match(block.content.at(-1).text, new RegExp(`^<engram-reflections>\\n[^]*${FACT.replace(/\./g, '\\.')}\\n</engram-reflections>$`));
  const injected = JSON.stringify(block);

  // Same turn: Codex sends back function_call + function_call_output; the block is re-sent as it was.
  upstream.enqueue({ type: 'text', text: 'The release checklist is in docs/RELEASE.md.' });
  const r3 = await post(agent, toolOutput);
  assertStreamed(r3, 'tool output');
  const f3 = forwarded(upstream, toolOutput);
  const raw3 = f3.raw.toString('utf8');
  assert.equal(f3.json.input.slice(-2).map((item: any) => item.type), ['function_call', 'function_call_output']);
  assert.is(raw3.replace(BLOCK_PART, ''), r3.sent, 'byte-identical apart from the block');
  assert.is(blockCount(raw3), 1, 'no second block for a tool result');
  assert.is(JSON.stringify(f3.json.input[asked]), injected, 'the block re-applied byte-identically');
  assert.ok(inputOf(raw3).startsWith(JSON.stringify(f2.json.input).slice(0, -1)), "the previous request's input is a byte prefix");

  // Cold resume of session B (a new process): same session-id, whole history, one new user message.
  upstream.enqueue({ type: 'text', text: 'Bump the version.' });
  const r4 = await post(agent, resumed);
  assertStreamed(r4, 'resumed');
  const f4 = forwarded(upstream, resumed);
  const raw4 = f4.raw.toString('utf8');
  assert.is(raw4.replace(BLOCK_PART, ''), r4.sent, 'byte-identical apart from the block');
  assert.is(JSON.stringify(f4.json.input[asked]), injected, 'the resumed session gets the same block in the same place');
  assert.ok(inputOf(raw4).startsWith(JSON.stringify(f3.json.input).slice(0, -1)), "the previous request's input is a byte prefix");
  assert.is(textOf(f4.json.input.at(-1)).split('\n')[0], 'Thanks. What is its first step?');

  const everything = upstream.requests.map((r) => JSON.stringify(r.headers) + r.raw.toString('utf8')).join('\n');
  assert.not.ok(everything.includes(agent.token), "Engram's token never goes upstream");
});

// ---------------------------------------------------------------- WebSocket

interface Socket {
  ws: WebSocket;
  /** Sends one frame and resolves with the events up to response.completed or an error. */
  send(frame: unknown): Promise<any[]>;
  close(): void;
}

async function connect(agent: TestAgent, recorded: any): Promise<Socket> {
  const url = agent.baseUrl.replace(/^http/, 'ws') + recorded.path;
  const ws = new WebSocket(url, { headers: { ...recorded.headers, authorization: `Bearer ${agent.token}` } });
  const events: any[] = [];
  let waiter: (() => void) | undefined;
  ws.on('message', (data) => {
    events.push(JSON.parse(data.toString()));
    waiter?.();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  return {
    ws,
    send(frame) {
      const start = events.length;
      ws.send(JSON.stringify(frame));
      return eventually(async () => {
        const mine = events.slice(start);
        return mine.some((e) => e.type === 'response.completed' || e.type === 'response.failed' || e.type === 'error') ? mine : undefined;
      }, 10_000, 'the end of a response');
    },
    close: () => ws.close(),
  };
}

const completed = (events: any[]) => {
  const done = events.find((e) => e.type === 'response.completed');
  assert.ok(done, `completed, got ${JSON.stringify(events.map((e) => e.type === 'error' ? e : e.type))}`);
  return done.response;
};
/** A recorded chained frame, pointed at the response this replay is continuing. */
const chained = (frame: any, previous: string) => ({ ...frame, previous_response_id: previous });
/** What the provider must receive for a frame: its parameters without the WebSocket fields, the given input, streaming. */
const expectedBody = (frame: any, input: any[]) => {
  const { type: _t, generate: _g, previous_response_id: _p, ...body } = frame;
  return { ...body, input, stream: true };
};

test('WebSocket: warm-up, chained turns, a tool round trip and a resumed socket, with memory', async ({ upstream, engram }) => {
  const agent = await engram.createAgent(upstream.url, { name: 'codex-ws' });
  const [remember, question, resumed] = ['ws-1-remember', 'ws-2-question', 'ws-3-resumed'].map((n) => fixture(`${n}.json`));
  for (const recorded of [remember, question, resumed]) {
    assert.is(recorded.headers['openai-beta'], 'responses_websockets=2026-02-06');
    assert.is(recorded.frames[0].generate, false, 'Codex warms up first');
    assert.ok(recorded.frames.slice(1).every((f: any) => typeof f.previous_response_id === 'string'), 'then chains');
  }

  // Session C over a socket: warm-up (no upstream call), then the REMEMBER turn chained on it.
  const before = upstream.conversationRequests().length;
  const c = await connect(agent, remember);
  const warm = await c.send(remember.frames[0]);
  assert.equal(warm.map((e) => e.type), ['response.created', 'response.completed']);
  assert.equal(completed(warm).output, []);
  assert.is(upstream.conversationRequests().length, before, 'a warm-up generates nothing upstream');
  const taught = await c.send(chained(remember.frames[1], completed(warm).id));
  assert.ok(taught.some((e) => e.type === 'response.output_text.delta'), 'streamed as events');
  assert.is(completed(taught).output[0].content[0].text, `echo: REMEMBER: ${FACT}`);
  const u1 = upstream.conversationRequests().at(-1)!;
  assert.is(u1.headers['session-id'], remember.headers['session-id']);
  assert.equal(u1.json, expectedBody(remember.frames[1], [...remember.frames[0].input, ...remember.frames[1].input]), 'the provider gets the whole input, nothing else');
  assert.ok(u1.raw.includes(JSON.stringify(remember.frames[0].tools)), 'tools byte-identical');
  assert.ok(u1.raw.includes(JSON.stringify(remember.frames[0].input[0])), 'base developer message byte-identical');
  c.close();
  await learned(engram, agent);

  // Session D: warm-up, question (answered with exec_command), then the tool output, chained.
  const d = await connect(agent, question);
  const dWarm = completed(await d.send(question.frames[0]));
  upstream.enqueue({ type: 'tool_call', name: 'exec_command', arguments: { cmd: 'cat docs/RELEASE.md' }, id: 'call_codex_ws_1' });
  const asked = await d.send(chained(question.frames[1], dWarm.id));
  const call = completed(asked).output.find((item: any) => item.type === 'function_call');
  assert.is(call?.call_id, 'call_codex_ws_1');
  const u2 = upstream.conversationRequests().at(-1)!;
  const opening = [...question.frames[0].input, ...question.frames[1].input];
  assert.is(blockCount(u2.raw.toString('utf8')), 1);
  assert.equal(withoutBlocks(u2.json.input), opening, 'warm-up input + new items, apart from the block');
  assert.equal({ ...u2.json, input: opening }, expectedBody(question.frames[1], opening));
  const q = opening.length - 1;
  assert.is(textOf(u2.json.input[q]).split('\n')[0], 'Where is the release checklist?');
  assert.ok(u2.json.input[q].content.at(-1).text.includes(FACT), 'the fact from session C is injected');
  const injected = JSON.stringify(u2.json.input[q]);

  upstream.enqueue({ type: 'text', text: 'The release checklist is in docs/RELEASE.md.' });
  const answered = await d.send(chained(question.frames[2], completed(asked).id));
  assert.is(completed(answered).output[0].type, 'message');
  const u3 = upstream.conversationRequests().at(-1)!;
  assert.equal(u3.json.input.slice(q + 1).map((i: any) => i.type), ['function_call', 'function_call_output']);
  assert.equal(u3.json.input.at(-1), question.frames[2].input[0], "Codex's function_call_output as sent");
  assert.is(JSON.stringify(u3.json.input[q]), injected, 'the block re-applied byte-identically on the chained turn');
  assert.ok(u3.raw.toString('utf8').includes(JSON.stringify(u2.json.input).slice(1, -1)), "the previous request's input is a byte prefix");
  d.close();

  // A chained frame on a socket that never saw that response: Codex reconnects and resends on this error.
  const stray = await connect(agent, resumed);
  const lost = await stray.send(chained(resumed.frames[1], completed(answered).id));
  assert.is(lost.at(-1).type, 'error');
  assert.is(lost.at(-1).error?.code, 'previous_response_not_found', JSON.stringify(lost.at(-1)));
  stray.close();

  // Session D resumed on a new socket (as recorded): warm-up, then the whole history chained on it.
  const e = await connect(agent, resumed);
  const eWarm = completed(await e.send(resumed.frames[0]));
  upstream.enqueue({ type: 'text', text: 'Bump the version.' });
  const more = await e.send(chained(resumed.frames[1], eWarm.id));
  assert.is(completed(more).output[0].content[0].text, 'Bump the version.');
  const u4 = upstream.conversationRequests().at(-1)!;
  const history = [...resumed.frames[0].input, ...resumed.frames[1].input];
  assert.equal(withoutBlocks(u4.json.input), history);
  assert.is(JSON.stringify(u4.json.input[q]), injected, 'the resumed session gets the same block in the same place');
  assert.is(textOf(u4.json.input.at(-1)).split('\n')[0], 'Thanks. What is its first step?');
  e.close();

  const everything = upstream.requests.map((r) => JSON.stringify(r.headers) + r.raw.toString('utf8')).join('\n');
  assert.not.ok(everything.includes(agent.token), "Engram's token never goes upstream");
});

test.run();
