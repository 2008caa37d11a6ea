import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openWorld, type World } from './sqlite-world.js';
import { createRetrieval, isRelated, isRelevant, relevanceRule, renderReflectionsBlock } from '../../src/memory/retrieval.js';
import { reflection } from './fixtures.js';
import { estimateTokens } from '../../src/domain/text.js';
import type { Agent } from '../../src/domain/types.js';

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

test('finds the related memories and leaves unrelated ones out', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const found = await retrieval.retrieve(world.agent, 'Where is the deploy script?', new Set());
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
      assert.equal(await retrieval.retrieve(world.agent, query, new Set()), [], query);
    }
  } finally {
    await world.dispose();
  }
});

test('an empty query, or one that is only an Engram block, gives nothing', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    assert.equal(await retrieval.retrieve(world.agent, '', new Set()), []);
    assert.equal(await retrieval.retrieve(world.agent, '   \n', new Set()), []);
    const block = renderReflectionsBlock(await world.reflections.list(world.agent.id));
    assert.equal(await retrieval.retrieve(world.agent, block, new Set()), []);
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
      const found = await retrieval.retrieve(world.agent, query, new Set());
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
    const first = await retrieval.retrieve(world.agent, 'how do I deploy to production with the deploy script?', new Set());
    assert.ok(first.length >= 2, String(first.length));
    const again = await retrieval.retrieve(world.agent, 'how do I deploy to production with the deploy script?', new Set(first.map((r) => r.id)));
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
    assert.is((await retrieval.retrieve(withMemory(world.agent, { topK: 1 }), query, new Set())).length, 1);
    assert.equal(await retrieval.retrieve(withMemory(world.agent, { topK: 0 }), query, new Set()), []);
    const small = withMemory(world.agent, { tokenBudget: 60 });
    const fitted = await retrieval.retrieve(small, query, new Set());
    assert.ok(fitted.length >= 1);
    assert.ok(estimateTokens(renderReflectionsBlock(fitted)) <= 60, renderReflectionsBlock(fitted));
    assert.equal(await retrieval.retrieve(withMemory(world.agent, { tokenBudget: 10 }), query, new Set()), []);
  } finally {
    await world.dispose();
  }
});

test('a high minScore keeps out weak matches', async () => {
  const world = await seeded();
  try {
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const strict = withMemory(world.agent, { minScore: 0.95 });
    assert.equal(await retrieval.retrieve(strict, 'who should I ask about invoices?', new Set()), []);
    const loose = await retrieval.retrieve(world.agent, 'who should I ask about invoices?', new Set());
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
    assert.equal(await retrieval.retrieve(other, 'Where is the deploy script?', new Set()), []);
  } finally {
    await world.dispose();
  }
});

test('relevance rule: cosine alone, or a strong keyword hit that is not unrelated; the agent can only make it stricter', () => {
  const scored = (score: number, vectorScore: number, keywordScore: number) => ({
    reflection: reflection({ id: 'ref_x' }),
    score,
    vectorScore,
    keywordScore,
  });
  const rule = { minCosine: 0.2, keywordFraction: 0.75 };
  assert.ok(isRelevant(scored(0.1, 0.2, 0), rule), 'cosine at minCosine');
  assert.not.ok(isRelevant(scored(1, 0.19, 0), rule), 'top fused score without keyword or cosine');
  assert.ok(isRelevant(scored(0.6, 0.16, 0.8), rule), 'keyword hit, upper half, cosine >= the fraction of minCosine');
  assert.not.ok(isRelevant(scored(0.6, 0.14, 1), rule), 'keyword hit but unrelated in meaning');
  assert.not.ok(isRelevant(scored(0.4, 0.19, 0.5), rule), 'keyword hit in the lower half');
  assert.ok(isRelated(scored(0.1, 0.01, 0.2), rule), 'an explicit search keeps any keyword hit');
  assert.not.ok(isRelated(scored(0.9, 0.1, 0), rule), 'but not a text unrelated in words and meaning');

  const calibrated = { relevance: { minCosine: 0.55, keywordFraction: 0.9 } };
  assert.equal(relevanceRule(calibrated, 0.2), { minCosine: 0.55, keywordFraction: 0.9 }, 'the default minScore leaves the calibration');
  assert.equal(relevanceRule(calibrated, 0.7), { minCosine: 0.7, keywordFraction: 0.9 }, 'a stricter agent setting wins');
  assert.equal(relevanceRule({}, 0.2), { minCosine: 0.2, keywordFraction: 0.75 }, 'an uncalibrated embedder: minScore decides');
});

test.run();
