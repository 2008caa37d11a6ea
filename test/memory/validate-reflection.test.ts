import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkReflection, validateReflection } from '../../src/memory/reflection-writer.js';

test('accepts a well-formed proposal, trimmed and on one line', () => {
  assert.equal(validateReflection({ kind: 'factual', content: '  The deploy script is\n tools/deploy.sh. ', topic: ' Deployment ' }), {
    kind: 'factual',
    content: 'The deploy script is tools/deploy.sh.',
    topic: 'deployment',
    tags: [],
  });
  assert.is(validateReflection({ kind: 'Procedural', content: 'Run tests first.', topic: 'x' })?.kind, 'procedural');
});

test('rejects unknown kinds, missing or empty content, non-objects', () => {
  for (const bad of [
    null,
    'text',
    { kind: 'opinion', content: 'x y z', topic: 't' },
    { kind: 'factual', topic: 't' },
    { kind: 'factual', content: '   ', topic: 't' },
    { kind: 'factual', content: '...', topic: 't' },
    { kind: 'factual', content: 42, topic: 't' },
    { kind: 'factual', content: 'sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz12345', topic: 't' },
  ]) {
    assert.is(validateReflection(bad), undefined, JSON.stringify(bad));
  }
});

test('defaults the topic and caps its length', () => {
  assert.is(validateReflection({ kind: 'factual', content: 'Builds need Node 20.' })?.topic, 'general');
  assert.is(validateReflection({ kind: 'factual', content: 'Builds need Node 20.', topic: '' })?.topic, 'general');
  assert.is(validateReflection({ kind: 'factual', content: 'Builds need Node 20.', topic: '## Build' })?.topic, 'build');
  const topic = validateReflection({ kind: 'factual', content: 'Builds need Node 20.', topic: 'very long topic '.repeat(10) })?.topic ?? '';
  assert.ok(topic.length <= 60, topic);
});

test('caps the content at 1,000 characters', () => {
  const content = validateReflection({ kind: 'factual', content: 'word '.repeat(500), topic: 't' })?.content ?? '';
  assert.ok(content.length <= 1_000 && content.length > 900, String(content.length));
  assert.ok(content.endsWith('…'));
});

test('redacts secrets in content and topic', () => {
  const valid = validateReflection({
    kind: 'factual',
    content: 'The staging DB is postgres://app:hunter22@db.staging:5432/app',
    topic: 'db',
  });
  assert.is(valid?.content, 'The staging DB is postgres://app:[REDACTED:url_password]@db.staging:5432/app');
});

test('tags: lowercase phrases on one line, distinct, at most 12; a tag holding a secret and non-strings are dropped', () => {
  const tags = validateReflection({
    kind: 'factual',
    content: 'The deploy script is tools/deploy.sh.',
    tags: ['Release  Script', 'release script', '\nship to prod\n', '', '...', 42, null, 'key sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz12345', 'x'.repeat(100)],
  })?.tags;
  assert.equal(tags?.slice(0, 2), ['release script', 'ship to prod']);
  assert.is(tags?.length, 3, JSON.stringify(tags));
  assert.ok((tags?.[2].length ?? 0) <= 60, 'capped in length');
  const many = validateReflection({ kind: 'factual', content: 'Builds need Node 20.', tags: Array.from({ length: 20 }, (_, i) => `tag ${i}`) })?.tags;
  assert.is(many?.length, 12);
  assert.equal(validateReflection({ kind: 'factual', content: 'Builds need Node 20.', tags: 'not a list' })?.tags, []);
});

test('refuses content that says too little, as no_content with why, judged without its redacted secrets', () => {
  for (const content of ['The s', 'Done.', 'The key is sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz12345']) {
    const verdict = checkReflection({ kind: 'factual', content, topic: 't' });
    assert.ok('refused' in verdict && verdict.refused === 'no_content', JSON.stringify(verdict));
    assert.match((verdict as { why: string }).why, /at least 3 words, 2 of them content words/);
  }
  assert.equal(checkReflection({ kind: 'opinion', content: 'The s' }), { refused: 'invalid' }, 'an invalid kind is invalid first');
});

test.run();
