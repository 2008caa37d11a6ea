/**
 * Issue 14: `engram connect` names a model the agent's upstream serves, asked through
 * Engram (`GET <agent>/v1/models`), or refuses to write a guess; and can put Claude Code's
 * base URL and token header in its settings' env. The real CLI against a real Engram and
 * the scripted upstream (which lists gpt-4o-mini, gpt-4o, claude-sonnet-4-6, claude-haiku-4-5).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseJsonc } from 'jsonc-parser';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN_TOKEN, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  down: TestAgent;
  home: string;
}
const test = suite<Context>('engram connect: the model, and Claude Code settings env');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { org: 'acme', name: 'served' });
  context.down = await context.engram.createAgent('http://127.0.0.1:9', { org: 'acme', name: 'down' });
});
test.before.each((context) => {
  context.home = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-connect-model-'));
});
test.after.each(({ home }) => fs.rmSync(home, { recursive: true, force: true }));
test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

function connect(context: Context, agent: TestAgent, kind: string, extra: string[], env: Record<string, string> = {}) {
  return runCli(['connect', kind, '--org', 'acme', '--agent', agent.agentId, '--url', context.engram.url, '--admin-token', ADMIN_TOKEN, '--home', context.home, ...extra], {
    env: cleanEnv(env),
  });
}

test('with a token, the model is one the upstream lists: the usual one if served, else the first of its family', async (context) => {
  const crush = await connect(context, context.agent, 'crush', ['--json'], { ENGRAM_TOKEN: context.agent.token });
  assert.is(crush.code, 0, crush.stderr);
  const crushJson = JSON.parse(crush.stdout);
  assert.is(parseJsonc(crushJson.files[0].content).models.large.model, 'claude-sonnet-4-6');
  assert.ok(crushJson.notes.some((note: string) => /claude-sonnet-4-6: the agent's upstream serves it/.test(note)), crushJson.notes.join('\n'));

  const copilot = await connect(context, context.agent, 'copilot', ['--json', '--token-env', 'MY_TOKEN'], { MY_TOKEN: context.agent.token });
  assert.is(copilot.code, 0, copilot.stderr);
  assert.is(JSON.parse(copilot.stdout).env.COPILOT_MODEL, 'gpt-4o-mini');
  const listed = context.upstream.requests.filter((request) => request.path === '/v1/models');
  assert.ok(listed.length >= 2, 'the list was asked of the upstream, through Engram');
  assert.ok(listed.every((request) => !JSON.stringify(request.headers).includes('egm_')), 'with the agent key, not the Engram token');
});

test('--model wins without asking', async (context) => {
  const before = context.upstream.requests.length;
  const run = await connect(context, context.agent, 'opencode', ['--json', '--model', 'claude-haiku-4-5'], { ENGRAM_TOKEN: context.agent.token });
  assert.is(run.code, 0, run.stderr);
  assert.is(parseJsonc(JSON.parse(run.stdout).files[0].content).model, 'engram/claude-haiku-4-5');
  assert.is(context.upstream.requests.length, before);
});

test('when the upstream cannot be asked, writing a file that names a model needs --model and says why; printing says the model is a guess', async (context) => {
  const noToken = await connect(context, context.agent, 'opencode', ['--write']);
  assert.is(noToken.code, 1);
  assert.match(noToken.stderr, /cannot tell which ones the agent's upstream serves \(no agent token to ask with.*\)\. Pass --model NAME/);
  assert.not.ok(fs.existsSync(path.join(context.home, '.config/opencode/opencode.json')), 'nothing written');

  const down = await connect(context, context.down, 'crush', ['--write'], { ENGRAM_TOKEN: context.down.token });
  assert.is(down.code, 1);
  assert.match(down.stderr, /its model list answered HTTP 502: The upstream provider could not be reached/);

  const printed = await connect(context, context.down, 'copilot', ['--json'], { ENGRAM_TOKEN: context.down.token });
  assert.is(printed.code, 0, printed.stderr);
  const json = JSON.parse(printed.stdout);
  assert.is(json.env.COPILOT_MODEL, 'gpt-4.1');
  assert.ok(json.notes.some((note: string) => /gpt-4\.1 is a guess.*--model NAME/.test(note)), json.notes.join('\n'));
});

test('claude-code --settings-env writes ANTHROPIC_BASE_URL and the token header into settings.json, mode 0600', async (context) => {
  const refused = await connect(context, context.agent, 'claude-code', ['--write', '--settings-env']);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /keeps the token in its file/);

  const run = await connect(context, context.agent, 'claude-code', ['--write', '--settings-env'], { ENGRAM_TOKEN: context.agent.token });
  assert.is(run.code, 0, run.stderr);
  const file = path.join(context.home, '.claude/settings.json');
  const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.equal(settings.env, { ANTHROPIC_BASE_URL: context.engram.url, ANTHROPIC_CUSTOM_HEADERS: `X-Engram-Api-Key: ${context.agent.token}` });
  assert.ok(settings.hooks.SessionStart, 'the hooks are there too');
  assert.is(fs.statSync(file).mode & 0o777, 0o600);

  const other = await connect(context, context.agent, 'codex', ['--settings-env']);
  assert.is(other.code, 2);
  assert.match(other.stderr, /--settings-env is for claude-code/);
});

test.run();
