import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openWorld } from './sqlite-world.js';
import { reflectionId } from '../../src/memory/reflection-id.js';

test('stores valid reflections with content ids and rebuilds the root index', async () => {
  const world = await openWorld();
  try {
    const result = await world.writer.write(
      world.agent.id,
      [
        { kind: 'factual', content: 'The deploy script is tools/deploy.sh.', topic: 'Deployment' },
        { kind: 'procedural', content: 'Run make migrate before npm test, or the tests fail on a missing column.', topic: 'testing' },
        { kind: 'bogus', content: 'x', topic: 'y' },
      ],
      'conversation',
    );
    assert.is(result.stored.length, 2);
    assert.is(result.rejected, 1);
    assert.is(result.duplicates, 0);
    const [deploy] = result.stored;
    assert.is(deploy.id, reflectionId(world.agent.id, 'factual', 'The deploy script is tools/deploy.sh.'));
    assert.is(deploy.topic, 'deployment');
    assert.is(deploy.source, 'conversation');
    assert.is(deploy.embedderId, 'local-hash-v1-256');
    assert.is(deploy.createdAt, world.clock.now);
    assert.is(await world.reflections.count(world.agent.id), 2);
    const index = await world.control.indexes.get(world.agent.id);
    assert.ok(index?.includes('## deployment (1)'), index);
    assert.ok(index?.includes('- [procedural] Run make migrate before npm test'), index);
  } finally {
    await world.dispose();
  }
});

test('writing the same batch again stores nothing new (idempotent redelivery)', async () => {
  const world = await openWorld();
  try {
    const batch = [{ kind: 'factual', content: 'Alice owns the billing service.', topic: 'billing' }];
    await world.writer.write(world.agent.id, batch, 'conversation');
    world.clock.now += 60_000;
    const again = await world.writer.write(world.agent.id, batch, 'conversation');
    assert.is(again.stored.length, 0);
    assert.is(again.duplicates, 1);
    assert.is(await world.reflections.count(world.agent.id), 1);
  } finally {
    await world.dispose();
  }
});

test('drops duplicates within a batch, exact and near', async () => {
  const world = await openWorld();
  try {
    const result = await world.writer.write(
      world.agent.id,
      [
        { kind: 'factual', content: 'Run npm test before pushing.', topic: 'testing' },
        { kind: 'factual', content: '  run NPM test before pushing ', topic: 'testing' },
        { kind: 'factual', content: 'Run `npm test` before you push.', topic: 'testing' },
        { kind: 'factual', content: 'Run npm run lint before pushing.', topic: 'testing' },
      ],
      'mcp',
    );
    assert.is(result.stored.length, 2);
    assert.is(result.duplicates, 2);
    assert.equal(result.stored.map((r) => r.content), ['Run npm test before pushing.', 'Run npm run lint before pushing.']);
  } finally {
    await world.dispose();
  }
});

test('duplicates within a batch give their tags to the one kept, which is embedded with them', async () => {
  const world = await openWorld();
  try {
    const result = await world.writer.write(
      world.agent.id,
      [
        { kind: 'factual', content: 'Run npm test before pushing.', topic: 'testing', tags: ['pre-push checks'] },
        { kind: 'factual', content: '  run NPM test before pushing ', topic: 'testing', tags: ['broken main branch'] },
        { kind: 'factual', content: 'Run `npm test` before you push.', topic: 'testing', tags: ['red ci build'] },
      ],
      'conversation',
    );
    assert.is(result.stored.length, 1);
    assert.equal(result.stored[0].tags, ['pre-push checks', 'broken main branch', 'red ci build']);
    const [vector] = await world.embedder.embed(['Run npm test before pushing.\npre-push checks; broken main branch; red ci build']);
    const stored = (await world.reflections.vectors(world.agent.id, [result.stored[0].id])).get(result.stored[0].id);
    assert.equal([...(stored ?? [])], [...vector], 'the vector holds every tag');
  } finally {
    await world.dispose();
  }
});

test('a near-duplicate of a stored reflection touches it instead of adding one', async () => {
  const world = await openWorld();
  try {
    const [first] = (
      await world.writer.write(world.agent.id, [{ kind: 'procedural', content: 'Run npm test before pushing.', topic: 'testing' }], 'conversation')
    ).stored;
    const before = await world.reflections.get(world.agent.id, first.id);
    await new Promise((resolve) => setTimeout(resolve, 5)); // the store stamps updatedAt with its own clock
    const result = await world.writer.write(
      world.agent.id,
      [{ kind: 'procedural', content: 'Run `npm test` before you push.', topic: 'testing' }],
      'conversation',
    );
    assert.is(result.stored.length, 0);
    assert.is(result.duplicates, 1);
    assert.is(await world.reflections.count(world.agent.id), 1);
    const after = await world.reflections.get(world.agent.id, first.id);
    assert.ok(before && after && after.updatedAt > before.updatedAt, `${before?.updatedAt} -> ${after?.updatedAt}`);
  } finally {
    await world.dispose();
  }
});

test('a restatement brings its new tags to the stored reflection, which is then found under them', async () => {
  const world = await openWorld();
  try {
    const [first] = (
      await world.writer.write(world.agent.id, [{ kind: 'procedural', content: 'Run npm test before pushing.', topic: 'testing', tags: ['pre-push checks'] }], 'conversation')
    ).stored;
    const vectorBefore = (await world.reflections.vectors(world.agent.id, [first.id])).get(first.id);
    const result = await world.writer.write(
      world.agent.id,
      [{ kind: 'procedural', content: 'Run `npm test` before you push.', topic: 'testing', tags: ['pre-push checks', 'broken main branch'] }],
      'conversation',
    );
    assert.is(result.duplicates, 1);
    assert.equal((await world.reflections.get(world.agent.id, first.id))?.tags, ['pre-push checks', 'broken main branch']);
    const vectorAfter = (await world.reflections.vectors(world.agent.id, [first.id])).get(first.id);
    assert.ok(vectorBefore && vectorAfter && vectorAfter.some((x, i) => x !== vectorBefore[i]), 're-embedded with the new tag');
    const found = await world.reflections.keywords(world.agent.id, { text: 'broken main branch', limit: 5 });
    assert.equal(found.map((m) => m.id), [first.id]);
  } finally {
    await world.dispose();
  }
});

test('distinct facts on one subject are all kept', async () => {
  const world = await openWorld();
  try {
    const result = await world.writer.write(
      world.agent.id,
      [
        { kind: 'factual', content: 'The billing service is owned by Alice.', topic: 'billing' },
        { kind: 'factual', content: 'The billing service is owned by Bob.', topic: 'billing' },
        { kind: 'factual', content: 'The API base URL is https://api.example.com/v2.', topic: 'api' },
        { kind: 'factual', content: 'The API base URL is https://api.example.com/v3.', topic: 'api' },
      ],
      'conversation',
    );
    assert.is(result.stored.length, 4);
  } finally {
    await world.dispose();
  }
});

test('redacts secrets before storing', async () => {
  const world = await openWorld();
  try {
    const { stored } = await world.writer.write(
      world.agent.id,
      [{ kind: 'factual', content: 'CI uses the token ghp_16C7e42F292c6912E7710c838347Ae178B4a for releases.', topic: 'ci' }],
      'transcript',
    );
    assert.is(stored[0].content, 'CI uses the token [REDACTED:github_token] for releases.');
    const listed = await world.reflections.list(world.agent.id);
    assert.not.match(JSON.stringify(listed), /ghp_/);
  } finally {
    await world.dispose();
  }
});

test('an all-invalid batch writes nothing and leaves the index alone', async () => {
  const world = await openWorld();
  try {
    const result = await world.writer.write(world.agent.id, [{ kind: 'factual', content: '' }, null, { kind: 'factual', content: 'The s' }], 'mcp');
    assert.equal(result, { stored: [], duplicates: 0, rejected: 2, noContent: 1, overLimit: 0, limit: 20_000, superseded: 0, restored: 0 });
    assert.is(await world.control.indexes.get(world.agent.id), undefined);
  } finally {
    await world.dispose();
  }
});

test('an agent at its reflection limit stores no new ones; restatements still count; room left is filled in order', async () => {
  const world = await openWorld({ maxReflections: 3 });
  try {
    const facts = ['The API listens on port 8080.', 'Billing lives in services/billing.', 'Docs build with mkdocs.', 'Logs go to /var/log/app.'];
    const first = await world.writer.write(world.agent.id, facts.slice(0, 2).map((content) => ({ kind: 'factual', content, topic: 'x' })), 'conversation');
    assert.equal([first.stored.length, first.overLimit, first.limit], [2, 0, 3]);
    const second = await world.writer.write(world.agent.id, facts.slice(2).map((content) => ({ kind: 'factual', content, topic: 'x' })), 'conversation');
    assert.equal(second.stored.map((r) => r.content), ['Docs build with mkdocs.'], 'the first proposals fill the room left');
    assert.is(second.overLimit, 1);
    assert.is(await world.reflections.count(world.agent.id), 3);
    const restated = await world.writer.write(world.agent.id, [{ kind: 'factual', content: facts[0], topic: 'x' }], 'mcp');
    assert.equal([restated.stored.length, restated.duplicates, restated.overLimit], [0, 1, 0], 'a restatement is not refused');
    await world.reflections.delete(world.agent.id, first.stored[0].id);
    const after = await world.writer.write(world.agent.id, [{ kind: 'factual', content: facts[3], topic: 'x' }], 'mcp');
    assert.equal([after.stored.length, after.overLimit], [1, 0], 'deleting one makes room');
  } finally {
    await world.dispose();
  }
});

test('who wrote the tags: the extraction model for what is learnt, the agent for remember; no subject tags, no author', async () => {
  const world = await openWorld();
  try {
    const learnt = await world.writer.write(
      world.agent.id,
      [
        { kind: 'factual', content: 'The staging database is pg-stage-3.', topic: 'ops', tags: ['staging db'] },
        { kind: 'factual', content: 'Lunch is at noon.', topic: 'office' },
        { kind: 'factual', content: 'The office closes at six.', topic: 'office', tags: ['added-by-hand'] },
      ],
      'conversation',
    );
    assert.equal(learnt.stored.map((r) => r.tagsBy ?? null), ['extraction', null, null]);
    const [uploaded] = (await world.writer.write(world.agent.id, [{ kind: 'factual', content: 'CI runs on buildkite.', tags: ['ci'] }], 'transcript')).stored;
    const [remembered] = (await world.writer.write(world.agent.id, [{ kind: 'factual', content: 'Docs live in /docs.', tags: ['docs'] }], 'mcp')).stored;
    assert.equal([uploaded.tagsBy, remembered.tagsBy], ['extraction', 'agent']);
    assert.is((await world.reflections.get(world.agent.id, remembered.id))?.tagsBy, 'agent', 'stored, not only returned');
    assert.equal((await world.reflections.list(world.agent.id, { needsTags: true })).map((r) => r.content).sort(), ['Lunch is at noon.', 'The office closes at six.']);
  } finally {
    await world.dispose();
  }
});

test('a restatement that brings the first tags gives them its author; tags added to others’ keep the first author', async () => {
  const world = await openWorld();
  try {
    const [bare, tagged] = (
      await world.writer.write(
        world.agent.id,
        [
          { kind: 'procedural', content: 'Run npm test before pushing.', topic: 'testing' },
          { kind: 'factual', content: 'The API listens on port 8080.', topic: 'api', tags: ['api port'] },
        ],
        'conversation',
      )
    ).stored;
    assert.equal([bare.tagsBy, tagged.tagsBy], [undefined, 'extraction']);
    await world.writer.write(
      world.agent.id,
      [
        { kind: 'procedural', content: 'Run `npm test` before you push.', topic: 'testing', tags: ['pre-push checks'] },
        { kind: 'factual', content: 'The API listens on port 8080.', topic: 'api', tags: ['http port'] },
      ],
      'mcp',
    );
    const [bareAfter, taggedAfter] = await Promise.all([world.reflections.get(world.agent.id, bare.id), world.reflections.get(world.agent.id, tagged.id)]);
    assert.equal([bareAfter?.tags, bareAfter?.tagsBy], [['pre-push checks'], 'agent']);
    assert.equal([taggedAfter?.tags, taggedAfter?.tagsBy], [['api port', 'http port'], 'extraction']);
  } finally {
    await world.dispose();
  }
});

test.run();
