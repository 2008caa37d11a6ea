/**
 * The hook scripts `engram connect --write` writes, run under bash as the clients run
 * them (hook input on stdin, recorded from the real clients in test/fixtures/hooks/),
 * against a live Engram: what they print on success, and how they fail.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, runCli, runProcess, type CliRun } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  home: string;
  hooks: string;
}

const test = suite<Context>('engram connect: hook scripts against a live Engram');

const FIXTURES = path.join(ROOT, 'test/fixtures');
/** Distinct facts, so Engram's near-duplicate filter keeps one per uploaded transcript. */
const FACTS = [
  'The deploy script lives in tools/deploy.sh and needs bash 5.',
  'Quarterly invoices are exported from the billing dashboard as CSV.',
  'Kafka brokers listen on port 9093 with mutual TLS in staging.',
  'Use pnpm, never npm, inside the monorepo workspace.',
];

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  let extracted = 0;
  context.upstream.setExtractor(() => [{ kind: 'factual', content: FACTS[extracted++ % FACTS.length], topic: 'hooks' }]);
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { org: 'hooks-org', name: 'bot' });
  context.home = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-hooks-'));
  context.hooks = path.join(context.home, '.config/engram/hooks');
  for (const kind of ['codex', 'claude-code', 'copilot']) {
    const run = await runCli(['connect', kind, '--org', 'hooks-org', '--agent', 'bot', '--write', '--url', context.engram.url, '--admin-token', ADMIN_TOKEN, '--home', context.home]);
    assert.is(run.code, 0, run.stderr);
  }
});

test.after(async ({ engram, upstream, home }) => {
  await engram.close();
  await upstream.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** Runs a hook script as a client does: bash, the hook input on stdin, a small environment. */
function runHook(script: string, input: unknown, env: Record<string, string | undefined>, cwd?: string): Promise<CliRun> {
  const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)) as NodeJS.ProcessEnv;
  return runProcess('bash', [script], { env: defined, stdin: typeof input === 'string' ? input : JSON.stringify(input), cwd });
}

function hookInput(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...JSON.parse(fs.readFileSync(path.join(FIXTURES, 'hooks', `${name}.json`), 'utf8')), ...overrides };
}

/** The hook's environment; `token: null` leaves ENGRAM_TOKEN out. */
function env(context: Context, token: string | null = context.agent.token): Record<string, string | undefined> {
  return { PATH: process.env.PATH, HOME: context.home, TMPDIR: os.tmpdir(), ENGRAM_TOKEN: token ?? undefined };
}

const SESSION_STARTS = [
  { script: 'codex-session-start.sh', input: 'codex-session-start', tool: 'mcp__engram__recall' },
  { script: 'claude-code-session-start.sh', input: 'claude-code-session-start', tool: 'mcp__engram__recall' },
];

test('Codex and Claude Code session start: prints hookSpecificOutput with the index and nothing else', async (context) => {
  for (const { script, input, tool } of SESSION_STARTS) {
    const run = await runHook(path.join(context.hooks, script), hookInput(input), env(context));
    assert.is(run.code, 0, run.stderr);
    assert.is(run.stderr, '');
    const answer = JSON.parse(run.stdout);
    // Codex 0.169 rejects any key beyond its schema's; Claude Code's form is the same.
    assert.equal(Object.keys(answer), ['hookSpecificOutput']);
    assert.equal(Object.keys(answer.hookSpecificOutput).sort(), ['additionalContext', 'hookEventName']);
    assert.is(answer.hookSpecificOutput.hookEventName, 'SessionStart');
    assert.match(answer.hookSpecificOutput.additionalContext, /<engram-memory-index>/);
    assert.ok(answer.hookSpecificOutput.additionalContext.includes(tool), script);
  }
});

test('Copilot session start: prints Copilot\'s additionalContext form; an empty stdin is sent as {}', async (context) => {
  for (const input of [hookInput('copilot-session-start'), '']) {
    const run = await runHook(path.join(context.hooks, 'copilot-session-start.sh'), input, env(context));
    assert.is(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout);
    assert.match(answer.additionalContext, /<engram-memory-index>/);
    assert.ok(answer.additionalContext.includes('engram-recall'));
    assert.type(answer.index, 'object');
  }
});

test('stop hooks upload the transcript file named in the hook input, print {}, and Engram learns from it', async (context) => {
  const uploads = [
    { script: 'codex-stop.sh', input: hookInput('codex-stop', { transcript_path: path.join(FIXTURES, 'transcripts/codex/rollout-current.jsonl'), session_id: 'hook-test-codex' }) },
    { script: 'claude-code-stop.sh', input: hookInput('claude-code-stop', { transcript_path: path.join(FIXTURES, 'transcripts/claude-code/session.jsonl'), session_id: 'hook-test-claude' }) },
    { script: 'copilot-stop.sh', input: hookInput('copilot-agent-stop', { transcriptPath: path.join(FIXTURES, 'transcripts/copilot/events.jsonl'), sessionId: 'hook-test-copilot' }) },
  ];
  for (const { script, input } of uploads) {
    const run = await runHook(path.join(context.hooks, script), input, env(context));
    assert.is(run.code, 0, `${script}: ${run.stderr}`);
    assert.is(run.stdout, '{}\n', script);
  }
  const learnt = await eventually(async () => {
    const listed = (await context.engram.reflections(context.agent)).filter((reflection) => reflection.source === 'transcript');
    return listed.length >= uploads.length ? listed : undefined;
  }, 15_000, 'a reflection from each uploaded transcript');
  assert.is(learnt.length, uploads.length);
});

test('Claude Code started in a subfolder: the stop hook’s upload is learnt in the repository its transcript’s folder names', async (context) => {
  // Claude Code keeps a session's transcript in ~/.claude/projects/<its git root, every character but letters and digits made ->/.
  const folder = path.join(context.home, '.claude/projects/-home-dev-src-alpha-shop');
  fs.mkdirSync(folder, { recursive: true });
  const transcript = path.join(folder, 'subfolder-session.jsonl');
  const recorded = fs.readFileSync(path.join(FIXTURES, 'transcripts/claude-code/session.jsonl'), 'utf8');
  fs.writeFileSync(transcript, recorded.replaceAll('"cwd":"/tmp/tr/claude/run-U0dPF4/proj"', '"cwd":"/home/dev/src/alpha-shop/web"').replaceAll('"sessionId":"', '"sessionId":"sub-'));
  const run = await runHook(path.join(context.hooks, 'claude-code-stop.sh'), hookInput('claude-code-stop', { transcript_path: transcript, session_id: 'hook-test-subfolder' }), env(context));
  assert.is(run.code, 0, run.stderr);
  const learnt = await eventually(
    async () => (await context.engram.reflections(context.agent)).find((reflection) => String(reflection.origin?.conversation_id).includes(':sub-')),
    15_000,
    'a reflection from the subfolder session',
  );
  assert.is(learnt.scope, 'alpha-shop', 'the repository, not the subfolder `web` it was started in');
});

test('hooks run in a subfolder of a git repository: the session start indexes the repository’s memory and names it, the stop hook’s upload is learnt there', async (context) => {
  const repo = path.join(context.home, 'src/omega-app');
  const subfolder = path.join(repo, 'web');
  fs.mkdirSync(subfolder, { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  const added = await context.engram.api('POST', `/v0/orgs/${context.agent.orgId}/agents/${context.agent.agentId}/reflections`, {
    kind: 'procedural',
    topic: 'release',
    content: 'Release omega-app with make release-omega.',
    scope: 'omega-app',
  });
  assert.is(added.status, 201, JSON.stringify(added.json));

  const start = await runHook(path.join(context.hooks, 'claude-code-session-start.sh'), hookInput('claude-code-session-start', { cwd: subfolder }), env(context), subfolder);
  assert.is(start.code, 0, start.stderr);
  const index = JSON.parse(start.stdout).hookSpecificOutput.additionalContext as string;
  assert.match(index, 'make release-omega', 'the repository’s memory, not the subfolder’s');
  assert.match(index, 'project: "omega-app"');
  // Outside any repository the folder is the project.
  const loose = path.join(context.home, 'loose/web');
  fs.mkdirSync(loose, { recursive: true });
  const outside = await runHook(path.join(context.hooks, 'claude-code-session-start.sh'), hookInput('claude-code-session-start', { cwd: loose }), env(context), loose);
  assert.match(JSON.parse(outside.stdout).hookSpecificOutput.additionalContext, 'project: "web"');

  // A Codex session of that subfolder, uploaded by its stop hook.
  const rollout = path.join(context.home, 'omega-rollout.jsonl');
  const recorded = fs.readFileSync(path.join(FIXTURES, 'transcripts/codex/rollout-current.jsonl'), 'utf8');
  fs.writeFileSync(rollout, recorded.replaceAll('/tmp/tr/codex/run-ffwXUQ/proj', subfolder).replaceAll('01a2011f-f61d-7e02-9ff8-38877d08253e', 'omega-session-1'));
  const stop = await runHook(path.join(context.hooks, 'codex-stop.sh'), hookInput('codex-stop', { transcript_path: rollout, session_id: 'omega-session-1', cwd: subfolder }), env(context), subfolder);
  assert.is(stop.code, 0, stop.stderr);
  const learnt = await eventually(
    async () => (await context.engram.reflections(context.agent)).find((reflection) => String(reflection.origin?.conversation_id).includes('omega-session-1')),
    15_000,
    'a reflection from the subfolder’s Codex session',
  );
  assert.is(learnt.scope, 'omega-app');
});

test('a stop hook whose input names no transcript has nothing to upload: {} and a note on stderr', async (context) => {
  const run = await runHook(path.join(context.hooks, 'codex-stop.sh'), hookInput('codex-stop', { transcript_path: null }), env(context));
  assert.is(run.code, 0, run.stderr);
  assert.is(run.stdout, '{}\n');
  assert.match(run.stderr, /names no transcript file/);
});

test('a revoked token: every hook fails with Engram\'s 401 on stderr and nothing on stdout', async (context) => {
  const { engram, agent } = context;
  const base = `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens`;
  const minted = await engram.api('POST', base, { name: 'to revoke' });
  assert.is((await engram.api('DELETE', `${base}/${minted.json.id}`)).status, 200);
  const transcript = path.join(FIXTURES, 'transcripts/claude-code/session.jsonl');
  const cases: [string, unknown][] = [
    ['codex-session-start.sh', hookInput('codex-session-start')],
    ['claude-code-stop.sh', hookInput('claude-code-stop', { transcript_path: transcript })],
    ['copilot-session-start.sh', hookInput('copilot-session-start')],
    ['copilot-stop.sh', hookInput('copilot-agent-stop', { transcriptPath: path.join(FIXTURES, 'transcripts/copilot/events.jsonl') })],
  ];
  for (const [script, input] of cases) {
    const run = await runHook(path.join(context.hooks, script), input, env(context, minted.json.token));
    assert.is(run.code, 1, script);
    assert.is(run.stdout, '', `${script} prints nothing a client would parse`);
    assert.match(run.stderr, /failed \(HTTP 401\)/);
    assert.match(run.stderr, /"code":"unauthorized"/);
    assert.match(run.stderr, /rejected ENGRAM_TOKEN/);
    assert.match(run.stderr, /This token was revoked/, `${script}: Engram's reason reaches the user`);
  }
});

test('no ENGRAM_TOKEN: the hook says to export it before starting the client, and fails', async (context) => {
  for (const script of ['codex-session-start.sh', 'codex-stop.sh', 'claude-code-stop.sh', 'copilot-session-start.sh']) {
    for (const token of [null, '']) {
      const run = await runHook(path.join(context.hooks, script), {}, env(context, token));
      assert.is(run.code, 1, script);
      assert.is(run.stdout, '');
      assert.match(run.stderr, /ENGRAM_TOKEN is not set\. Export it in the shell you start .+ from/);
      assert.match(run.stderr, /do not pass their environment on to hooks/);
    }
  }
});

test('no jq: the stop hook says it needs jq, and fails', async (context) => {
  // A PATH holding only what the script needs besides jq.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-nojq-'));
  for (const tool of ['bash', 'curl', 'mktemp', 'rm', 'cat', 'head']) {
    fs.symlinkSync(execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(bin, tool));
  }
  try {
    const run = await runHook(path.join(context.hooks, 'copilot-stop.sh'), hookInput('copilot-agent-stop'), { ...env(context), PATH: bin });
    assert.is(run.code, 1);
    assert.is(run.stdout, '');
    assert.match(run.stderr, /jq is not installed/);
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
});

test('an unreadable transcript path fails with the path on stderr', async (context) => {
  const run = await runHook(path.join(context.hooks, 'claude-code-stop.sh'), hookInput('claude-code-stop', { transcript_path: '/nonexistent/session.jsonl' }), env(context));
  assert.is(run.code, 1);
  assert.is(run.stdout, '');
  assert.match(run.stderr, /cannot read the transcript file \/nonexistent\/session\.jsonl/);
});

test.run();
