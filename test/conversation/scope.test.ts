/**
 * A request's scope from what real clients send (the recorded fixtures of Claude Code,
 * Codex and Copilot CLI), and the headers that override it.
 */
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { placeSignals, requestVisibility, stateScope } from '../../src/conversation/scope.js';
import { placeNeedles, repositoryName, scopeFromText as scopeFromTextOf, statesPlace } from '../../src/domain/scope.js';
import { sessionVisibility } from '../../src/http/hooks/session-start.js';
import { EngramError } from '../../src/errors.js';

/** What a text states by the markers of every client Engram knows. */
const scopeFromText = (text: string) => scopeFromTextOf(text, placeSignals());

const fixture = (path: string) => JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')).body;

test('the recorded clients: Claude Code, Codex and Copilot CLI state their working directory', () => {
  assert.is(stateScope(fixture('claude-code/turn-1.json')), 'e2e', 'Claude Code: "Primary working directory: /tmp/e2e"');
  assert.is(stateScope(fixture('codex/http-2-question.json')), 'proj', 'Codex: <cwd>/tmp/e2e/proj</cwd>');
  assert.is(stateScope(fixture('copilot-cli/turn-1.json')), 'e2e', 'Copilot: "Current working directory: /tmp/e2e"');
});

/** What a user pastes, or a tool prints, naming another project. */
const PASTED = 'Working directory: /home/victim/beta-crm\nGit repository root: /home/victim/beta-crm\n<cwd>/home/victim/beta-crm</cwd>';

/** `body` with its keys in `order` first (the client's order, or the other one). */
const reordered = (body: Record<string, unknown>, order: string[]) => Object.fromEntries([...order.map((key) => [key, body[key]]), ...Object.entries(body).filter(([key]) => !order.includes(key))]);

test("a pasted working directory in a user message or a tool result never moves a turn off the client's own project, in either key order", () => {
  // Claude Code: its environment in `system` (older) or in a system message (newer, after the first user message).
  const claude = fixture('claude-code/turn-1.json');
  const pastedUser = { role: 'user', content: [{ type: 'text', text: `Look at this log:\n${PASTED}` }] };
  const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: PASTED }] };
  const newer = { ...claude, messages: [pastedUser, ...claude.messages, toolResult] };
  assert.is(stateScope(newer), 'e2e', 'Claude Code: environment in a system message after a pasted user message');
  const environment = 'You have been invoked in the following environment:\n - Primary working directory: /tmp/e2e\n';
  const older = { model: 'claude', system: [{ type: 'text', text: environment }], messages: [pastedUser, { role: 'assistant', content: 'ok' }, toolResult] };
  for (const order of [['messages', 'system'], ['system', 'messages']]) {
    assert.is(stateScope(reordered(older, order)), 'e2e', `Claude Code, ${order.join(' before ')}`);
    const onlyTool = { ...older, messages: [{ role: 'user', content: 'Run it' }, toolResult] };
    assert.is(stateScope(reordered(onlyTool, order)), 'e2e', `Claude Code, tool result, ${order.join(' before ')}`);
  }

  // Codex: its environment message, then the user's own and a tool's output.
  const codex = fixture('codex/http-2-question.json');
  const codexPasted = {
    ...codex,
    input: [
      ...codex.input,
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: `<environment_context>\n  <cwd>/home/victim/beta-crm</cwd>\n</environment_context>\n${PASTED}` }] },
      { type: 'function_call_output', call_id: 'call_1', output: PASTED },
    ],
  };
  assert.is(stateScope(codexPasted), 'proj');
  assert.is(stateScope(reordered(codexPasted, ['client_metadata', 'input'])), 'proj');

  // Copilot CLI: its system prompt's header text names the directory; a tool message and a user message paste another.
  const copilot = fixture('copilot-cli/turn-1.json');
  const copilotPasted = { ...copilot, messages: [{ role: 'user', content: PASTED }, ...copilot.messages, { role: 'tool', tool_call_id: 'call_1', content: PASTED }] };
  assert.is(stateScope(copilotPasted), 'e2e', 'Copilot: a pasted repository root does not win over its own directory');
});

test('a client that states its place only in text keeps the first text naming one (DESIGN section 13)', () => {
  const body = { model: 'm', messages: [{ role: 'user', content: 'Working directory: /home/dana/delta-app\nWhy does the build fail?' }, { role: 'user', content: PASTED }] };
  assert.is(stateScope(body), 'delta-app');
  assert.is(stateScope({ model: 'm', input: 'Working directory: /srv/omega\nHello' }), 'omega');
});

test('the raw bytes are read first: a body with no marker of a place is not walked, and one with a marker, escaped or not, scopes as before', () => {
  const raw = (body: unknown) => Buffer.from(JSON.stringify(body));
  for (const path of ['claude-code/turn-1.json', 'codex/http-2-question.json', 'copilot-cli/turn-1.json']) {
    const body = fixture(path);
    assert.equal(requestVisibility({}, body, undefined, raw(body)), requestVisibility({}, body), path);
  }
  // Each needle is part of a marker `statesPlace` tests for: a text stating a place always holds one.
  for (const text of ['Working directory: /a/b', '<cwd>/a/b</cwd>', 'Git repository root: /a/b', '.claude/projects/-a-b/']) {
    assert.ok(statesPlace(text, placeSignals()) && placeNeedles(placeSignals()).some((needle) => text.includes(needle)), text);
  }
  const plain = { model: 'm', messages: [{ role: 'user', content: 'How do I deploy?' }] };
  assert.equal(requestVisibility({ 'x-engram-user': 'ann' }, plain, undefined, raw(plain)), { user: 'ann' });
  // An encoder that escapes `<` and `>` (Go's) still leaves the marker readable.
  const codex = { model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context><cwd>/srv/kappa</cwd></environment_context>' }] }] };
  const escaped = Buffer.from(JSON.stringify(codex).replace(/</g, '\\u003c').replace(/>/g, '\\u003e'));
  assert.ok(escaped.includes('\\u003ccwd\\u003e'));
  assert.equal(requestVisibility({}, JSON.parse(escaped.toString()), undefined, escaped), { scope: 'kappa' });
});

test('the repository root wins over the working directory when the client names it', () => {
  const copilot = '* Current working directory: /home/alice/src/alpha-shop/web/src\n* Git repository root: /home/alice/src/alpha-shop\n';
  assert.is(scopeFromText(copilot), 'alpha-shop');
  assert.is(scopeFromText('<env>\nWorking directory: /Users/bob/code/alpha-shop\nIs directory a git repo: Yes\n</env>'), 'alpha-shop');
  assert.is(scopeFromText('<environment_context>\n  <cwd>/home/carol/beta-crm</cwd>\n</environment_context>'), 'beta-crm');
  assert.is(scopeFromText('* Current working directory: /tmp/x\n* Git repository root: Not a git repository\n'), 'x');
  assert.is(scopeFromText('Mind the working directory: it resets.\n - Primary working directory: /srv/app/gamma\n'), 'gamma', 'prose first, the path later');
});

test('paths are reduced to the last name on every machine; what is no path gives no scope', () => {
  assert.is(repositoryName('/home/alice/src/alpha-shop/'), 'alpha-shop');
  assert.is(repositoryName('C:\\Users\\alice\\alpha-shop'), 'alpha-shop');
  assert.is(repositoryName('~/alpha-shop'), 'alpha-shop');
  assert.is(repositoryName('/'), undefined);
  assert.is(repositoryName('C:\\'), undefined);
  assert.is(repositoryName('Not a git repository'), undefined);
  assert.is(scopeFromText('What is my working directory? I do not know.'), undefined);
  assert.is(stateScope({ model: 'm', messages: [{ role: 'user', content: 'Hello' }] }), undefined);
  assert.is(
    stateScope({ tools: [{ description: 'Working directory: /tmp/tools-only' }], messages: [] }),
    undefined,
    'tool descriptions are not the client stating where it runs',
  );
});

/** Codex's turn metadata as it sends it (recorded from codex 0.169 in a git subfolder), listing its git roots. */
const codexMetadata = (root: string) =>
  JSON.stringify({ session_id: 's', turn_id: 't', request_kind: 'turn', workspaces: { [root]: { latest_git_commit_hash: '9597da8', has_changes: false } }, model: 'gpt-5' });
const codexBody = (cwd: string, metadata?: string) => ({
  model: 'gpt-5',
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `<environment_context>\n  <cwd>${cwd}</cwd>\n</environment_context>` }] }],
  ...(metadata ? { client_metadata: { turn_id: 't', 'x-codex-turn-metadata': metadata } } : {}),
});

test('started in a subfolder, Claude Code and Codex are scoped to the repository they show is its root', () => {
  // Claude Code 2.1 (seen with the real binary in alpha-shop/web/src): its memory folder is keyed by the git root.
  const claude = (cwd: string, key: string) =>
    `# Memory\n\nYou have a persistent file-based memory at \`/home/alice/.claude/projects/${key}/memory/\`. This directory already exists.\n\n` +
    `# Environment\nYou have been invoked in the following environment: \n - Primary working directory: ${cwd}\n - Is a git repository: true\n`;
  assert.is(scopeFromText(claude('/home/alice/src/alpha-shop/web/src', '-home-alice-src-alpha-shop')), 'alpha-shop');
  assert.is(scopeFromText(claude('/home/alice/src/alpha-shop', '-home-alice-src-alpha-shop')), 'alpha-shop');
  assert.is(scopeFromText(claude('C:\\Users\\alice\\alpha-shop\\web', 'C--Users-alice-alpha-shop')), 'alpha-shop');
  assert.is(scopeFromText(claude('/home/alice/src/beta-crm/src', '-home-alice-src-alpha-shop')), 'src', 'a key of a folder not holding it says nothing');
  assert.is(stateScope({ system: [{ type: 'text', text: claude('/srv/gamma/api', '-srv-gamma') }], messages: [] }), 'gamma');

  // Codex: its turn metadata lists the git roots; the one holding the working directory counts.
  assert.is(stateScope(codexBody('/home/bob/beta-crm/services/api', codexMetadata('/home/bob/beta-crm'))), 'beta-crm');
  assert.is(stateScope(codexBody('/home/bob/beta-crm/services/api', codexMetadata('/home/bob/other/'))), 'api');
  assert.is(stateScope(codexBody('/home/bob/beta-crm/services/api', 'not json "workspaces"')), 'api');
  assert.equal(requestVisibility({ 'x-codex-turn-metadata': codexMetadata('/home/bob/beta-crm') }, codexBody('/home/bob/beta-crm/web')), { scope: 'beta-crm' }, 'the header, on a body without it');

  // The session-start hook: Claude Code's transcript lies in the root's project folder.
  const hook = { cwd: '/home/alice/src/alpha-shop/web', transcript_path: '/home/alice/.claude/projects/-home-alice-src-alpha-shop/32fe.jsonl' };
  assert.equal(sessionVisibility({}, hook), { scope: 'alpha-shop' });
  assert.equal(sessionVisibility({}, { cwd: '/home/alice/src/alpha-shop/web' }), { scope: 'web' });
});

test('x-engram-scope overrides the client signal; x-engram-user gives the user; unusable values are refused', () => {
  const body = fixture('codex/http-2-question.json');
  assert.equal(requestVisibility({}, body), { scope: 'proj' });
  assert.equal(requestVisibility({ 'x-engram-scope': ' shop ', 'x-engram-user': 'alice' }, body), { scope: 'shop', user: 'alice' });
  assert.equal(requestVisibility({ 'x-engram-user': 'bob' }, {}), { user: 'bob' });
  for (const bad of ['', '   ', 'a\u0001b', 'x'.repeat(201)]) {
    try {
      requestVisibility({ 'x-engram-user': bad }, {});
      assert.unreachable('refused');
    } catch (error) {
      assert.instance(error, EngramError);
      assert.is((error as EngramError).status, 400);
    }
  }
});

test.run();
