/**
 * The writer's side of a changed fact (DESIGN section 5): a proposal's `supersedes` marks
 * the reflections it replaces as history, within the rules of `WriteOptions.supersedable`,
 * on the real SQLite store.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openWorld, type World } from './sqlite-world.js';
import { EDITED_BY_HAND_TAG } from '../../src/domain/reflection-text.js';
import type { Reflection } from '../../src/domain/types.js';

const LEGACY = 'Deploy to staging with ./ops/ship-legacy.sh.';
const RUNNER = 'Deploy to staging with ./deploy/run.sh --env staging.';

async function seed(world: World, contents: string[]): Promise<Reflection[]> {
  const { stored } = await world.writer.write(world.agent.id, contents.map((content) => ({ kind: 'factual', content, topic: 'deployment' })), 'conversation');
  assert.is(stored.length, contents.length);
  return stored;
}

const get = (world: World, id: string) => world.reflections.get(world.agent.id, id);

test('only reflections shown, current and not by hand are superseded, by the new one; the counts say so', async () => {
  const world = await openWorld();
  try {
    const [legacy, hidden, handEdited, history, replacer] = await seed(world, [
      LEGACY,
      'Staging deploys need the VPN.',
      'Staging deploys are announced in #deploys.',
      'Deploy to staging from the release branch.',
      'Deploy to staging from main.',
    ]);
    await world.reflections.update(world.agent.id, handEdited.id, { tags: [EDITED_BY_HAND_TAG] });
    await world.reflections.update(world.agent.id, history.id, { supersededBy: replacer.id, supersededAt: 1 });
    world.clock.now += 60_000;

    const shown = new Set([legacy.id, handEdited.id, history.id]);
    const result = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: RUNNER, topic: 'deployment', supersedes: [legacy.id, hidden.id, handEdited.id, history.id, 'ref_000000000000000000000000'] }],
      'conversation',
      { supersedable: shown },
    );
    const [runner] = result.stored;
    assert.ok(runner);
    assert.equal([result.superseded, result.restored], [1, 0]);

    const after = await get(world, legacy.id);
    assert.equal([after?.supersededBy, after?.supersededAt], [runner.id, world.clock.now]);
    assert.is((await get(world, hidden.id))?.supersededBy, undefined, 'not shown to the model: left alone');
    assert.is((await get(world, handEdited.id))?.supersededBy, undefined, 'hand edits win over extraction');
    assert.equal([(await get(world, history.id))?.supersededBy, (await get(world, history.id))?.supersededAt], [replacer.id, 1], 'history keeps its replacer');
    assert.is(runner.supersededBy, undefined);

    const index = (await world.control.indexes.get(world.agent.id)) ?? '';
    assert.ok(index.includes('deploy/run.sh') && !index.includes('ship-legacy'), index);
    const found = await world.reflections.keywords(world.agent.id, { text: 'ship-legacy staging deploy', limit: 10 });
    assert.not.ok(found.some((match) => match.id === legacy.id), 'a superseded reflection is never found');
  } finally {
    await world.dispose();
  }
});

test('a restatement supersedes what it names in place of the stored one, never itself', async () => {
  const world = await openWorld();
  try {
    const [legacy, runner] = await seed(world, [LEGACY, RUNNER]);
    const shown = new Set([legacy.id, runner.id]);
    // The model records the current fact again, word for word, and names both.
    const exact = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: RUNNER, topic: 'deployment', supersedes: [runner.id, legacy.id] }],
      'conversation',
      { supersedable: shown },
    );
    assert.equal([exact.stored.length, exact.duplicates, exact.superseded], [0, 1, 1]);
    assert.is((await get(world, runner.id))?.supersededBy, undefined, 'a reflection restated unchanged stays one reflection');
    assert.is((await get(world, legacy.id))?.supersededBy, runner.id);
    assert.is(await world.reflections.count(world.agent.id), 2);
  } finally {
    await world.dispose();
  }
});

test('a near restatement supersedes by the stored reflection it restates; a reflection restated in the same answer is not superseded', async () => {
  const world = await openWorld();
  try {
    const [legacy, runner, vpn] = await seed(world, [LEGACY, RUNNER, 'Staging deploys need the VPN.']);
    const shown = new Set([legacy.id, runner.id, vpn.id]);
    const result = await world.writer.write(
      world.agent.id,
      [
        { kind: 'factual', content: 'deploy to staging with ./deploy/run.sh --env staging', topic: 'deployment', supersedes: [legacy.id, vpn.id] },
        { kind: 'factual', content: 'Staging deploys need the VPN.', topic: 'deployment', supersedes: [] },
      ],
      'conversation',
      { supersedable: shown },
    );
    assert.equal([result.stored.length, result.duplicates, result.superseded], [0, 2, 1]);
    assert.is((await get(world, legacy.id))?.supersededBy, runner.id);
    assert.is((await get(world, vpn.id))?.supersededBy, undefined, 'the same answer says it still holds');
  } finally {
    await world.dispose();
  }
});

test('without supersedable (remember, hand additions, uploads) a proposal supersedes nothing; nor does one left out by the limit', async () => {
  const world = await openWorld({ maxReflections: 2 });
  try {
    const [legacy] = await seed(world, [LEGACY]);
    const remembered = await world.writer.write(world.agent.id, [{ kind: 'factual', content: RUNNER, topic: 'deployment', supersedes: [legacy.id] }], 'mcp');
    assert.equal([remembered.stored.length, remembered.superseded], [1, 0]);
    assert.is((await get(world, legacy.id))?.supersededBy, undefined);

    const full = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: 'Deploy to staging with make stage.', topic: 'deployment', supersedes: [legacy.id] }],
      'conversation',
      { supersedable: new Set([legacy.id]) },
    );
    assert.equal([full.stored.length, full.overLimit, full.superseded], [0, 1, 0]);
    assert.is((await get(world, legacy.id))?.supersededBy, undefined, 'what was not stored replaces nothing');
  } finally {
    await world.dispose();
  }
});

test('a superseded fact learnt again word for word stays history, unless it supersedes its replacement: then it is current again', async () => {
  const world = await openWorld();
  try {
    const [legacy] = await seed(world, [LEGACY]);
    const first = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: RUNNER, topic: 'deployment', supersedes: [legacy.id] }],
      'conversation',
      { supersedable: new Set([legacy.id]) },
    );
    const [runner] = first.stored;
    assert.is((await get(world, legacy.id))?.supersededBy, runner.id);

    // Mentioned in passing, with the replacement shown but not named: still history.
    const passing = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: LEGACY, topic: 'deployment', supersedes: [] }],
      'conversation',
      { supersedable: new Set([runner.id]) },
    );
    assert.equal([passing.stored.length, passing.duplicates, passing.superseded, passing.restored], [0, 1, 0, 0]);
    assert.is((await get(world, legacy.id))?.supersededBy, runner.id);
    assert.is((await get(world, runner.id))?.supersededBy, undefined);

    // Naming another reflection is not enough either: a history reflection supersedes nothing.
    const [vpn] = await seed(world, ['Staging deploys need the VPN.']);
    const sideways = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: LEGACY, topic: 'deployment', supersedes: [vpn.id] }],
      'conversation',
      { supersedable: new Set([runner.id, vpn.id]) },
    );
    assert.equal([sideways.superseded, sideways.restored], [0, 0]);
    assert.is((await get(world, vpn.id))?.supersededBy, undefined);

    // The fact changed back: the model supersedes the replacement with the old fact.
    world.clock.now += 60_000;
    const reverted = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: LEGACY, topic: 'deployment', supersedes: [runner.id] }],
      'conversation',
      { supersedable: new Set([runner.id]) },
    );
    assert.equal([reverted.stored.length, reverted.superseded, reverted.restored], [0, 1, 1]);
    const [legacyAfter, runnerAfter] = [await get(world, legacy.id), await get(world, runner.id)];
    assert.equal([legacyAfter?.supersededBy, legacyAfter?.supersededAt], [undefined, undefined], 'current again');
    assert.equal([runnerAfter?.supersededBy, runnerAfter?.supersededAt], [legacy.id, world.clock.now]);
    const found = await world.reflections.keywords(world.agent.id, { text: 'ship-legacy', limit: 5 });
    assert.equal(found.map((match) => match.id), [legacy.id], 'searchable again');
  } finally {
    await world.dispose();
  }
});

test.run();
