/**
 * The hook endpoints as hooks call them: session start answers in each client's form,
 * and transcript uploads refuse what they cannot use with an HTTP status and a message
 * (hooks run curl with fail-on-error), storing nothing of a refused upload.
 */
import { Readable } from 'node:stream';
import http from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { fixture, releaseExtractor, transcriptOf, upload } from '../support/transcripts.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('hook endpoints');
const LIMIT = 64 * 1024;

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.upstream.setExtractor(releaseExtractor);
  context.engram = await startEngram({ 'settle-ms': '50', 'transcript-max-bytes': String(LIMIT) });
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

async function sessionStart(agent: TestAgent, query = '', body = '{}', headers: Record<string, string> = {}) {
  const response = await fetch(`${agent.baseUrl}/copilot/session-start${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as any };
}

test('session start with an empty memory: a short, valid answer in Copilot CLI form', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const answer = await sessionStart(agent, '', JSON.stringify({ sessionId: 's1', source: 'new', timestamp: 1, cwd: '/tmp' }));
  assert.is(answer.status, 200);
  assert.type(answer.json.additionalContext, 'string');
  assert.ok(answer.json.additionalContext.length < 600, `${answer.json.additionalContext.length} characters`);
  assert.match(answer.json.additionalContext, /^<engram-memory-index>\n[^]*No memories yet[^]*<\/engram-memory-index>$/);
  assert.match(answer.json.additionalContext, /`engram-recall`/, 'Copilot names MCP tools <server>-<tool>');
  assert.equal(answer.json.index, { reflections: 0, procedural: 0, factual: 0, topics: [], markdown: answer.json.index.markdown });
});

test('session start lists what the agent learnt; ?format=claude and codex give hookSpecificOutput', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  assert.is((await upload(agent, 'transcripts/codex', fixture('codex/rollout-current.jsonl'))).status, 202);
  await engram.waitForReflections(agent, 2);
  await new Promise((resolve) => setTimeout(resolve, 2200)); // the index is rebuilt at most every 2 s per agent

  // The rollout ran in /tmp/tr/codex/run-ffwXUQ/proj: what it taught belongs to the repository `proj`.
  const inProj = JSON.stringify({ sessionId: 's2', source: 'new', cwd: '/home/someone/src/proj' });
  const copilot = await sessionStart(agent, '', inProj);
  assert.match(copilot.json.additionalContext, /## release \(2\)\n- \[procedural\] Run npm run build before npm test/);
  assert.match(copilot.json.additionalContext, /- \[factual\] The release checklist lives in docs\/RELEASE\.md\./);
  assert.equal(copilot.json.index.topics, [{ topic: 'release', count: 2 }]);
  assert.is(copilot.json.index.procedural, 1);
  assert.is(copilot.json.index.factual, 1);

  const elsewhere = await sessionStart(agent, '', JSON.stringify({ sessionId: 's3', source: 'new', cwd: '/home/someone/src/other-repo' }));
  assert.is(elsewhere.json.index.reflections, 0, 'another repository’s session is not shown them');
  assert.not.match(elsewhere.json.additionalContext, /RELEASE\.md/);
  const byHeader = await sessionStart(agent, '', '{}', { 'x-engram-scope': 'proj' });
  assert.is(byHeader.json.index.reflections, 2, 'x-engram-scope names the scope when the input has no cwd');

  for (const format of ['claude', 'codex']) {
    const answer = await sessionStart(agent, `?format=${format}`, inProj, {});
    assert.is(answer.status, 200);
    assert.equal(Object.keys(answer.json), ['hookSpecificOutput']);
    assert.is(answer.json.hookSpecificOutput.hookEventName, 'SessionStart');
    assert.is(answer.json.hookSpecificOutput.additionalContext, copilot.json.additionalContext.replaceAll('`engram-', '`mcp__engram__'));
  }
});

test('session start refuses a bad token, bad JSON and an unknown format', async ({ agent, engram, upstream }) => {
  const other = await engram.createAgent(upstream.url);
  for (const token of ['', 'egm_wrong', other.token]) {
    const response = await fetch(`${agent.baseUrl}/copilot/session-start`, {
      method: 'POST',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: '{}',
    });
    assert.is(response.status, 401);
    assert.is(response.headers.get('www-authenticate'), 'Bearer realm="engram"');
    assert.match(((await response.json()) as any).error.message, /token/);
  }
  const bad = await sessionStart(agent, '', '{"session');
  assert.is(bad.status, 400);
  assert.is(bad.json.error.code, 'invalid_json');
  const format = await sessionStart(agent, '?format=vscode');
  assert.is(format.status, 400);
  assert.is(format.json.error.param, 'format');
});

test('uploads: empty, binary, wrong format and the hook input are refused with a message', async ({ agent }) => {
  const empty = await upload(agent, 'transcripts/codex', '');
  assert.is(empty.status, 400);
  assert.match(empty.json.error.message, /empty/);

  const garbage = Buffer.from(Array.from({ length: 20000 }, (_, i) => (i * 7919 + 13) % 256));
  const binary = await upload(agent, 'transcripts/codex', garbage);
  assert.is(binary.status, 400);
  assert.match(binary.json.error.message, /no JSON/);

  const wrong = await upload(agent, 'transcripts/codex', fixture('claude-code/session.turn1.jsonl').subarray(0, 30000).toString().replace(/\n[^\n]*$/, '\n'));
  assert.is(wrong.status, 400);
  assert.match(wrong.json.error.message, /not a Codex rollout/);

  const hookInput = await upload(agent, 'copilot/stop', JSON.stringify({ sessionId: 's', transcriptPath: '/home/me/.copilot/session-state/s/events.jsonl', stopReason: 'end_turn' }), { 'content-type': 'application/json' });
  assert.is(hookInput.status, 400);
  assert.match(hookInput.json.error.message, /not the hook input/);

  const format = await upload(agent, 'transcripts/cursor', '{}');
  assert.is(format.status, 404);
  assert.match(format.json.error.message, /codex, claude, claude-code, copilot/);

  const protocol = await upload(agent, 'transcripts/codex?protocol=soap', fixture('codex/rollout-old.jsonl'));
  assert.is(protocol.status, 400);
  assert.is(protocol.json.error.param, 'protocol');

  const noToken = await fetch(`${agent.baseUrl}/transcripts/codex`, { method: 'POST', body: new Uint8Array(fixture('codex/rollout-old.jsonl')) });
  assert.is(noToken.status, 401);
});

test('a truncated last line: the complete lines are used, and the rest is taken up by the next upload', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const full = fixture('codex/rollout-current.jsonl');
  const lines = full.toString().split('\n');
  const answerLine = lines.findIndex((line) => line.includes('"response_item"') && line.includes('First step'));
  const cut = Buffer.from(lines.slice(0, answerLine).join('\n') + '\n' + lines[answerLine].slice(0, 200)); // inside the final answer's line
  const first = await upload(agent, 'transcripts/codex', cut);
  assert.is(first.status, 202, JSON.stringify(first.json));
  assert.is(first.json.truncated_last_line, true);
  assert.is(first.json.turns, 5, 'the cut final answer is not a turn yet');
  await engram.waitForReflections(agent, 1);
  const before = upstream.extractionRequests().length;

  const rest = await upload(agent, 'transcripts/codex', full);
  assert.is(rest.status, 202);
  assert.is(rest.json.queued_turns, 1);
  await engram.waitForReflections(agent, 2);
  assert.match(transcriptOf(upstream.extractionRequests()[before]), /^<turn n="\d+" role="assistant">\nFirst step: run `npm run build`/);
});

test('a body over the limit gets 413, declared or streamed, and nothing of it is kept', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const base = fixture('copilot/events.jsonl').toString();
  const padding = JSON.stringify({ type: 'session.usage_record', data: { note: 'x'.repeat(1000) }, id: 'p', timestamp: 't', parentId: null }) + '\n';
  const oversized = base + padding.repeat(Math.ceil((LIMIT - base.length) / padding.length) + 1);
  assert.ok(oversized.length > LIMIT);

  const declared = await upload(agent, 'copilot/stop', oversized);
  assert.is(declared.status, 413);
  assert.match(declared.json.error.message, new RegExp(`limit of 64 KiB \\(${LIMIT} bytes\\); ENGRAM_TRANSCRIPT_MAX_BYTES raises it`));

  // Chunked, no content-length: refused once the limit is crossed.
  const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(`${agent.baseUrl}/copilot/stop`);
    const request = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${agent.token}`, 'transfer-encoding': 'chunked' } }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    Readable.from([oversized.slice(0, 30000), oversized.slice(30000)]).pipe(request);
  });
  assert.is(streamed.status, 413);
  assert.match(JSON.parse(streamed.body).error.message, /ENGRAM_TRANSCRIPT_MAX_BYTES/);

  // Once nothing is queued, nothing of the refused uploads reached extraction.
  await idle(engram);
  assert.is(upstream.extractionRequests().filter((r) => JSON.stringify(r.json).includes('ee098856')).length, 0);
  const whole = await upload(agent, 'copilot/stop', base);
  assert.is(whole.status, 202, 'the refused uploads left no mark: the same session is new');
  assert.is(whole.json.queued_turns, 6);
});

test('the server keeps serving after refused uploads', async ({ agent }) => {
  const refused = await upload(agent, 'transcripts/claude', Buffer.alloc(50000, 0xff));
  assert.is(refused.status, 400);
  const ok = await upload(agent, 'transcripts/codex', fixture('codex/rollout-current.turn1.jsonl'));
  assert.is(ok.status, 202);
});

test.run();
