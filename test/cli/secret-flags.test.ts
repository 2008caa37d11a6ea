/**
 * Issue 14: secrets kept off the command line. `agent create|update` take the upstream
 * key from `--upstream-key-env VAR`, `--upstream-key-file PATH` or `--upstream-key-stdin`;
 * `transcripts upload` and `connect` take the agent token the same ways. The plain flag
 * still works and warns. A pasted endpoint URL as `--upstream` is refused with the base.
 * The real CLI process against a real Engram; the scripted upstream shows which key
 * arrived.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, CLI_ENTRY, ROOT, runProcess, type CliRun } from '../support/cli.js';
import { ADMIN_TOKEN, startEngram, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  dir: string;
}
const test = suite<Context>('secrets off the command line');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-secrets-'));
});
test.after(async ({ engram, upstream, dir }) => {
  await engram.close();
  await upstream.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
const remote = (context: Context) => ['--url', context.engram.url, '--admin-token', ADMIN_TOKEN];

/** `engram ARGS` with `stdin` written to it and `env` added. */
function engram(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return runProcess(process.execPath, [...CLI_ENTRY, ...args], {
    cwd: ROOT,
    env: cleanEnv(options.env),
    stdin: options.stdin,
  });
}

/** Sends one chat request through the agent and returns the key the upstream received. */
async function keyUpstreamSaw(context: Context, created: { base_url: string; token: string }): Promise<string> {
  const response = await fetch(`${created.base_url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.is(response.status, 200, await response.clone().text());
  await response.text();
  const seen = context.upstream.conversationRequests().at(-1)!;
  return String(seen.headers.authorization ?? '').replace(/^Bearer /, '');
}

const create = (context: Context, args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  engram(['agent', 'create', '--org', 'acme', '--name', `bot-${++counter}`, '--upstream', context.upstream.url, '--json', ...args, ...remote(context)], options);

test('agent create reads the upstream key from stdin, a variable or a file, without a warning; upstream gets it', async (context) => {
  const file = path.join(context.dir, 'key');
  fs.writeFileSync(file, 'sk-from-file-0000000000\n', { mode: 0o600 });
  const runs: Array<[CliRun, string]> = [
    [await create(context, ['--upstream-key-stdin'], { stdin: 'sk-from-stdin-000000000\n' }), 'sk-from-stdin-000000000'],
    [await create(context, ['--upstream-key-env', 'MY_PROVIDER_KEY'], { env: { MY_PROVIDER_KEY: 'sk-from-env-00000000000' } }), 'sk-from-env-00000000000'],
    [await create(context, ['--upstream-key-file', file]), 'sk-from-file-0000000000'],
  ];
  for (const [run, key] of runs) {
    assert.is(run.code, 0, run.stderr);
    assert.not.match(run.stderr, /warning/, 'no warning when the key stays off the command line');
    assert.is(await keyUpstreamSaw(context, JSON.parse(run.stdout)), key);
  }
});

test('the plain --upstream-key still works, with a warning on stderr', async (context) => {
  const run = await create(context, ['--upstream-key', 'sk-on-the-command-line-0']);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stderr, /warning: --upstream-key puts the secret on the command line.*--upstream-key-env VAR/);
  assert.not.match(run.stdout + run.stderr, /sk-on-the-command-line-0/);
  assert.is(await keyUpstreamSaw(context, JSON.parse(run.stdout)), 'sk-on-the-command-line-0');
});

test('agent update changes the key from stdin', async (context) => {
  const created = JSON.parse((await create(context, ['--upstream-key-env', 'K'], { env: { K: 'sk-old-key-000000000000' } })).stdout);
  const run = await engram(['agent', 'update', '--org', 'acme', '--agent', created.agent_id, '--upstream-key-stdin', '--json', ...remote(context)], {
    stdin: 'sk-new-key-000000000000',
  });
  assert.is(run.code, 0, run.stderr);
  assert.is(await keyUpstreamSaw(context, created), 'sk-new-key-000000000000');
});

test('two ways at once, a variable not set, an empty file: usage errors, nothing created', async (context) => {
  const empty = path.join(context.dir, 'empty');
  fs.writeFileSync(empty, '\n');
  const both = await create(context, ['--upstream-key', 'sk-x', '--upstream-key-env', 'K'], { env: { K: 'sk-y' } });
  assert.is(both.code, 2);
  assert.match(both.stderr, /one way only/);
  const unset = await create(context, ['--upstream-key-env', 'NOT_SET_ANYWHERE']);
  assert.is(unset.code, 2);
  assert.match(unset.stderr, /--upstream-key-env NOT_SET_ANYWHERE: that environment variable is not set/);
  const nothing = await create(context, ['--upstream-key-file', empty]);
  assert.is(nothing.code, 2);
  assert.match(nothing.stderr, /the file is empty/);
  const listed = await engram(['agent', 'list', '--org', 'acme', '--json', ...remote(context)]);
  assert.is(JSON.parse(listed.stdout).length, 5, 'only the agents of the tests before');
});

test('--upstream given an endpoint URL is refused with the base to use, on create and update', async (context) => {
  const pasted = `${context.upstream.url}/v1/chat/completions`;
  const run = await engram(['agent', 'create', '--org', 'acme', '--name', 'pasted', '--upstream', pasted, ...remote(context)]);
  assert.is(run.code, 1);
  assert.ok(run.stderr.includes(`use ${context.upstream.url} `), run.stderr);
  const messages = await engram(['agent', 'update', '--org', 'acme', '--agent', 'bot-1', '--upstream', `${context.upstream.url}/v1/messages`, ...remote(context)]);
  assert.is(messages.code, 1);
  assert.match(messages.stderr, /is an endpoint \(\/v1\/messages\), not the provider's base/);
});

test('transcripts upload takes the agent token from a file or stdin; --token warns', async (context) => {
  const created = JSON.parse((await create(context, [])).stdout);
  const tokenFile = path.join(context.dir, 'token');
  fs.writeFileSync(tokenFile, `${created.token}\n`, { mode: 0o600 });
  const transcript = path.resolve('test/fixtures/transcripts/codex/rollout-old.jsonl');
  const args = ['transcripts', 'upload', 'codex', transcript, '--org', 'acme', '--agent', created.agent_id, ...remote(context)];
  const fromFile = await engram([...args, '--token-file', tokenFile]);
  assert.is(fromFile.code, 0, fromFile.stderr);
  assert.not.match(fromFile.stderr, /warning/);
  const fromStdin = await engram([...args, '--token-stdin'], { stdin: created.token });
  assert.is(fromStdin.code, 0, fromStdin.stderr);
  const fromEnv = await engram([...args, '--token-env', 'MY_ENGRAM_TOKEN'], { env: { MY_ENGRAM_TOKEN: created.token } });
  assert.is(fromEnv.code, 0, fromEnv.stderr);
  const plain = await engram([...args, '--token', created.token]);
  assert.is(plain.code, 0, plain.stderr);
  assert.match(plain.stderr, /warning: --token puts the secret on the command line/);
});

test('connect takes the token from stdin', async (context) => {
  const created = JSON.parse((await create(context, [])).stdout);
  const run = await engram(['connect', 'codex', '--org', 'acme', '--agent', created.agent_id, '--token-stdin', '--model', 'gpt-test', '--json', ...remote(context)], {
    stdin: `${created.token}\n`,
  });
  assert.is(run.code, 0, run.stderr);
  assert.ok(run.stdout.includes(created.token) || JSON.parse(run.stdout), 'the plan was made');
  assert.not.match(run.stderr, /warning/);
});

test.run();
