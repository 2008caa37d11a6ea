/**
 * Retrieval by meaning, offline: the word vectors read from the npm package, the default
 * embedder built on them, the soft-match reranker, and a search that degrades to keywords
 * when the embedder fails.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { cosine } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder, meaningOf, SEMANTIC_EMBEDDER_ID } from '../../src/memory/embedders/semantic-embedder.js';
import { searchMemory } from '../../src/memory/memory-search.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';
import type { Embedder } from '../../src/ports/index.js';
import { openWorld } from './sqlite-world.js';

const words = loadWordVectors();
const embedder = createSemanticEmbedder(words);

test('word vectors: the most frequent English words first, unit rows, near words near', () => {
  assert.ok(words.size >= 50_000);
  assert.is(words.row('the'), 0, 'frequency order');
  assert.is(words.row('xqzzyv'), undefined);
  const sim = (a: string, b: string) => words.similarity(words.row(a)!, words.row(b)!);
  assert.ok(Math.abs(sim('cache', 'cache') - 1) < 1e-6);
  assert.ok(sim('sql', 'database') > sim('sql', 'banana') + 0.3, 'sql is nearer a database than a banana');
  assert.ok(sim('relax', 'unwind') > 0.4);
  assert.ok(words.weight(words.row('the')!) < 0.1 && words.weight(words.row('kubernetes') ?? 40_000) > 0.8, 'rare words weigh more');
});

test('the default embedder: unit vectors, deterministic, meaning on top of shared words', async () => {
  assert.is(embedder.id, SEMANTIC_EMBEDDER_ID);
  assert.is(embedder.dimensions, 356);
  const [a, b, c] = await embedder.embed(['Start Redis before the build', 'Start Redis before the build', '']);
  assert.ok(Math.abs(cosine(a, a) - 1) < 1e-5);
  assert.equal([...a], [...b]);
  assert.is(cosine(c, c), 0, 'no content word: the zero vector');
  const score = async (x: string, y: string) => {
    const [u, v] = await embedder.embed([x, y]);
    return cosine(u, v);
  };
  const memory = 'Start the Redis cache with docker compose up cache before running the build';
  // No shared content word with the memory but "cache": the meaning carries it.
  assert.ok((await score(memory, 'my compile keeps failing because the caching server is down')) > (await score(memory, 'bake the banana bread for forty minutes')) + 0.15);
  assert.is(meaningOf(words, 'the of and'), undefined);
});

test('soft-match reranking: exact stems and words of like meaning lift the reflection that answers', async () => {
  const world = await openWorld();
  try {
    const reranker = createSoftMatchReranker(words);
    const semantic = { reflections: world.reflections, embedder, reranker };
    const writer = await import('../../src/memory/reflection-writer.js');
    const write = writer.createReflectionWriter({ reflections: world.reflections, embedder, control: world.control, now: () => world.clock.now });
    await write.write(world.agent.id, [
      { kind: 'procedural', content: 'Start the Redis cache with docker compose up cache before npm run build', topic: 'build' },
      { kind: 'factual', content: 'The marketing site is deployed from the website repository on Fridays', topic: 'deploy' },
      { kind: 'factual', content: 'Invoices are generated nightly by the billing cron job', topic: 'billing' },
    ], 'mcp');
    const found = await searchMemory(semantic, world.agent.id, { text: 'my build dies because the caching server is not running', keywords: 'build dies caching server running', limit: 3, alpha: 0.5 });
    assert.match(found[0].reflection.content, 'Redis cache');
    assert.ok((found[0].matchScore ?? 0) > (found[2].matchScore ?? 0), 'the match score is absolute, and it ranks');
    assert.ok(found.every((r, i) => i === 0 || found[i - 1].score >= r.score), 'best first');
  } finally {
    await world.dispose();
  }
});

test('a reflection is found by its tags (words it does not say), by meaning and by keyword; tags are never injected', async () => {
  const world = await openWorld();
  try {
    const reranker = createSoftMatchReranker(words);
    const deps = { reflections: world.reflections, embedder, reranker };
    const { createReflectionWriter } = await import('../../src/memory/reflection-writer.js');
    const { createRetrieval, renderReflectionsBlock } = await import('../../src/memory/retrieval.js');
    const writer = createReflectionWriter({ reflections: world.reflections, embedder, control: world.control, now: () => world.clock.now });
    const content = 'Design tokens come from packages/ui/tokens.json; Tailwind reads them through apps/web/tailwind.config.ts.';
    const others = [
      { kind: 'factual', content: 'Invoices are generated nightly by the billing cron job', topic: 'billing' },
      { kind: 'procedural', content: 'Run pnpm db:migrate before pnpm test or the tests fail on a missing column', topic: 'database' },
    ];
    const request = 'Where do I change the brand colour palette?';
    const retrieval = createRetrieval(deps);

    await writer.write(world.agent.id, [{ kind: 'factual', content, topic: 'frontend' }, ...others], 'mcp');
    assert.equal(await retrieval.retrieve(world.agent, request, new Set()), [], 'without tags the request shares no word with it');

    const other = await openWorld();
    try {
      const tagged = createReflectionWriter({ reflections: other.reflections, embedder, control: other.control, now: () => other.clock.now });
      await tagged.write(other.agent.id, [{ kind: 'factual', content, topic: 'frontend', tags: ['brand colours', 'colour palette', 'theme'] }, ...others], 'conversation');
      const injected = (await createRetrieval({ ...deps, reflections: other.reflections }).retrieve(other.agent, request, new Set())).map((judged) => judged.reflection);
      assert.equal(injected.map((r) => r.content), [content]);
      assert.equal(injected[0].tags, ['brand colours', 'colour palette', 'theme']);
      assert.not.match(renderReflectionsBlock(injected), 'palette', 'tags are searched, not injected');
      const byKeyword = await searchMemory({ reflections: other.reflections, embedder }, other.agent.id, { text: 'palette', keywords: 'palette', limit: 3, alpha: 0.5 });
      assert.is(byKeyword[0].reflection.content, content);
      assert.ok(byKeyword[0].keywordScore > 0);
    } finally {
      await other.dispose();
    }
  } finally {
    await world.dispose();
  }
});

test('an embedder that fails degrades the search to keywords and says so; it never throws', async () => {
  const world = await openWorld();
  try {
    await world.writer.write(world.agent.id, [{ kind: 'factual', content: 'The deploy script lives in tools/deploy.sh', topic: 'deploy' }], 'mcp');
    const broken: Embedder = { id: world.embedder.id, dimensions: world.embedder.dimensions, embed: async () => Promise.reject(new Error('embeddings endpoint refused the connection')) };
    const reasons: unknown[] = [];
    const found = await searchMemory({ reflections: world.reflections, embedder: broken, onDegraded: (error) => reasons.push(error) }, world.agent.id, {
      text: 'where is the deploy script?',
      keywords: 'deploy script',
      limit: 5,
      alpha: 0.5,
    });
    assert.equal(found.map((r) => r.reflection.content), ['The deploy script lives in tools/deploy.sh']);
    assert.ok(found[0].keywordScore > 0);
    assert.is(found[0].vectorScore, 0, 'no vector: no cosine');
    assert.is(reasons.length, 1);
    assert.match(String(reasons[0]), 'refused');
  } finally {
    await world.dispose();
  }
});

test.run();
