/**
 * `engram reflections add|edit|export` and the history (`list --status`, `restore`) as a
 * user runs them: a real process against the real management plugin over SQLite.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../support/cli.js';
import { ADMIN, startManagementServer, type ManagementServer } from '../http/management-server.js';

const test = suite<{ server: ManagementServer; agent: any; target: string[]; base: string }>('engram reflections add, edit, export');

test.before(async (context) => {
  context.server = await startManagementServer();
  context.agent = await context.server.createAgent('cli-refl-org', 'bot');
  context.target = ['--org', 'cli-refl-org', '--agent', 'bot', '--url', context.server.url, '--admin-token', ADMIN];
  context.base = `/v0/orgs/${context.agent.org_id}/agents/${context.agent.id}`;
});

test.after(async ({ server }) => server.close());

test('add stores a memory by hand, redacted and tagged; a restatement and a missing kind are refused', async ({ server, target, base }) => {
  const added = await runCli(['reflections', 'add', 'Use pnpm, never npm; the registry token is ghp_abcdefghijklmnopqrstuvwxyz0123456789', '--kind', 'procedural', '--topic', 'tooling', '--tag', 'pnpm', ...target]);
  assert.is(added.code, 0, added.stderr);
  assert.match(added.stdout, /^Added reflection ref_\w+ \[procedural\] \(tooling\): Use pnpm, never npm/);
  assert.not.match(added.stdout, /ghp_abcdef/);
  const id = /ref_\w+/.exec(added.stdout)![0];
  const stored = await server.call('GET', `${base}/reflections/${id}`);
  assert.equal(stored.json.tags, ['pnpm', 'added-by-hand']);

  const again = await runCli(['reflections', 'add', 'use pnpm, never npm; the registry token is ghp_abcdefghijklmnopqrstuvwxyz0123456789', '--kind', 'procedural', ...target]);
  assert.is(again.code, 1);
  assert.match(again.stderr, new RegExp(`says the same \\(\`${id}\`\\)`));
  const noKind = await runCli(['reflections', 'add', 'Something', ...target]);
  assert.is(noKind.code, 2);
  assert.match(noKind.stderr, /--kind is required/);
});

test('add --scope --user, list --scope/--user (empty: everywhere, the agent’s own), search as a project sees it, edit --scope/--everywhere', async ({ server, target, base }) => {
  const add = (content: string, ...extra: string[]) => runCli(['reflections', 'add', content, '--kind', 'procedural', ...extra, ...target]);
  const scoped = await add('Ship the storefront with make ship-storefront', '--scope', 'alpha-shop');
  assert.is(scoped.code, 0, scoped.stderr);
  assert.match(scoped.stdout, /^Added reflection ref_\w+ \[procedural\] \(general\) in project alpha-shop: Ship the storefront/);
  const scopedId = /ref_\w+/.exec(scoped.stdout)![0];
  const personal = await add('Ship my own forks with make ship-fork', '--scope', 'alpha-shop', '--user', 'alice', '--json');
  assert.is(personal.code, 0, personal.stderr);
  const alices = JSON.parse(personal.stdout);
  assert.equal([alices.scope, alices.user], ['alpha-shop', 'alice']);
  const blank = await add('Ship nothing', '--scope', ' ');
  assert.is(blank.code, 1);
  assert.match(blank.stderr, /scope/);

  const project = await runCli(['reflections', 'list', '--scope', 'alpha-shop', ...target]);
  assert.is(project.code, 0, project.stderr);
  assert.match(project.stdout, /^ID\s+KIND\s+TOPIC\s+TAGS BY\s+SCOPE\s+USER\s+CONTENT/);
  assert.match(project.stdout, new RegExp(`${scopedId}\\s+procedural\\s+general\\s+-\\s+alpha-shop\\s+-\\s+Ship the storefront`));
  assert.match(project.stdout, new RegExp(`${alices.id}\\s+procedural\\s+general\\s+-\\s+alpha-shop\\s+alice\\s+Ship my own forks`));
  const onlyAlice = await runCli(['reflections', 'list', '--user', 'alice', '--json', ...target]);
  assert.equal(JSON.parse(onlyAlice.stdout).data.map((r: any) => r.id), [alices.id]);
  const agentsOwn = await runCli(['reflections', 'list', '--scope', 'alpha-shop', '--user', '', '--json', ...target]);
  assert.equal(JSON.parse(agentsOwn.stdout).data.map((r: any) => r.id), [scopedId], "--user '': the agent's own only");
  const everywhere = await runCli(['reflections', 'list', '--scope', '', '--json', ...target]);
  assert.ok(JSON.parse(everywhere.stdout).data.every((r: any) => r.scope === null), "--scope '': only those that hold everywhere");
  assert.not.match(everywhere.stdout, /ship-storefront/);

  const beta = await runCli(['reflections', 'search', 'ship the storefront', '--scope', 'beta-crm', ...target]);
  assert.is(beta.code, 0, beta.stderr);
  assert.not.match(beta.stdout, /ship-storefront/, 'a conversation of beta-crm never finds alpha-shop’s');
  assert.match((await runCli(['reflections', 'search', 'ship the storefront', '--scope', 'alpha-shop', ...target])).stdout, /ship-storefront/);

  const shown = await runCli(['reflections', 'show', alices.id, ...target]);
  assert.match(shown.stdout, /\nholds in project alpha-shop\nfor end user alice only\n/);
  const moved = await runCli(['reflections', 'edit', scopedId, '--scope', 'beta-crm', ...target]);
  assert.is(moved.code, 0, moved.stderr);
  assert.match(moved.stdout, /\nholds in project beta-crm\nthe agent's own, shared by all its users\n/);
  assert.is((await server.call('GET', `${base}/reflections/${scopedId}`)).json.scope, 'beta-crm');
  const widened = await runCli(['reflections', 'edit', scopedId, '--everywhere', ...target]);
  assert.is(widened.code, 0, widened.stderr);
  assert.match(widened.stdout, /\nholds everywhere \(every project\)\n/);
  assert.is((await server.call('GET', `${base}/reflections/${scopedId}`)).json.scope, null);
  const both = await runCli(['reflections', 'edit', scopedId, '--scope', 'x', '--everywhere', ...target]);
  assert.is(both.code, 2);
  assert.match(both.stderr, /--scope NAME or --everywhere/);
});

test('search prints each result\'s RELEVANCE, as the API gives it, under the bar it is read against; no other score', async ({ target }) => {
  const args = ['reflections', 'search', 'ship the storefront', '--scope', 'alpha-shop', ...target];
  const json = JSON.parse((await runCli([...args, '--json'])).stdout);
  assert.is(json.bar, 0.2);
  assert.ok(json.data.length >= 1);
  const shown = await runCli(args);
  assert.is(shown.code, 0, shown.stderr);
  const lines = shown.stdout.trimEnd().split('\n');
  assert.match(lines[0], "relevance reaches this agent's bar (min_score) of 0.20.");
  assert.match(lines[1], /^ID\s+KIND\s+TOPIC\s+TAGS BY\s+RELEVANCE\s+(SCOPE\s+USER\s+)?CONTENT$/);
  assert.not.match(shown.stdout, /SCORE/);
  for (const [i, result] of json.data.entries()) {
    assert.match(lines[i + 2], new RegExp(`^${result.id}\\s+\\S+\\s+\\S+\\s+\\S+\\s+${result.relevance.toFixed(2).replace('.', '\\.')}\\s`), lines[i + 2]);
  }
});

test('list and show say who wrote the tags, or that no one has yet', async ({ server, agent, target }) => {
  const [byTagging, untagged] = await server.seed(agent.id, [
    { kind: 'factual', content: 'Design tokens come from packages/ui/tokens.json', topic: 'ui', tags: ['brand colours', 'theme'], tagsBy: 'tagging' },
    { kind: 'factual', content: 'The storybook runs on port 6006', topic: 'ui' },
  ]);
  const shown = await runCli(['reflections', 'show', byTagging.id, ...target]);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /tags: brand colours, theme\ntags written by the tagging job\n/);
  assert.match((await runCli(['reflections', 'show', untagged.id, ...target])).stdout, /\nnot tagged yet: the tagging job gives it tags in the background\n/);
  const listed = await runCli(['reflections', 'list', '--kind', 'factual', ...target]);
  assert.is(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^ID\s+KIND\s+TOPIC\s+TAGS BY\s+CONTENT/);
  assert.match(listed.stdout, new RegExp(`${byTagging.id}\\s+factual\\s+ui\\s+tagging\\s+Design tokens`));
  assert.match(listed.stdout, new RegExp(`${untagged.id}\\s+factual\\s+ui\\s+-\\s+The storybook`));
});

test('edit changes a memory in place: same id, marked edited-by-hand', async ({ server, agent, target, base }) => {
  const [seeded] = await server.seed(agent.id, [{ kind: 'factual', content: 'Staging is on port 8443', topic: 'staging', origin: { conversation: 'conv_s' } }]);
  const edited = await runCli(['reflections', 'edit', seeded.id, '--content', 'Staging is on port 9443', '--json', ...target]);
  assert.is(edited.code, 0, edited.stderr);
  const json = JSON.parse(edited.stdout);
  assert.equal([json.id, json.content, json.origin.conversation_id], [seeded.id, 'Staging is on port 9443', 'conv_s']);
  assert.ok(json.tags.includes('edited-by-hand'));
  assert.is((await server.call('GET', `${base}/reflections/${seeded.id}`)).json.content, 'Staging is on port 9443');
  assert.is((await runCli(['reflections', 'edit', seeded.id, ...target])).code, 2, 'nothing to change');
});

test('list --status superseded shows the history and what replaced each; show says so; restore makes one current again', async ({ server, agent, target }) => {
  const [old, current] = await server.seed(agent.id, [
    { kind: 'factual', content: 'Deploy to staging with ./ops/ship-legacy.sh', topic: 'deploy' },
    { kind: 'factual', content: 'Deploy to staging with ./deploy/run.sh --env staging', topic: 'deploy' },
  ]);
  await server.deps.reflections.update(agent.id, old.id, { supersededBy: current.id });

  const plain = await runCli(['reflections', 'list', ...target]);
  assert.is(plain.code, 0, plain.stderr);
  assert.not.match(plain.stdout, old.id, 'history is left out by default');
  const history = await runCli(['reflections', 'list', '--status', 'superseded', ...target]);
  assert.is(history.code, 0, history.stderr);
  assert.match(history.stdout, /REPLACED BY/);
  const row = history.stdout.split('\n').find((line) => line.startsWith(old.id));
  assert.ok(row?.includes(current.id), history.stdout);
  assert.not.match(history.stdout, `${current.id}  factual`, 'only the superseded ones');
  const shown = await runCli(['reflections', 'show', old.id, ...target]);
  assert.match(shown.stdout, `superseded by ${current.id}`);
  assert.match(shown.stdout, `engram reflections restore ${old.id}`);
  assert.is((await runCli(['reflections', 'list', '--status', 'old', ...target])).code, 1, 'an unknown status is refused');

  const restored = await runCli(['reflections', 'restore', old.id, ...target]);
  assert.is(restored.code, 0, restored.stderr);
  assert.match(restored.stdout, `Restored reflection ${old.id}: current again.`);
  const after = await server.deps.reflections.get(agent.id, old.id);
  assert.equal([after?.supersededBy, after?.tags.includes('edited-by-hand')], [undefined, true]);
  assert.match((await runCli(['reflections', 'list', ...target])).stdout, old.id);
  assert.is((await runCli(['reflections', 'restore', ...target])).code, 2, 'restore needs an id');
});

test('export writes every reflection as JSON lines (stdout or a private file) or one JSON document', async ({ server, agent, target }) => {
  const count = await server.deps.reflections.count(agent.id);
  const lines = await runCli(['reflections', 'export', ...target]);
  assert.is(lines.code, 0, lines.stderr);
  const parsed = lines.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
  assert.is(parsed.length, count);
  assert.ok(parsed.every((r) => r.agent_id === agent.id));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-export-'));
  try {
    const file = path.join(dir, 'reflections.jsonl');
    const written = await runCli(['reflections', 'export', '--out', file, ...target]);
    assert.is(written.code, 0, written.stderr);
    assert.is(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(file, 'utf8'), lines.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const json = await runCli(['reflections', 'export', '--format', 'json', ...target]);
  assert.equal(JSON.parse(json.stdout).data.map((r: any) => r.id), parsed.map((r) => r.id));
  assert.is((await runCli(['reflections', 'export', '--format', 'csv', ...target])).code, 2);
  const missing = await runCli(['reflections', 'export', '--org', 'cli-refl-org', '--agent', 'nobody', '--url', server.url, '--admin-token', ADMIN]);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /No agent `nobody`/);
});

test.run();
