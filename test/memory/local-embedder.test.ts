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

/** FNV-1a over the vector's bytes: any change to any float changes it. */
function checksum(v: Float32Array): string {
  let h = 0x811c9dc5;
  for (const byte of new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) h = Math.imul(h ^ byte, 16777619);
  return (h >>> 0).toString(16).padStart(8, '0');
}

test(`vectors stay bit for bit those stored under ${LOCAL_EMBEDDER_ID}`, () => {
  // Recorded from the first (Map-based) implementation. A change here needs a new embedder id.
  const golden: [string, string][] = [
    [
      'Call retryWithBackoff() from src/deploy/runDeploy.ts; the DEPLOY_ENV and max_retries settings live in config/deploy.yaml.',
      '35c72a58',
    ],
    ['Café naïve İstanbul ΣΊΣΥΦΟΣ 日本語のテキスト 😀 𝐀𝐁 getV2Token x 7 e\u0301', '72df91b5'],
    [
      Array.from({ length: 400 }, (_, i) => `line ${i}: the deploy script ${i % 7 ? 'passes' : 'fails'} with code ${i * 37}`).join('\n'),
      '05b07691',
    ],
  ];
  for (const [text, expected] of golden) assert.is(checksum(embedText(text)), expected, text.slice(0, 40));
});

test.run();
