/**
 * Transcript uploads (endpoints 7 and 8, and Claude Code's): the real files recorded from
 * Codex (old and current rollout formats), Copilot CLI and Claude Code go through real
 * HTTP into the extraction pipeline, and come out as reflections. Re-uploads of the
 * growing file extract only what is new; an identical one does nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { idle, startEngram, type TestEngram } from '../support/engram.js';
import { fixture, releaseExtractor, transcriptOf, upload } from '../support/transcripts.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
}
const test = suite<Context>('transcript uploads');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
});
test.before.each(({ upstream }) => {
  upstream.reset();
  upstream.setExtractor(releaseExtractor);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

interface Case {
  name: string;
  route: string;
  file: string;
  contentType: string;
  session: string;
  upstreamPath: string;
  model: string;
  memory?: Record<string, unknown>;
  /** Injected by the client, recorded in the file, never the user's words. */
  absent: string[];
}

const CASES: Case[] = [
  {
    name: 'Codex rollout, current format (0.169)',
    route: 'transcripts/codex',
    file: 'codex/rollout-current.jsonl',
    contentType: 'application/octet-stream',
    session: '01a2011f-f61d-7e02-9ff8-38877d08253e',
    upstreamPath: '/v1/responses',
    model: 'gpt-5',
    absent: ['AGENTS.md', 'Use npm, not yarn', '<environment_context>', 'skills_instructions', 'The checklist says to build first', 'gAAAA'],
  },
  {
    name: 'Codex rollout, old format (0.20), extraction model from the agent',
    route: 'transcripts/codex',
    file: 'codex/rollout-old.jsonl',
    contentType: 'application/x-ndjson',
    session: 'd275234a-5d59-4495-84de-ae1bd0af43b6',
    upstreamPath: '/v1/responses',
    model: 'gpt-extract',
    memory: { extraction_model: 'gpt-extract' },
    absent: ['Use npm, not yarn', 'record_type', '"exit_code"'],
  },
  {
    name: 'Copilot CLI events.jsonl, sent as application/json to copilot/stop',
    route: 'copilot/stop',
    file: 'copilot/events.jsonl',
    contentType: 'application/json',
    session: 'ee098856-596f-4693-83f4-48466e378ebb',
    upstreamPath: '/v1/chat/completions',
    model: 'gpt-4.1',
    absent: ['You are the GitHub Copilot CLI', 'current_datetime', 'custom_instruction'],
  },
  {
    name: 'Claude Code transcript',
    route: 'transcripts/claude',
    file: 'claude-code/session.jsonl',
    contentType: 'application/x-ndjson',
    session: '94c50248-2033-4209-a871-2b9d2b2c05f7',
    upstreamPath: '/v1/messages',
    model: 'claude-opus-5-5',
    absent: ['Use npm, not yarn', '<system-reminder>', 'The checklist says to build first', 'signature'],
  },
];

for (const c of CASES) {
  test(`${c.name}: the upload is queued, extracted in the client's protocol, and stored as reflections`, async ({ engram, upstream }) => {
    const agent = await engram.createAgent(upstream.url, c.memory ? { memory: c.memory } : {});
    const answer = await upload(agent, c.route, fixture(c.file), { 'content-type': c.contentType });
    assert.is(answer.status, 202, JSON.stringify(answer.json));
    assert.is(answer.json.status, 'queued');
    assert.is(answer.json.session, c.session);
    assert.is(answer.json.turns, 6, 'user, assistant, user, tool call, tool output, assistant');
    assert.is(answer.json.queued_turns, 6);

    const stored = await engram.waitForReflections(agent, 2);
    assert.equal(stored.map((r) => r.content).sort(), [
      'Run npm run build before npm test: the tests import dist/.',
      'The release checklist lives in docs/RELEASE.md.',
    ]);
    assert.ok(stored.every((r) => r.source === 'transcript'));

    await idle(engram);
    const [extraction] = upstream.extractionRequests();
    assert.is(upstream.extractionRequests().length, 1, 'one call');
    assert.is(extraction.path.split('?')[0], c.upstreamPath);
    assert.is(extraction.json.model, c.model);
    const transcript = transcriptOf(extraction);
    assert.match(transcript, /^<turn n="0" role="user">\nRemember: the release checklist lives in docs\/RELEASE\.md\n<\/turn>\n<turn n="1" role="assistant">\nNoted/);
    assert.match(transcript, /role="assistant">\n\[tool call \w+ .*cat docs\/RELEASE\.md/);
    assert.match(transcript, /role="tool">\n[^]*# Release checklist\n1\. Run `npm run build` before `npm test`/);
    assert.match(transcript, /role="assistant">\nFirst step: run `npm run build` before `npm test`[^\n]*\n<\/turn>$/);
    for (const text of c.absent) assert.not.ok(transcript.includes(text), `${text} reached extraction`);
  });
}

for (const c of CASES.filter((c) => c.file === 'codex/rollout-current.jsonl' || c.file === 'claude-code/session.jsonl')) {
  test(`${c.name}: its recorded instruction file (AGENTS.md, CLAUDE.md) restated is not stored`, async ({ engram, upstream }) => {
    // A careless model: the project notes' one rule in its own words, besides what the session taught.
    upstream.setExtractor((request, transcript) => [
      { kind: 'procedural', topic: 'tooling', content: 'In this project, npm is used rather than yarn.' },
      ...releaseExtractor(request, transcript),
    ]);
    const agent = await engram.createAgent(upstream.url, c.memory ? { memory: c.memory } : {});
    assert.is((await upload(agent, c.route, fixture(c.file), { 'content-type': c.contentType })).status, 202);
    const stored = await engram.waitForReflections(agent, 2);
    assert.equal(stored.map((r) => r.content).sort(), [
      'Run npm run build before npm test: the tests import dist/.',
      'The release checklist lives in docs/RELEASE.md.',
    ]);
    const message = JSON.stringify(upstream.extractionRequests()[0].json);
    assert.match(message, /<instructions-in-context>\\n[^]*Use npm, not yarn\.\\n[^]*<\/instructions-in-context>/);
  });
}

test('a grown file extracts only its new turns; an identical one does no extraction at all', async ({ engram, upstream }) => {
  for (const [first, grown] of [
    ['codex/rollout-current.turn1.jsonl', 'codex/rollout-current.jsonl'],
    ['claude-code/session.turn1.jsonl', 'claude-code/session.jsonl'],
    ['copilot/events.turn1.jsonl', 'copilot/events.jsonl'],
  ]) {
    upstream.reset();
    upstream.setExtractor(releaseExtractor);
    const route = first.startsWith('codex') ? 'transcripts/codex' : first.startsWith('claude') ? 'transcripts/claude' : 'copilot/stop';
    const agent = await engram.createAgent(upstream.url);
    const one = await upload(agent, route, fixture(first));
    assert.is(one.status, 202);
    assert.is(one.json.turns, 2);
    await engram.waitForReflections(agent, 1);
    await idle(engram);
    assert.is(upstream.extractionRequests().length, 1);
    assert.match(transcriptOf(upstream.extractionRequests()[0]), /^<turn n="0" role="user">\nRemember[^]*role="assistant">\nNoted[^\n]*\n<\/turn>$/);

    const again = await upload(agent, route, fixture(first));
    assert.is(again.status, 200);
    assert.is(again.json.status, 'unchanged');

    const two = await upload(agent, route, fixture(grown));
    assert.is(two.status, 202, `${grown}: ${JSON.stringify(two.json)}`);
    assert.is(two.json.turns, 6);
    assert.is(two.json.queued_turns, 4, 'only the turns after the watermark');
    await engram.waitForReflections(agent, 2);
    await idle(engram);
    assert.is(upstream.extractionRequests().length, 2);
    const second = transcriptOf(upstream.extractionRequests()[1]);
    assert.match(second, /^<turn n="\d+" role="user">\nWhat is the first step of the release checklist\?/);
    assert.not.ok(second.includes('Remember: the release checklist'), 'turn 1 is not extracted again');

    const identical = await upload(agent, route, fixture(grown));
    assert.is(identical.json.status, 'unchanged');
    await idle(engram);
    assert.is(upstream.extractionRequests().length, 2, `${grown}: no extraction call for an identical upload`);
  }
});

test('uploads arriving before the session settles are extracted once, together', async ({ upstream }) => {
  const engram = await startEngram({ 'settle-ms': '1500' });
  try {
    const agent = await engram.createAgent(upstream.url);
    assert.is((await upload(agent, 'transcripts/codex', fixture('codex/rollout-current.turn1.jsonl'))).status, 202);
    const grown = await upload(agent, 'transcripts/codex', fixture('codex/rollout-current.jsonl'));
    assert.is(grown.json.queued_turns, 6, 'nothing was extracted yet: the new job covers turn 1 too');
    await engram.waitForReflections(agent, 2);
    await idle(engram);
    assert.is(upstream.extractionRequests().length, 1, 'the first job was superseded');
    assert.match(transcriptOf(upstream.extractionRequests()[0]), /^<turn n="0" role="user">\nRemember[^]*role="assistant">\nFirst step/);
  } finally {
    await engram.close();
  }
});

test('a 2xx means queued durably: the extraction happens after a restart', async ({ upstream }) => {
  const first = await startEngram({ 'settle-ms': '1500' });
  const dataDir = first.dataDir;
  let second: TestEngram | undefined;
  try {
    const agent = await first.createAgent(upstream.url);
    assert.is((await upload(agent, 'transcripts/claude', fixture('claude-code/session.jsonl'))).status, 202);
    await first.running.close();
    assert.is(upstream.extractionRequests().length, 0, 'not extracted before the settle time');
    second = await startEngram({ 'settle-ms': '1500' }, dataDir);
    const stored = await second.waitForReflections(agent, 2);
    assert.is(stored.length, 2);
  } finally {
    await second?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a session that went through the proxy is not learnt twice from its transcript', async ({ engram, upstream }) => {
  const copilotRecorded = JSON.parse(fs.readFileSync(path.resolve('test/fixtures/copilot-cli/turn-1.json'), 'utf8'));
  const cases: Array<{ route: string; file: string; path: string; headers: Record<string, string>; body: unknown }> = [
    {
      // Claude Code names its session in a header.
      route: 'transcripts/claude',
      file: 'claude-code/session.jsonl',
      path: '/v1/messages',
      headers: { 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': '94c50248-2033-4209-a871-2b9d2b2c05f7' },
      body: { model: 'claude-opus-5-5', max_tokens: 256, messages: [{ role: 'user', content: 'Remember: the release checklist lives in docs/RELEASE.md' }] },
    },
    {
      // Copilot CLI sends no session header: its recorded system prompt names the session folder.
      route: 'copilot/stop',
      file: 'copilot/events.jsonl',
      path: '/v1/chat/completions',
      headers: {},
      body: JSON.parse(JSON.stringify(copilotRecorded.body).replaceAll('1e7528de-369d-4bbd-a05a-209fa76c3c8a', 'ee098856-596f-4693-83f4-48466e378ebb')),
    },
  ];
  for (const c of cases) {
    const agent = await engram.createAgent(upstream.url);
    const before = upstream.extractionRequests().length;
    upstream.enqueue({ type: 'text', text: 'Noted: the release checklist lives in docs/RELEASE.md.' });
    const proxied = await fetch(`${agent.baseUrl}${c.path}`, {
      method: 'POST',
      headers: { 'x-engram-api-key': agent.token, 'content-type': 'application/json', ...c.headers },
      body: JSON.stringify(c.body),
    });
    assert.is(proxied.status, 200);
    // The whole answer read: the turn is queued for extraction (the client's stream ends once it is); idle, it is extracted.
    await proxied.text();
    await idle(engram);
    const extractions = upstream.extractionRequests().length;
    assert.is(extractions, before + 1, 'the proxied turn was extracted');

    const answer = await upload(agent, c.route, fixture(c.file));
    assert.is(answer.status, 200, `${c.file}: ${JSON.stringify(answer.json)}`);
    assert.is(answer.json.status, 'learnt_through_proxy');
    await idle(engram);
    assert.is(upstream.extractionRequests().length, extractions, 'no extraction of the uploaded copy');
  }
});

test('a transcript naming no session is keyed by the hook-given session, else by its opening', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url, { memory: { extraction_model: 'gpt-extract' } });
  // Copilot events without their session.start line (as a JSON document: an array of events).
  const events = fixture('copilot/events.jsonl').toString().trim().split('\n').map((line) => JSON.parse(line)).filter((e) => e.type !== 'session.start');
  const named = await upload(agent, 'copilot/stop', JSON.stringify(events), { 'content-type': 'application/json', 'x-engram-session': 'hook-session-1' });
  assert.is(named.status, 202, JSON.stringify(named.json));
  assert.is(named.json.session, 'hook-session-1');
  const anonymous = await upload(agent, 'copilot/stop', JSON.stringify({ events }, null, 2), { 'content-type': 'application/json' });
  assert.is(anonymous.status, 202, 'a pretty-printed JSON document is read whole');
  assert.match(anonymous.json.session, /^first-turn:/);
  const again = await upload(agent, 'copilot/stop', JSON.stringify({ events }, null, 2), { 'content-type': 'application/json' });
  assert.is(again.json.status, 'unchanged', 'the same opening is the same session');
});

test('secrets in a transcript never reach extraction or the queue', async ({ engram, upstream }) => {
  const secret = 'sk-proj-' + 'Zx9'.repeat(16);
  const aws = 'AKIA' + 'QWERTYUIOPASDFGH';
  const lines = fixture('copilot/events.jsonl').toString();
  const leak = JSON.stringify({
    type: 'tool.execution_complete',
    data: { toolCallId: 'c2', success: true, result: { content: `OPENAI_API_KEY=${secret}\nAWS_ACCESS_KEY_ID=${aws}\nREMEMBER: the env file is .env.local` } },
    id: 'x',
    timestamp: '2026-11-22T02:41:12.000Z',
    parentId: 'y',
  });
  const settleSlow = await startEngram({ 'settle-ms': '1500' });
  try {
    const agent = await settleSlow.createAgent(upstream.url);
    assert.is((await upload(agent, 'copilot/stop', lines + leak + '\n')).status, 202);
    // Queued but not yet extracted: the database holds the job.
    const files = fs.readdirSync(settleSlow.dataDir).filter((name) => name.endsWith('.db') || name.endsWith('-wal'));
    assert.ok(files.length > 0);
    for (const name of files) {
      const bytes = fs.readFileSync(path.join(settleSlow.dataDir, name));
      assert.is(bytes.indexOf(secret), -1, `${name} holds the key`);
      assert.is(bytes.indexOf(aws), -1, `${name} holds the AWS key id`);
    }
    await settleSlow.waitForReflections(agent, 2);
    const transcript = transcriptOf(upstream.extractionRequests().at(-1)!);
    assert.ok(transcript.includes('the env file is .env.local'));
    assert.not.ok(transcript.includes(secret));
    assert.not.ok(transcript.includes(aws));
  } finally {
    await settleSlow.close();
  }
});

test('a long new part is extracted in several bounded calls, oldest first, each moving the watermark', async ({ upstream }) => {
  const engram = await startEngram({ 'settle-ms': '50', 'extraction-max-bytes': '2048', 'extraction-max-chunks': '4' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const lines = [JSON.stringify({ type: 'session.start', data: { sessionId: 'long-1', selectedModel: 'gpt-4.1' }, id: '0', timestamp: 't', parentId: null })];
    for (let i = 0; i < 40; i++) {
      lines.push(JSON.stringify({ type: 'user.message', data: { content: `Step ${i}: ${'look at the build output. '.repeat(8)}` }, id: `u${i}`, timestamp: 't', parentId: null }));
      lines.push(JSON.stringify({ type: 'assistant.message', data: { content: `Done with step ${i}.`, toolRequests: [] }, id: `a${i}`, timestamp: 't', parentId: null }));
    }
    const answer = await upload(agent, 'copilot/stop', lines.join('\n') + '\n');
    assert.is(answer.json.turns, 80);
    assert.ok(answer.json.queued_turns < 80 && answer.json.queued_turns > 20, `bounded by max bytes x max chunks: ${answer.json.queued_turns}`);
    await idle(engram);
    const calls = upstream.extractionRequests().map(transcriptOf);
    // Turns are packed in order, so the budget of 4 calls' text may take a few more calls.
    assert.ok(calls.length >= 2 && calls.length <= 8, `${calls.length} calls`);
    for (const call of calls) assert.ok(Buffer.byteLength(call) <= 2048, `a call of ${Buffer.byteLength(call)} bytes`);
    const firstSteps = calls.map((call) => Number(/Step (\d+)/.exec(call)?.[1]));
    assert.equal([...firstSteps].sort((a, b) => a - b), firstSteps, 'in order');
    assert.match(calls.at(-1)!, /Done with step 39\.\n<\/turn>$/);
  } finally {
    await engram.close();
  }
});

test.run();
