import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cosine, createLocalEmbedder, embedText, LOCAL_EMBEDDER_ID, stem } from '../../src/memory/embedders/local-embedder.js';

const norm = (v: Float32Array) => Math.sqrt(cosine(v, v));

test('declares its id and dimensions and returns unit vectors', async () => {
  const embedder = createLocalEmbedder();
  assert.is(embedder.id, LOCAL_EMBEDDER_ID);
  assert.is(embedder.id, 'local-hash-v1-256');
  assert.is(embedder.dimensions, 256);
  const vectors = await embedder.embed(['The deploy script lives in tools/deploy.sh', 'hello world']);
  assert.is(vectors.length, 2);
  for (const v of vectors) {
    assert.is(v.length, 256);
    assert.ok(Math.abs(norm(v) - 1) < 1e-5);
  }
});

test('is deterministic', () => {
  assert.equal(Array.from(embedText('Run npm test before pushing')), Array.from(embedText('Run npm test before pushing')));
});

test('text without content words embeds as the zero vector', () => {
  for (const text of ['', '   ', '?!', 'where is the']) assert.is(norm(embedText(text)), 0, JSON.stringify(text));
});

test('related sentences score clearly higher than unrelated ones', () => {
  const score = (a: string, b: string) => cosine(embedText(a), embedText(b));
  const cases: [string, string, string][] = [
    ['The deploy script lives in tools/deploy.sh', 'where is the deploy script?', 'What is the capital of France?'],
    ['Run the tests with npm test before pushing', 'how do I run the tests?', 'where is the deploy script?'],
    ['Alice owns the billing service', 'who owns billing?', 'please write a haiku about the sea'],
    [
      'Database migrations are in db/migrations; apply them with make migrate',
      'how do I apply the database migrations?',
      'Fix the CSS of the login button',
    ],
  ];
  for (const [memory, related, unrelated] of cases) {
    const good = score(memory, related);
    const bad = score(memory, unrelated);
    assert.ok(good >= 0.3, `${good.toFixed(3)}: "${memory}" ~ "${related}"`);
    assert.ok(Math.abs(bad) < 0.15, `${bad.toFixed(3)}: "${memory}" ~ "${unrelated}"`);
    assert.ok(good - bad > 0.25, `${good.toFixed(3)} vs ${bad.toFixed(3)}`);
  }
});

test('word forms meet: stemming and character n-grams', () => {
  assert.is(stem('deploys'), 'deploy');
  assert.is(stem('deploying'), 'deploy');
  assert.is(stem('deployed'), 'deploy');
  assert.is(stem('configured'), stem('configure'));
  assert.is(stem('running'), 'run');
  assert.is(stem('process'), 'process');
  // "deployment" shares no word with "deploying", only character n-grams and "pipeline".
  assert.ok(cosine(embedText('deployment pipeline'), embedText('deploying the pipeline')) > 0.35);
  assert.ok(cosine(embedText('deployment'), embedText('deploying')) > 0.2);
  assert.ok(Math.abs(cosine(embedText('deployment'), embedText('invoice'))) < 0.1);
});

test('camelCase and snake_case identifiers also match their words', () => {
  assert.ok(cosine(embedText('call retryWithBackoff'), embedText('retry with backoff')) > 0.4);
  assert.ok(cosine(embedText('set max_retries'), embedText('max retries')) > 0.4);
});

test('only the last 4,000 characters of a long text count', () => {
  const filler = 'lorem ipsum dolor sit amet '.repeat(400);
  const a = embedText('The deploy script lives in tools/deploy.sh ' + filler + ' billing owner');
  const b = embedText(filler + ' billing owner');
  assert.ok(cosine(a, b) > 0.999);
});

test('embeds a short query in well under 0.2 ms', () => {
  for (let i = 0; i < 200; i++) embedText(`warm up ${i}`);
  const runs = 2000;
  const started = performance.now();
  for (let i = 0; i < runs; i++) embedText(`where is the deploy script for service ${i}?`);
  const perQuery = (performance.now() - started) / runs;
  assert.ok(perQuery < 0.2, `${perQuery.toFixed(4)} ms per query`);
});

test.run();
