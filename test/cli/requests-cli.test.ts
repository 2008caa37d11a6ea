/**
 * `engram requests` and `engram requests show` as a user runs them: a real process against
 * a real Engram (SQLite file, HTTP, the scripted upstream). The proxy on this branch does
 * not yet write what an entry kept, rebuilt, the reasons beyond a chore and injection off,
 * the bar or the near misses (issue 32's inject step does), so most entries here are
 * appended to the real store (`running.deps.control.requests`) and read back through the
 * real API by the real CLI; one is a real proxied request.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RequestEntry } from '../../src/ports/index.js';
import { runCli } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { requestEntry } from '../support/request-entry.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  target: string[];
  reflection: string;
  real: string;
}
const test = suite<Context>('engram requests');

const T0 = Date.parse('2026-11-27T16:30:00.000Z');

function logged(agentId: string, n: number, overrides: Partial<RequestEntry> = {}): RequestEntry {
  return requestEntry({ id: `req_cli${String(n).padStart(19, '0')}`, agentId, at: T0 + n * 1000, conversationId: 'cnv_cli', ...overrides });
}

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { org: 'cli-requests', name: 'bot' });
  context.target = ['--org', 'cli-requests', '--agent', 'bot', '--url', context.engram.url, '--admin-token', ADMIN_TOKEN];
  const created = await context.engram.api('POST', `/v0/orgs/${context.agent.orgId}/agents/${context.agent.agentId}/reflections`, {
    content: 'Deploy billing-svc with make deploy-billing from the ops repository',
    kind: 'procedural',
  });
  assert.is(created.status, 201, JSON.stringify(created.json));
  context.reflection = created.json.id;
  const store = context.engram.running.deps.control.requests;
  const { agentId } = context.agent;
  await store.append(
    logged(agentId, 1, {
      injected: [{ reflectionId: context.reflection, relevance: 0.4312, why: 'named term "billing-svc"' }],
      kept: [{ reflectionId: 'ref_gone', turn: 2 }],
      rebuilt: { blocks: ['reflections', 'index'], changes: [{ reflectionId: 'ref_old', change: 'superseded', replacedBy: context.reflection }] },
      bar: 0.2,
      scope: 'alpha-shop',
    }),
  );
  await store.append(
    logged(agentId, 2, {
      conversationId: 'cnv_other',
      reason: 'under_bar',
      bar: 0.25,
      nearMisses: [{ reflectionId: context.reflection, relevance: 0.1849 }],
    }),
  );
  await store.append(logged(agentId, 3, { outcome: 'upstream_error', status: 502, reason: 'not_reached', upstreamMs: null }));
  // And one real request through the proxy.
  context.upstream.enqueue({ type: 'text', text: 'Hello back.' });
  const answer = await fetch(`${context.agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${context.agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello?' }] }),
  });
  assert.is(answer.status, 200);
  await answer.text();
  context.real = answer.headers.get('x-engram-request-id')!;
  await eventually(async () => ((await store.get(agentId, context.real)) ? true : undefined), 5_000, 'the real request logged');
});

test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

test('requests lists newest first: time, id, protocol, status and outcome, what was injected or why not, latency', async ({ target, real }) => {
  const listed = await runCli(['requests', ...target]);
  assert.is(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^TIME \(UTC\)\s+REQUEST\s+PROTOCOL\s+STATUS\s+INJECTED\s+LATENCY$/);
  assert.match(lines[1], new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+${real}\\s+chat-completions\\s+200 settled\\s+none: under the bar\\s+\\d+ ms$`), lines[1]);
  assert.match(lines[2], /^2026-11-27 16:30:03\s+req_cli0+3\s+messages\s+502 upstream_error\s+none: not reached\s+812 ms$/);
  assert.match(lines[3], /^2026-11-27 16:30:02\s+req_cli0+2\s+messages\s+200 settled\s+none: under the bar\s+812 ms$/);
  assert.match(lines[4], /^2026-11-27 16:30:01\s+req_cli0+1\s+messages\s+200 settled\s+1 injected, 1 kept\s+812 ms$/);
  assert.is(lines.length, 5);
});

test('requests filters (--conversation, --outcome, --nothing-injected), pages (--limit, --cursor), and --json is the API page', async ({ target }) => {
  const ids = async (...args: string[]) => {
    const run = await runCli(['requests', ...args, '--json', ...target]);
    assert.is(run.code, 0, run.stderr);
    return JSON.parse(run.stdout).data.map((entry: any) => entry.id.replace(/^req_cli0+/, ''));
  };
  assert.equal(await ids('--conversation', 'cnv_other'), ['2']);
  assert.equal(await ids('--outcome', 'upstream_error'), ['3']);
  assert.equal(await ids('--nothing-injected', '--conversation', 'cnv_cli'), ['3']);
  const first = await runCli(['requests', '--conversation', 'cnv_cli', '--limit', '1', ...target]);
  assert.is(first.code, 0, first.stderr);
  const cursor = /--cursor (\S+)$/m.exec(first.stdout)?.[1];
  assert.ok(cursor, first.stdout);
  assert.equal(await ids('--conversation', 'cnv_cli', '--cursor', cursor!), ['1']);
  const page = JSON.parse((await runCli(['requests', '--limit', '2', '--json', ...target])).stdout);
  assert.equal(Object.keys(page), ['data', 'next_cursor']);
  assert.type(page.next_cursor, 'string');

  const bad = await runCli(['requests', '--outcome', 'done', ...target]);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /outcome.*settled, upstream_error, interrupted, failed, aborted/);
  const none = await runCli(['requests', '--conversation', 'cnv_nowhere', ...target]);
  assert.is(none.stdout.trim(), 'No requests.');
});

test('requests show: each injected reflection with its text, relevance and why; kept with their turn; what was rebuilt and why', async ({ target, reflection }) => {
  const shown = await runCli(['requests', 'show', 'req_cli0000000000000000001', ...target]);
  assert.is(shown.code, 0, shown.stderr);
  assert.is(
    shown.stdout,
    [
      'req_cli0000000000000000001  2026-11-27 16:30:01 UTC  messages  200 settled',
      'conversation cnv_cli, project alpha-shop',
      'took 812 ms (upstream 790 ms)',
      '',
      "Injected (this agent's bar (min_score) was 0.20):",
      `  ${reflection}  relevance 0.43, by named term "billing-svc"`,
      '    Deploy billing-svc with make deploy-billing from the ops repository',
      '',
      'Kept from earlier turns:',
      '  ref_gone  from turn 2',
      '    (deleted since)',
      '',
      'Rebuilt: the relevant reflections and the root memory index, rewritten at their place, so this request missed the prompt cache from there on.',
      `  ref_old: superseded by ${reflection}, shown in its place`,
      '',
    ].join('\n'),
  );
});

test('requests show: when nothing was injected, why in words, the bar and the closest under it with their relevance', async ({ target, reflection }) => {
  const shown = await runCli(['requests', 'show', 'req_cli0000000000000000002', ...target]);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, "\nNothing injected: reflections were found, but none reached this agent's bar; this agent's bar (min_score) was 0.25.\n");
  assert.match(shown.stdout, `\nClosest under the bar:\n  ${reflection}  relevance 0.18\n    Deploy billing-svc with make deploy-billing from the ops repository\n`);
  const failed = await runCli(['requests', 'show', 'req_cli0000000000000000003', ...target]);
  assert.match(failed.stdout, 'took 812 ms, never sent upstream');
  assert.match(failed.stdout, '\nNothing injected: the request ended before memory was asked (a bad body, or a step that failed).\n');
  const json = JSON.parse((await runCli(['requests', 'show', 'req_cli0000000000000000002', '--json', ...target])).stdout);
  assert.equal([json.reason, json.bar, json.near_misses], ['under_bar', 0.25, [{ reflection_id: reflection, relevance: 0.1849 }]]);
  const missing = await runCli(['requests', 'show', 'req_nothing', ...target]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /No request `req_nothing`/);
});

test('--help documents both; engram help lists them', async () => {
  const help = await runCli(['requests', '--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /Usage: engram requests --org NAME_OR_ID --agent NAME_OR_ID \[--conversation ID\] \[--outcome OUTCOME\] \[--nothing-injected\]/);
  assert.match(help.stdout, /settled, upstream_error, interrupted, failed or aborted/);
  const show = await runCli(['requests', 'show', '--help']);
  assert.match(show.stdout, /Usage: engram requests show ID/);
  const all = await runCli(['help']);
  assert.match(all.stdout, /\n {2}requests {13}An agent's recent proxied requests/);
  assert.match(all.stdout, /\n {2}requests show {8}One request in words/);
});

test.run();
