/**
 * `engram transcripts upload`: session files already on disk, uploaded as the stop hooks
 * would, through the real CLI process against a real Engram.
 */
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN_TOKEN, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { releaseExtractor } from '../support/transcripts.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('engram transcripts upload');
const FIXTURES = path.resolve('test/fixtures/transcripts');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.upstream.setExtractor(releaseExtractor);
  context.engram = await startEngram({ 'settle-ms': '50' });
  context.agent = await context.engram.createAgent(context.upstream.url, { org: 'acme', name: 'backfill', memory: { extraction_model: 'gpt-extract' } });
});
test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

const upload = (context: Context, args: string[], env: Record<string, string> = {}) =>
  runCli(['transcripts', 'upload', ...args, '--org', 'acme', '--agent', 'backfill', '--url', context.engram.url, '--admin-token', ADMIN_TOKEN], { env: cleanEnv(env) });

test('uploads each file, says what became of it, and learns from them', async (context) => {
  const files = ['codex/rollout-current.jsonl', 'codex/rollout-old.jsonl'].map((file) => path.join(FIXTURES, file));
  const run = await upload(context, ['codex', ...files], { ENGRAM_TOKEN: context.agent.token });
  assert.is(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split('\n');
  assert.is(lines.length, 2);
  assert.match(lines[0], /rollout-current\.jsonl: queued \(6 of 6 turns queued for extraction, session 01a2011f-f61d-7e02-9ff8-38877d08253e\)/);
  assert.match(lines[1], /rollout-old\.jsonl: queued \(6 of 6 turns/);
  const stored = await context.engram.waitForReflections(context.agent, 2);
  assert.ok(stored.every((reflection) => reflection.source === 'transcript'));

  const again = await upload(context, ['codex', files[0], '--token', context.agent.token]);
  assert.is(again.code, 0);
  assert.match(again.stdout, /rollout-current\.jsonl: unchanged \(6 turns/);
});

test('a file Engram refuses or cannot read fails the command, after the others are done', async (context) => {
  const good = path.join(FIXTURES, 'copilot/events.jsonl');
  const wrong = path.join(FIXTURES, 'claude-code/session.jsonl');
  const run = await upload(context, ['copilot', wrong, '/nonexistent/events.jsonl', good], { ENGRAM_TOKEN: context.agent.token });
  assert.is(run.code, 1);
  assert.match(run.stdout, /session\.jsonl: HTTP 400: The body is not a Copilot CLI events\.jsonl/);
  assert.match(run.stdout, /\/nonexistent\/events\.jsonl: unreadable: ENOENT/);
  assert.match(run.stdout, /events\.jsonl: queued/);
  assert.match(run.stderr, /2 of 3 file\(s\) not uploaded/);
});

test('no token, a wrong token, an unknown client: clear failures', async (context) => {
  const file = path.join(FIXTURES, 'codex/rollout-old.jsonl');
  const none = await upload(context, ['codex', file]);
  assert.is(none.code, 1);
  assert.match(none.stderr, /agent's token: set ENGRAM_TOKEN, pass --token-env VAR, --token-file PATH or --token-stdin, or use --new-token/);
  const wrong = await upload(context, ['codex', file, file, '--token', 'egm_not_a_real_token']);
  assert.is(wrong.code, 1);
  assert.is(wrong.stdout.trim().split('\n').length, 1, 'stops at the first 401');
  assert.match(wrong.stderr, /rejected the token/);
  const client = await upload(context, ['cursor', file, '--token', context.agent.token]);
  assert.is(client.code, 2);
  assert.match(client.stderr, /codex, claude-code, copilot/);
});

test.run();
