/**
 * The scenario a new user tried with the real Codex CLI (0.169): one session teaches "Use
 * pnpm not npm in the quasar repo"; later sessions ask about quasar in their own words.
 * Replayed here from what Codex really sends (test/fixtures/codex), over HTTP and over the
 * Responses WebSocket, with only the prompt and the session changed: every request naming
 * the repository must reach the provider with the reflection injected, and an unrelated
 * one with nothing. The reflection carries the tags extraction writes; a reflection stored
 * without tags is the tagging job's to fix (test/http/tagging.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/codex');
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

const LESSON = 'Use pnpm not npm in the quasar repo.';
/** Tags of the kind extraction writes for it (EXTRACTION_INSTRUCTIONS' tags paragraph). */
const TAGS = ['install dependencies', 'package manager', 'npm install fails', 'lockfile'];
const ASKED = ['How do I install deps in quasar?', 'install packages for quasar', 'which package manager for quasar?', 'How do I install dependencies in the quasar repo?'];
const UNRELATED = 'What is the capital of Australia?';

const test = suite<{ upstream: ScriptedUpstream; engram: TestEngram; agent: TestAgent }>('Codex CLI: a request naming the repository gets its reflection');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.upstream.setExtractor((_request, transcript) =>
    transcript.includes('pnpm not npm') ? [{ kind: 'procedural', content: LESSON, topic: 'tooling', tags: TAGS }] : [],
  );
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { name: 'codex-quasar' });
  // The first session teaches it, as Codex sent its first request.
  const first = withPrompt(fixture('http-1-remember.json'), 'Remember for this project: use pnpm not npm in the quasar repo.');
  const response = await post(context.agent, first);
  assert.is(response.status, 200);
  await response.text();
  const [learnt] = await context.engram.waitForReflections(context.agent, 1);
  assert.is(learnt.content, LESSON);
  assert.equal(learnt.tags, TAGS);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** A recorded Codex request as a new session asking `prompt`: its last user message and its session ids replaced. */
function withPrompt(recorded: any, prompt: string): any {
  const session = randomUUID();
  const input = recorded.body.input.map((item: any) => ({ ...item }));
  const last = input.findLastIndex((item: any) => item.role === 'user');
  input[last] = { ...input[last], content: [{ type: 'input_text', text: prompt }] };
  return {
    ...recorded,
    headers: { ...recorded.headers, 'session-id': session, 'thread-id': session },
    body: { ...recorded.body, input, prompt_cache_key: session },
  };
}

function post(agent: TestAgent, recorded: any): Promise<Response> {
  return fetch(agent.baseUrl + recorded.path, {
    method: 'POST',
    headers: { ...recorded.headers, authorization: `Bearer ${agent.token}` },
    body: JSON.stringify(recorded.body),
  });
}

/** The provider's copy of the last conversation request holding `prompt`. */
function received(upstream: ScriptedUpstream, prompt: string): string {
  const request = [...upstream.conversationRequests()].reverse().find((r) => r.raw.toString('utf8').includes(prompt));
  assert.ok(request, `the request asking "${prompt}" reached the provider`);
  return request.raw.toString('utf8');
}

test('HTTP: each phrasing naming quasar reaches the provider with the reflection; an unrelated question with none', async ({ upstream, agent }) => {
  for (const prompt of [...ASKED, UNRELATED]) {
    const response = await post(agent, withPrompt(fixture('http-2-question.json'), prompt));
    assert.is(response.status, 200, prompt);
    await response.text();
    const injected = prompt === UNRELATED ? '0' : '1';
    assert.is(response.headers.get('x-engram-injected'), injected, prompt);
    assert.is(received(upstream, prompt).includes(LESSON), prompt !== UNRELATED, prompt);
  }
});

test('WebSocket: the same requests chained after a warm-up, as Codex sends them with supports_websockets', async ({ upstream, agent }) => {
  const recorded = fixture('ws-2-question.json');
  const [warmup, question] = recorded.frames;
  for (const prompt of [...ASKED, UNRELATED]) {
    const ws = new WebSocket(agent.baseUrl.replace(/^http/, 'ws') + recorded.path, {
      headers: { ...recorded.headers, 'session-id': randomUUID(), authorization: `Bearer ${agent.token}` },
    });
    const events: any[] = [];
    ws.on('message', (data) => events.push(JSON.parse(data.toString())));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const done = (from: number) =>
      eventually(async () => events.slice(from).find((e) => e.type === 'response.completed' || e.type === 'error'), 10_000, 'a response');
    ws.send(JSON.stringify(warmup));
    const warm = await done(0);
    assert.is(warm.type, 'response.completed', JSON.stringify(warm));
    const input = question.input.map((item: any) => ({ ...item }));
    const last = input.findLastIndex((item: any) => item.role === 'user');
    input[last] = { ...input[last], content: [{ type: 'input_text', text: prompt }] };
    const from = events.length;
    ws.send(JSON.stringify({ ...question, input, previous_response_id: warm.response.id }));
    const answer = await done(from);
    assert.is(answer.type, 'response.completed', JSON.stringify(answer));
    ws.close();
    assert.is(received(upstream, prompt).includes(LESSON), prompt !== UNRELATED, prompt);
  }
});

test.run();
