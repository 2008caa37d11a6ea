/**
 * Why injection took a reflection, as the request log names it (DESIGN section 12):
 * `tags` when the request holds every word of one of its subject tags, `meaning` when its
 * cosine alone did it, `named term "<term>"` when a term the request names lifted it.
 * Through the real store, the default embedder and its word vectors.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { signalOf } from '../../src/conversation/request-log.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { createReflectionWriter } from '../../src/memory/reflection-writer.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';
import { createRetrieval } from '../../src/memory/retrieval.js';
import { openWorld } from './sqlite-world.js';

const words = loadWordVectors();
const embedder = createSemanticEmbedder(words);
const reranker = createSoftMatchReranker(words);

test('a subject tag the request holds whole makes the signal `tags`; the same reflection without it is `meaning`', async () => {
  const world = await openWorld();
  try {
    const writer = createReflectionWriter({ reflections: world.reflections, embedder, control: world.control, now: () => world.clock.now });
    const content = 'Run the database migrations with make migrate before running the test suite.';
    const { stored } = await writer.write(world.agent.id, [{ kind: 'procedural', content, topic: 'testing', tags: ['database migrations', 'test suite'] }], 'conversation');
    assert.is(stored.length, 1);
    const retrieval = createRetrieval({ reflections: world.reflections, embedder, reranker, vocabulary: words });

    const [tagged] = await retrieval.retrieve(world.agent, 'How do I run the database migrations?', new Set());
    assert.ok(tagged, 'injected');
    assert.is(tagged.why, 'tags');
    assert.is(tagged.tag, 'database migrations');
    assert.is(signalOf(tagged), 'tags');

    // One word of each tag only ("database" without "migrations", "test" without "suite"): no tag is held whole.
    const judged = await retrieval.judge(world.agent, 'Which database do the tests use when they run?', new Set());
    const [candidate] = judged;
    assert.ok(candidate, JSON.stringify(judged));
    assert.is(candidate.tag, undefined);
    assert.ok(candidate.why === 'meaning' || candidate.why === 'named', candidate.why);
  } finally {
    await world.dispose();
  }
});

test('signalOf names the named term, quoted', () => {
  assert.is(signalOf({ why: 'named', named: { term: 'billing-svc', strength: 1, corroborated: true, weight: 1 } }), 'named term "billing-svc"');
  assert.is(signalOf({ why: 'meaning' }), 'meaning');
  assert.is(signalOf({ why: 'tags' }), 'tags');
});

test.run();
