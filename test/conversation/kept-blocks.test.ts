/**
 * A kept block is re-applied only while it is true (`conversation/kept-blocks.ts`, DESIGN
 * section 6), checked against the reflections as the real SQLite store holds them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkKeptBlocks, type KeptCheckContext } from '../../src/conversation/kept-blocks.js';
import type { Insertion } from '../../src/domain/conversation-state.js';
import type { Reflection } from '../../src/domain/types.js';
import { renderReflectionsBlock } from '../../src/memory/engram-blocks.js';
import { rootIndexListing } from '../../src/memory/root-index.js';
import { reflection } from '../memory/fixtures.js';
import { openWorld, type World } from '../memory/sqlite-world.js';

const test = suite<{ world: World }>('kept blocks');
test.before.each(async (context) => {
  context.world = await openWorld();
});
test.after.each(async ({ world }) => {
  await world.dispose();
});

async function store(world: World, ...reflections: Reflection[]): Promise<Reflection[]> {
  const stored = reflections.map((r) => ({ ...r, agentId: world.agent.id }));
  await world.reflections.upsert(stored.map((r) => ({ ...r, vector: new Float32Array(256).fill(1 / 16) })));
  return stored;
}

/** A relevant-reflections block added on turn `turn` to message `index`. */
const block = (index: number, turn: number, reflections: Reflection[]): Insertion => ({
  index,
  messageHash: `m${index}`,
  block: renderReflectionsBlock(reflections),
  kind: 'reflections',
  reflections: reflections.map((r) => r.id),
  turn,
});

function context(world: World, overrides: Partial<KeptCheckContext> = {}): KeptCheckContext {
  return {
    agentId: world.agent.id,
    visible: {},
    reflections: world.reflections,
    held: new Set(),
    rebuildIndex: async () => {
      throw new Error('no index block here');
    },
    ...overrides,
  };
}

const db7 = reflection({ id: 'ref_db7', content: 'The staging database is db-stage-7.internal.', topic: 'staging' });
const db9 = reflection({ id: 'ref_db9', content: 'The staging database moved to db-stage-9.internal.', topic: 'staging' });
const ci = reflection({ id: 'ref_ci', kind: 'procedural', content: 'Run make lint before pushing to CI.', topic: 'ci' });
const reminder: Insertion = { index: 5, messageHash: 'm5', block: '<engram-reminder>use recall</engram-reminder>', kind: 'reminder' };

test('blocks whose reflections are unchanged go on byte for byte, each reflection kept with its turn', async ({ world }) => {
  await store(world, db7, ci);
  const insertions = [block(1, 1, [db7]), reminder, block(3, 2, [ci])];
  const checked = await checkKeptBlocks(insertions, context(world));
  assert.equal(checked.insertions, insertions);
  assert.equal(checked.kept, [
    { reflectionId: db7.id, turn: 1 },
    { reflectionId: ci.id, turn: 2 },
  ]);
  assert.is(checked.rebuilt, null);
  assert.equal(checked.added, []);
});

test('a superseded reflection: its replacement takes its place in the same block', async ({ world }) => {
  await store(world, db7, db9, ci);
  await world.reflections.update(world.agent.id, db7.id, { supersededBy: db9.id, supersededAt: 2_000 });
  const checked = await checkKeptBlocks([block(1, 1, [db7, ci])], context(world));
  const [rebuilt] = checked.insertions;
  assert.is(rebuilt.index, 1);
  assert.is(rebuilt.messageHash, 'm1');
  assert.is(rebuilt.block, renderReflectionsBlock([await world.reflections.get(world.agent.id, db9.id) as Reflection, ci]));
  assert.equal(rebuilt.reflections, [db9.id, ci.id]);
  assert.equal(checked.rebuilt, { blocks: ['reflections'], changes: [{ reflectionId: db7.id, change: 'superseded', replacedBy: db9.id }] });
  assert.equal(checked.kept, [{ reflectionId: ci.id, turn: 1 }]);
  assert.equal(checked.added, [db9.id]);
});

test('a chain of replacements ends at the current one; a replacement the conversation holds is not shown twice', async ({ world }) => {
  const db11 = reflection({ id: 'ref_db11', content: 'The staging database is now db-stage-11.internal.', topic: 'staging' });
  await store(world, db7, db9, db11, ci);
  await world.reflections.update(world.agent.id, db7.id, { supersededBy: db9.id, supersededAt: 2_000 });
  await world.reflections.update(world.agent.id, db9.id, { supersededBy: db11.id, supersededAt: 3_000 });
  const chained = await checkKeptBlocks([block(1, 1, [db7])], context(world));
  assert.equal(chained.insertions.map((i) => i.reflections), [[db11.id]]);
  assert.equal(chained.rebuilt?.changes, [{ reflectionId: db7.id, change: 'superseded', replacedBy: db11.id }]);

  const held = await checkKeptBlocks([block(1, 1, [db7, ci])], context(world, { held: new Set([db11.id]) }));
  assert.equal(held.insertions.map((i) => i.reflections), [[ci.id]], 'the conversation has the replacement already');
  assert.equal(held.added, []);
});

test('deleted, out of sight or edited: dropped or shown with its new text; an emptied block is left out', async ({ world }) => {
  const scoped = reflection({ id: 'ref_scoped', content: 'Alpha deploys with make ship-alpha.', topic: 'deploy' });
  await store(world, db7, ci, scoped);
  await world.reflections.delete(world.agent.id, db7.id);
  await world.reflections.update(world.agent.id, scoped.id, { scope: 'alpha-shop' });
  await world.reflections.update(world.agent.id, ci.id, { content: 'Run make lint and make test before pushing to CI.' });
  const checked = await checkKeptBlocks([block(1, 1, [db7]), block(3, 2, [scoped, ci])], context(world, { visible: { scope: 'beta-crm' } }));
  assert.is(checked.insertions.length, 1, 'the block of the deleted reflection is gone');
  assert.is(checked.insertions[0].index, 3);
  assert.match(checked.insertions[0].block, 'make lint and make test');
  assert.not.match(checked.insertions[0].block, 'ship-alpha');
  assert.equal(checked.rebuilt?.changes, [
    { reflectionId: db7.id, change: 'deleted' },
    { reflectionId: scoped.id, change: 'out_of_scope' },
    { reflectionId: ci.id, change: 'edited' },
  ]);
  assert.equal(checked.kept, [{ reflectionId: ci.id, turn: 2 }], 'an edited one is still the one that was kept');
});

test('a block written before blocks named their reflections cannot be checked: it is not re-applied', async ({ world }) => {
  await store(world, db7);
  const { reflections: _ids, turn: _turn, ...old } = block(1, 1, [db7]);
  const checked = await checkKeptBlocks([old, reminder], context(world));
  assert.equal(checked.insertions, [reminder]);
  assert.equal(checked.rebuilt, { blocks: ['reflections'], changes: [] });
});

test('the index block is rebuilt in place when a reflection it lists changed, left as it is otherwise', async ({ world }) => {
  const [a, b] = await store(world, db7, ci);
  const listing = rootIndexListing([a, b]);
  const index: Insertion = { index: 1, messageHash: 'm1', block: `<engram-memory-index>\n${listing.markdown}</engram-memory-index>`, kind: 'index', reflections: listing.listed, turn: 1 };
  let rebuilds = 0;
  const rebuildIndex = async (stale: Insertion) => {
    rebuilds++;
    return { ...stale, block: '<engram-memory-index>rebuilt</engram-memory-index>', reflections: [ci.id] };
  };
  const untouched = await checkKeptBlocks([index], context(world, { rebuildIndex }));
  assert.equal(untouched.insertions, [index]);
  assert.is(rebuilds, 0);
  assert.equal(untouched.kept, [], 'the index is no relevant-reflections block');

  await world.reflections.delete(world.agent.id, db7.id);
  const checked = await checkKeptBlocks([index], context(world, { rebuildIndex }));
  assert.is(rebuilds, 1);
  assert.equal(checked.insertions.map((i) => [i.index, i.block]), [[1, '<engram-memory-index>rebuilt</engram-memory-index>']]);
  assert.equal(checked.rebuilt, { blocks: ['index'], changes: [{ reflectionId: db7.id, change: 'deleted' }] });
  const gone = await checkKeptBlocks([index], context(world, { rebuildIndex: async () => undefined }));
  assert.equal(gone.insertions, [], 'no index can be given any more (the tools are gone): it is left out');
});

test.run();
