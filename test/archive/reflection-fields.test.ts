/**
 * What an archive keeps of a reflection beyond its text: the supersession and who wrote
 * its tags survive export and import, and an archive from before them (version 1) gets
 * the tag authors an upgraded SQLite file gets. In-process, on real SQLite files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteAdapters, type SqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { exportArchive } from '../../src/archive/export-archive.js';
import { ARCHIVE_VERSION, encodeVector } from '../../src/archive/format.js';
import { importArchive } from '../../src/archive/import-archive.js';
import { Control } from '../../src/control/control.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent, type Reflection } from '../../src/domain/types.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';
import { reflection } from '../contracts/reflection-store.contract.js';

interface Deployment {
  adapters: SqliteAdapters;
  control: Control;
  vault: Vault;
}

interface Context {
  dir: string;
  key: Buffer;
  opened: Deployment[];
}

const test = suite<Context>('archive: supersession and tag authors');

test.before.each((context) => {
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-archive-fields-'));
  context.key = randomBytes(32);
  context.opened = [];
});

test.after.each(async (context) => {
  for (const { adapters } of context.opened) await adapters.close();
  rmSync(context.dir, { recursive: true, force: true });
});

function open(context: Context, name: string): Deployment {
  const adapters = openSqliteAdapters(path.join(context.dir, `${name}.db`));
  const vault = new Vault(new SecretBox(context.key));
  const control = new Control(adapters.control, { vault, now: () => 1_700_000_000_000 });
  const deployment = { adapters, control, vault };
  context.opened.push(deployment);
  return deployment;
}

async function createAgent(control: Control): Promise<Agent> {
  const org = await control.createOrg('acme');
  return control.createAgent({
    orgId: org.id,
    name: 'coder',
    upstream: { baseUrl: 'http://127.0.0.1:9', headers: {} },
    memory: DEFAULT_MEMORY_SETTINGS,
    secrets: { upstreamApiKey: 'sk-upstream-test-key-0123456789' },
  });
}

async function* linesOf(lines: readonly string[]): AsyncGenerator<string> {
  yield* lines;
}

const sources = ({ control, adapters, vault }: Deployment) => ({
  control,
  reflections: adapters.reflections,
  accounts: adapters.control.accounts,
  vault,
  engines: { control: 'sqlite', reflections: 'sqlite' },
});
const targets = ({ control, adapters, vault }: Deployment) => ({ control, reflections: adapters.reflections, accounts: adapters.control.accounts, vault });

const byId = (reflections: Reflection[]) => [...reflections].sort((a, b) => (a.id < b.id ? -1 : 1));

test('superseded reflections and tag authors survive export and import', async (context) => {
  const source = open(context, 'source');
  const agent = await createAgent(source.control);
  await source.adapters.reflections.upsert([
    reflection(agent.id, 'old', 'The queue is rabbitmq', 0, { tags: ['queue'], tagsBy: 'extraction', supersededBy: 'new', supersededAt: 5_000 }),
    reflection(agent.id, 'new', 'The queue is nats', 1, { tags: ['queue', 'added-by-hand'], tagsBy: 'person' }),
    reflection(agent.id, 'bare', 'Lunch is at noon', 2),
    reflection(agent.id, 'alices', 'My shipping address is 12 Rose Lane', 3, { user: 'alice' }),
    reflection(agent.id, 'scoped', 'Run the tests with make test-alpha-shop', 4, { scope: 'alpha-shop' }),
  ]);
  const lines: string[] = [];
  await exportArchive(sources(source), (line) => {
    lines.push(line);
  });
  assert.is(JSON.parse(lines[0]).version, ARCHIVE_VERSION);
  assert.is(ARCHIVE_VERSION, 4);

  const target = open(context, 'target');
  const result = await importArchive(targets(target), () => linesOf(lines));
  assert.is(result.imported.reflections, 5);
  const before = byId(await source.adapters.reflections.list(agent.id));
  const after = byId(await target.adapters.reflections.list(agent.id));
  assert.equal(after, before, 'every field, the new ones included');
  assert.equal(after.map((r) => [r.id, r.scope ?? null, r.user ?? null]), [
    ['alices', null, 'alice'],
    ['bare', null, null],
    ['new', null, null],
    ['old', null, null],
    ['scoped', 'alpha-shop', null],
  ], 'scopes and users survive the move');
  const bobSees = await target.adapters.reflections.keywords(agent.id, { text: 'shipping address', limit: 5, visible: { user: 'bob' } });
  assert.equal(bobSees, [], 'still Alice’s after the move');
  assert.equal(after.filter((r) => ['bare', 'new', 'old'].includes(r.id)).map((r) => [r.id, r.supersededBy ?? null, r.supersededAt ?? null, r.tagsBy ?? null]), [
    ['bare', null, null, null],
    ['new', null, null, 'person'],
    ['old', 'new', 5_000, 'extraction'],
  ]);
  const found = await target.adapters.reflections.keywords(agent.id, { text: 'queue', limit: 5 });
  assert.equal(found.map((m) => m.id), ['new'], 'still history after the move: never searched');
});

test('a reflection whose user is not a name is refused, never imported as the agent’s own', async (context) => {
  const source = open(context, 'bad-user-source');
  const agent = await createAgent(source.control);
  await source.adapters.reflections.upsert([reflection(agent.id, 'alices', 'My shipping address is 12 Rose Lane', 0, { user: 'alice' })]);
  const lines: string[] = [];
  await exportArchive(sources(source), (line) => {
    lines.push(line);
  });
  const tampered = lines.map((line) => (line.includes('"alices"') ? line.replace('"user":"alice"', '"user":42') : line));
  assert.ok(tampered.some((line) => line.includes('"user":42')));
  const target = open(context, 'bad-user-target');
  let refused: unknown;
  try {
    await importArchive(targets(target), () => linesOf(tampered));
  } catch (error) {
    refused = error;
  }
  assert.match(String(refused), /unusable `user`/);
  assert.equal(await target.adapters.reflections.list(agent.id), [], 'nothing of it imported');
});

test('a version 1 archive gets the tag authors SQLite migration 12 presumes', async (context) => {
  const source = open(context, 'v1-source');
  const agent = await createAgent(source.control);
  const lines: string[] = [];
  await exportArchive(sources(source), (line) => {
    lines.push(line);
  });
  // The header and the org and agent records as written; reflections as version 1 wrote them.
  const header = { ...JSON.parse(lines[0]), version: 1 };
  const old = (id: string, tags: string[], source: Reflection['source'], axis: number): string => {
    const { vector, ...r } = reflection(agent.id, id, `content of ${id}`, axis, { tags, source });
    return JSON.stringify({ type: 'reflection', reflection: r, vector: encodeVector(vector) });
  };
  const archive = [
    JSON.stringify(header),
    ...lines.slice(1),
    old('learnt', ['deploys'], 'conversation', 0),
    old('remembered', ['lint'], 'mcp', 1),
    old('by-hand', ['pnpm', 'edited-by-hand'], 'conversation', 2),
    old('marker-only', ['added-by-hand'], 'mcp', 3),
    old('untagged', [], 'transcript', 4),
  ];
  const target = open(context, 'v1-target');
  await importArchive(targets(target), () => linesOf(archive));
  const imported = byId(await target.adapters.reflections.list(agent.id));
  assert.equal(imported.map((r) => [r.id, r.tagsBy ?? null]), [
    ['by-hand', 'person'],
    ['learnt', 'extraction'],
    ['marker-only', null],
    ['remembered', 'agent'],
    ['untagged', null],
  ]);
  assert.ok(imported.every((r) => r.supersededBy === undefined), 'everything in an old archive is current');
});

test.run();
