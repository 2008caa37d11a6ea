import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openWorld, type World } from './sqlite-world.js';
import { CALIBRATED_MIN_SCORE, createRetrieval, isRelated, relevanceRule, renderReflectionsBlock, type Retrieval } from '../../src/memory/retrieval.js';
import { reflection } from './fixtures.js';
import { estimateTokens } from '../../src/domain/text.js';
import type { Agent, Reflection } from '../../src/domain/types.js';

const MEMORIES = [
  { kind: 'factual', content: 'The deploy script lives in tools/deploy.sh and reads DEPLOY_ENV.', topic: 'deployment' },
  { kind: 'procedural', content: 'Run tools/deploy.sh with --dry-run before a production deploy; a failed deploy is hard to roll back.', topic: 'deployment' },
  { kind: 'factual', content: 'Alice owns the billing service; ask her before changing invoice rounding.', topic: 'billing' },
  { kind: 'factual', content: 'Database migrations live in db/migrations and run with make migrate.', topic: 'database' },
  { kind: 'procedural', content: 'Use pnpm, never npm install, in this repository: npm breaks the lockfile.', topic: 'tooling' },
];

async function seeded(): Promise<World> {
  const world = await openWorld();
  const { stored } = await world.writer.write(world.agent.id, MEMORIES, 'conversation');
  assert.is(stored.length, MEMORIES.length);
  return world;
}

const withMemory = (agent: Agent, memory: Partial<Agent['memory']>): Agent => ({ ...agent, memory: { ...agent.memory, ...memory } });

/** The reflections injection would add for `query`, best first. */
async function injected(retrieval: Retrieval, agent: Agent, query: string, exclude: ReadonlySet<string> = new Set()): Promise<Reflection[]> {
  return (await retrieval.retrieve(agent, query, exclude)).map((judged) => judged.reflection);
}

test('finds the related memories and leaves unrelated ones out', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const found = await injected(retrieval, world.agent, 'Where is the deploy script?', new Set());
    const contents = found.map((r) => r.content);
    assert.ok(contents.some((c) => c.startsWith('The deploy script lives')), contents.join('\n'));
    assert.ok(!contents.some((c) => /billing|pnpm|migrations/.test(c)), contents.join('\n'));
  } finally {
    await world.dispose();
  }
});

test('an unrelated query injects nothing', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    // The last one shares the word "script" with a memory, and nothing else.
    for (const query of ['Write a haiku about autumn leaves.', 'What is the capital of France?', 'fix the failing test in the script']) {
      assert.equal(await injected(retrieval, world.agent, query, new Set()), [], query);
    }
  } finally {
    await world.dispose();
  }
});

test('an empty query, or one that is only an Engram block, gives nothing', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    assert.equal(await injected(retrieval, world.agent, '', new Set()), []);
    assert.equal(await injected(retrieval, world.agent, '   \n', new Set()), []);
    const block = renderReflectionsBlock(await world.reflections.list(world.agent.id));
    assert.equal(await injected(retrieval, world.agent, block, new Set()), []);
  } finally {
    await world.dispose();
  }
});

test('a question before or after a long pasted stack trace still finds its memory', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const trace = Array.from(
      { length: 60 },
      (_, i) => `    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:${95 + i}:5)`,
    ).join('\n');
    for (const query of [`Where is the deploy script? Running it printed:\n${trace}`, `${trace}\nWhere is the deploy script?`]) {
      const found = await injected(retrieval, world.agent, query, new Set());
      assert.ok(
        found.some((r) => r.content.startsWith('The deploy script lives')),
        `${query.slice(0, 40)}: ${found.map((r) => r.content).join(' | ')}`,
      );
    }
  } finally {
    await world.dispose();
  }
});

test('skips excluded ids (already injected in this conversation)', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const first = await injected(retrieval, world.agent, 'how do I deploy to production with the deploy script?', new Set());
    assert.ok(first.length >= 2, String(first.length));
    const again = await injected(retrieval, world.agent, 'how do I deploy to production with the deploy script?', new Set(first.map((r) => r.id)));
    for (const r of again) assert.not.ok(first.some((f) => f.id === r.id));
  } finally {
    await world.dispose();
  }
});

test('caps at topK and at the token budget', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const query = 'deploy script production dry-run';
    assert.is((await injected(retrieval, withMemory(world.agent, { topK: 1 }), query, new Set())).length, 1);
    assert.equal(await injected(retrieval, withMemory(world.agent, { topK: 0 }), query, new Set()), []);
    const small = withMemory(world.agent, { tokenBudget: 60 });
    const fitted = await injected(retrieval, small, query, new Set());
    assert.ok(fitted.length >= 1);
    assert.ok(estimateTokens(renderReflectionsBlock(fitted)) <= 60, renderReflectionsBlock(fitted));
    assert.equal(await injected(retrieval, withMemory(world.agent, { tokenBudget: 10 }), query, new Set()), []);
  } finally {
    await world.dispose();
  }
});

test('explain says of every candidate whether injection takes it, and if not why not, as retrieve decides', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const query = 'deploy script production dry-run';
    const ids = (verdicts: Awaited<ReturnType<Retrieval['explain']>>) => verdicts.filter((v) => v.taken).map((v) => v.judged.reflection.id);
    const reasons = (verdicts: Awaited<ReturnType<Retrieval['explain']>>) => new Set(verdicts.flatMap((v) => (v.taken ? [] : [v.reason])));
    for (const agent of [world.agent, withMemory(world.agent, { topK: 1 }), withMemory(world.agent, { tokenBudget: 60 })]) {
      const verdicts = await retrieval.explain(agent, query);
      assert.equal(ids(verdicts), (await injected(retrieval, agent, query)).map((r) => r.id), 'the same choice as retrieve');
    }
    const all = await retrieval.explain(world.agent, query);
    assert.ok(all.length > ids(all).length, 'some candidates are left out');
    assert.ok(all.every((v) => v.taken || v.reason !== 'below_bar' || !v.judged.relevant));
    assert.ok(reasons(all).has('below_bar'), 'the unrelated ones are under the bar');
    const one = await retrieval.explain(withMemory(world.agent, { topK: 1 }), query);
    assert.is(ids(one).length, 1);
    assert.ok(reasons(one).has('beyond_top_k'), 'the second deploy reflection is beyond top-k');
    const tight = await retrieval.explain(withMemory(world.agent, { tokenBudget: 10 }), query);
    assert.equal(ids(tight), []);
    assert.ok(reasons(tight).has('over_budget'));
  } finally {
    await world.dispose();
  }
});

test('a high minScore keeps out weak matches', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const strict = withMemory(world.agent, { minScore: 0.95 });
    assert.equal(await injected(retrieval, strict, 'who should I ask about invoices?', new Set()), []);
    const loose = await injected(retrieval, world.agent, 'who should I ask about invoices?', new Set());
    assert.ok(loose.some((r) => r.topic === 'billing'));
  } finally {
    await world.dispose();
  }
});

test('never returns another agent’s reflections', async () => {
  const world = await seeded();
  try {
    const other = await world.control.createAgent({
      orgId: world.agent.orgId,
      name: 'other',
      upstream: { ...world.agent.upstream, headers: {} },
      memory: world.agent.memory,
      secrets: { upstreamApiKey: 'k' },
    });
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    assert.equal(await injected(retrieval, other, 'Where is the deploy script?', new Set()), []);
  } finally {
    await world.dispose();
  }
});

test('relevance rule: the calibrated cosine at the default minScore, moved by the agent either way; a named term lowers the bar', () => {
  const calibrated = { relevance: { minCosine: 0.55, namedBonus: 0.1, keywordFraction: 0.9 } };
  assert.equal(relevanceRule(calibrated, CALIBRATED_MIN_SCORE), { minScore: CALIBRATED_MIN_SCORE, offset: 0.55 - CALIBRATED_MIN_SCORE, namedBonus: 0.1 });
  const strict = relevanceRule(calibrated, 0.3);
  const loose = relevanceRule(calibrated, 0.1);
  // The bar on the cosine: minScore + offset.
  assert.ok(Math.abs(strict.minScore + strict.offset - 0.65) < 1e-9, 'a higher minScore raises the cosine bar');
  assert.ok(Math.abs(loose.minScore + loose.offset - 0.45) < 1e-9, 'a lower one lowers it');
  assert.equal(relevanceRule({}, 0.2), { minScore: 0.2, offset: 0, namedBonus: 0.1 }, 'an uncalibrated embedder: minScore is the cosine bar');

  const scored = (vectorScore: number, keywordScore: number, matchScore?: number) => ({
    reflection: reflection({ id: 'ref_x' }),
    score: 0.5,
    vectorScore,
    keywordScore,
    ...(matchScore === undefined ? {} : { matchScore }),
  });
  assert.ok(isRelated(scored(0.01, 0.2), calibrated, CALIBRATED_MIN_SCORE), 'an explicit search keeps any keyword hit');
  assert.ok(isRelated(scored(0.01, 0, 0.3), calibrated, CALIBRATED_MIN_SCORE), 'or a match by meaning of its words');
  assert.ok(isRelated(scored(0.5, 0), calibrated, CALIBRATED_MIN_SCORE), 'or a cosine within reach of the bar');
  assert.not.ok(isRelated(scored(0.3, 0), calibrated, CALIBRATED_MIN_SCORE), 'but not a text unrelated in words and meaning');
});

test.run();
