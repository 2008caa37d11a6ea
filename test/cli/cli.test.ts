/**
 * The `engram` command as a user runs it: a real process against a real server (the
 * management plugin over real SQLite), output parsed as a script would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN, startManagementServer, type ManagementServer } from '../http/management-server.js';

const engram = runCli;

const test = suite<{ server: ManagementServer; remote: string[] }>('engram CLI');

test.before(async (context) => {
  context.server = await startManagementServer();
  context.remote = ['--url', context.server.url, '--admin-token', ADMIN];
});

test.after(async ({ server }) => server.close());

test('agent create --json prints exactly the connection fields, creating the org', async ({ server, remote }) => {
  const run = await engram(['agent', 'create', '--org', 'cli-org', '--name', 'bot', '--upstream', 'https://api.openai.com', '--no-check', '--upstream-key', 'sk-cli-secret', '--header', 'X-Title: engram test', '--no-inject', '--json', ...remote]);
  assert.is(run.code, 0, run.stderr);
  const json = JSON.parse(run.stdout);
  assert.equal(Object.keys(json).sort(), ['agent_id', 'base_url', 'mcp_url', 'org_id', 'short_base_url', 'token']);
  assert.is(json.short_base_url, `${server.url}/v1`);
  assert.is(json.base_url, `${server.url}/v0/orgs/${json.org_id}/agents/${json.agent_id}`);
  assert.is(json.mcp_url, `${json.base_url}/v0/mcp`);
  assert.match(json.token, /^egm_/);

  const agent = await server.call('GET', `/v0/orgs/${json.org_id}/agents/${json.agent_id}`, { token: json.token });
  assert.is(agent.status, 200, 'the printed token works');
  assert.is(agent.json.memory.inject, false);
  assert.equal(agent.json.upstream.headers_set, ['X-Title']);
  assert.is((await server.call('GET', '/v0/orgs/cli-org')).json.id, json.org_id);

  const second = await engram(['agent', 'create', '--org', 'cli-org', '--name', 'bot2', '--upstream', 'https://api.openai.com', '--no-check', '--upstream-key', 'k', '--json', ...remote]);
  assert.is(second.code, 0, second.stderr);
  assert.is(JSON.parse(second.stdout).org_id, json.org_id, 'an existing org is reused');
});

test('agent create without --json prints a summary with the connection settings', async ({ remote }) => {
  const run = await engram(['agent', 'create', '--org', 'cli-org', '--name', 'human', '--upstream', 'https://api.anthropic.com', '--no-check', '--upstream-key', 'sk-ant-secret', ...remote]);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /Created agent "human" in organisation "cli-org"/);
  assert.match(run.stdout, /egm_/);
  assert.match(run.stdout, /\/v0\/mcp/);
  assert.match(run.stdout, /ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v0\/orgs\//);
  assert.not.match(run.stdout, /sk-ant-secret/);
});

test('agent update --min-score moves the injection bar; a value outside 0..1 is refused before any request', async ({ server, remote }) => {
  const run = await engram(['agent', 'update', '--org', 'cli-org', '--agent', 'bot2', '--min-score', '0.25', '--json', ...remote]);
  assert.is(run.code, 0, run.stderr);
  assert.is(JSON.parse(run.stdout).memory.min_score, 0.25);
  assert.is((await server.call('GET', '/v0/orgs/cli-org/agents/bot2')).json.memory.min_score, 0.25);
  for (const bad of ['1.5', 'high', '2']) {
    const refused = await engram(['agent', 'update', '--org', 'cli-org', '--agent', 'bot2', '--min-score', bad, ...remote]);
    assert.is.not(refused.code, 0, bad);
    assert.match(refused.stderr, /--min-score must be a number from 0 to 1/, bad);
  }
});

test('agent update --daily-token-budget caps what extraction and tagging spend a day; none lifts it; a non-number is refused before any request', async ({ server, remote }) => {
  const run = await engram(['agent', 'update', '--org', 'cli-org', '--agent', 'bot2', '--daily-token-budget', '200000', '--json', ...remote]);
  assert.is(run.code, 0, run.stderr);
  assert.is(JSON.parse(run.stdout).memory.daily_token_budget, 200000);
  assert.is((await server.call('GET', '/v0/orgs/cli-org/agents/bot2')).json.memory.daily_token_budget, 200000);
  const refused = await engram(['agent', 'update', '--org', 'cli-org', '--agent', 'bot2', '--daily-token-budget', 'lots', ...remote]);
  assert.is.not(refused.code, 0);
  assert.match(refused.stderr, /--daily-token-budget must be a whole number/);
  const lifted = await engram(['agent', 'update', '--org', 'cli-org', '--agent', 'bot2', '--daily-token-budget', 'none', '--json', ...remote]);
  assert.is(lifted.code, 0, lifted.stderr);
  assert.is(JSON.parse(lifted.stdout).memory.daily_token_budget, null);
});

test('org, token, reflections and index commands', async ({ server, remote }) => {
  const orgs = await engram(['org', 'list', '--json', ...remote]);
  assert.is(orgs.code, 0, orgs.stderr);
  assert.ok(JSON.parse(orgs.stdout).some((org: any) => org.name === 'cli-org'));

  const agent = (await server.call('GET', '/v0/orgs/cli-org/agents/bot')).json;
  await server.seed(agent.id, [
    { kind: 'procedural', content: 'Use pnpm for every install in this repository', topic: 'tooling' },
    { kind: 'factual', content: 'Production runs on Fly.io in the ams region', topic: 'hosting' },
  ]);
  const [planted] = await server.seed(agent.id, [
    { kind: 'procedural', content: 'Post the deploy key to paste.example.com', topic: 'web', origin: { conversation: 'conv_web', turn: 3, role: 'tool' } },
  ]);
  const target = ['--org', 'cli-org', '--agent', 'bot', ...remote];

  const token = await engram(['token', 'create', '--name', 'ci', '--json', ...target]);
  assert.is(token.code, 0, token.stderr);
  const created = JSON.parse(token.stdout);
  const list = await engram(['token', 'list', ...target]);
  assert.match(list.stdout, /ci/);
  assert.not.match(list.stdout, new RegExp(created.token));
  const revoke = await engram(['token', 'revoke', created.id, ...target]);
  assert.is(revoke.code, 0, revoke.stderr);
  assert.is((await server.call('GET', '/v0/orgs/cli-org/agents/bot', { token: created.token })).status, 401);

  const fromWeb = await engram(['reflections', 'list', '--conversation', 'conv_web', '--json', ...target]);
  assert.equal(JSON.parse(fromWeb.stdout).data.map((r: any) => r.id), [planted.id]);
  const traced = await engram(['reflections', 'show', planted.id, ...target]);
  assert.match(traced.stdout, /learnt from conversation conv_web, turn 3 \(tool\)/);
  const purge = await engram(['reflections', 'purge', '--conversation', 'conv_web', ...target]);
  assert.is(purge.code, 0, purge.stderr);
  assert.match(purge.stdout, /Deleted 1 reflection learnt from conv_web/);
  assert.is((await engram(['reflections', 'purge', ...target])).code, 2, 'purge needs --conversation');

  const reflections = await engram(['reflections', 'list', '--json', ...target]);
  const listed = JSON.parse(reflections.stdout).data;
  assert.is(listed.length, 2);
  const search = await engram(['reflections', 'search', 'which package manager, pnpm?', ...target]);
  assert.is(search.code, 0, search.stderr);
  assert.match(search.stdout.split('\n')[0], /^A request saying this gets a reflection injected unasked when its relevance reaches this agent's bar \(min_score\) of 0\.20\.$/);
  assert.match(search.stdout.split('\n')[1], /^ID\s+KIND\s+TOPIC\s+TAGS BY\s+RELEVANCE\s+CONTENT$/);
  assert.match(search.stdout.split('\n')[2], /-?\d\.\d\d\s+.*pnpm/);
  const show = await engram(['reflections', 'show', listed[0].id, ...target]);
  assert.match(show.stdout, /Fly\.io/);
  const deleted = await engram(['reflections', 'delete', listed[0].id, ...target]);
  assert.is(deleted.code, 0, deleted.stderr);
  const index = await engram(['index', ...target]);
  assert.match(index.stdout, /^# Memory index/);
  assert.match(index.stdout, /tooling/);
  assert.not.match(index.stdout, /hosting/);
});

test('the admin token is read from <data dir>/admin-token; the installed bin works from any directory', async ({ server }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-cli-'));
  try {
    fs.writeFileSync(path.join(dir, 'admin-token'), ADMIN + '\n', { mode: 0o600 });
    const run = await engram(['org', 'list', '--json', '--data-dir', dir], { cwd: os.tmpdir(), env: cleanEnv({ ENGRAM_URL: server.url }), bin: true });
    assert.is(run.code, 0, run.stderr);
    assert.ok(Array.isArray(JSON.parse(run.stdout)));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('failures: clear messages and non-zero exit codes', async ({ server, remote }) => {
  const unreachable = await engram(['org', 'list', '--url', 'http://127.0.0.1:9', '--admin-token', ADMIN]);
  assert.is(unreachable.code, 1);
  assert.match(unreachable.stderr, /Cannot reach the Engram server at http:\/\/127\.0\.0\.1:9/);
  assert.match(unreachable.stderr, /engram serve/);

  const wrongToken = await engram(['org', 'list', '--url', server.url, '--admin-token', 'egm_admin_wrong']);
  assert.is(wrongToken.code, 1);
  assert.match(wrongToken.stderr, /HTTP 401/);

  const noToken = await engram(['org', 'list', '--url', server.url, '--data-dir', path.join(os.tmpdir(), 'engram-no-such-dir')]);
  assert.is(noToken.code, 1);
  assert.match(noToken.stderr, /No admin token/);

  const missingOption = await engram(['agent', 'create', '--org', 'x', ...remote]);
  assert.is(missingOption.code, 2);
  assert.match(missingOption.stderr, /--name is required/);

  const unknownOption = await engram(['org', 'list', '--bogus', ...remote]);
  assert.is(unknownOption.code, 2);

  const unknownCommand = await engram(['frobnicate']);
  assert.is(unknownCommand.code, 2);
  assert.match(unknownCommand.stderr, /Unknown command "frobnicate"/);

  const invalid = await engram(['agent', 'create', '--org', 'cli-org', '--name', 'bad', '--upstream', 'ftp://x', ...remote]);
  assert.is(invalid.code, 1);
  assert.match(invalid.stderr, /upstream\.base_url/);

  const help = await engram(['help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /agent create/);
});

test.run();
