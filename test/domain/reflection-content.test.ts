/**
 * The one rule of what says enough to be a reflection: at least 3 words, 2 of them content
 * words. Refuses fragments ("The s") and keeps every reflection of the evaluation sets.
 */
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { contentProblem, MIN_CONTENT_WORDS, MIN_WORDS, wordCount } from '../../src/domain/reflection-content.js';
import { SETS } from '../../bench/eval/sets.js';
import { locomoFile } from '../../bench/eval/locomo.js';

test('fragments and filler are refused, with the counts in the words of the refusal', () => {
  for (const text of ['The s', 'Done.', 'A fact.', 'it is what it is', 'Use pnpm.', '  ', 'The key is [REDACTED:openai_key]']) {
    assert.ok(contentProblem(text), JSON.stringify(text));
  }
  assert.is(
    contentProblem('The s'),
    'a reflection needs at least 3 words, 2 of them content words (words such as "the", "is" or "to" do not count), to say something a later request can use: it has 2 words, no content words',
  );
  assert.match(contentProblem('A fact.')!, /it has 2 words, 1 content word$/);
});

test('a short sentence that says something is kept: names, numbers, identifiers, scripts without spaces', () => {
  for (const text of ['Tests use uvu.', 'Port is 8443', 'The queue is nats.', 'Run make ship.', 'Builds use pnpm.', 'Deploy with tools/deploy.sh', 'Les tests utilisent uvu.', '使用pnpm安装依赖', 'ビルドはpnpmを使う']) {
    assert.is(contentProblem(text), undefined, JSON.stringify(text));
  }
  assert.equal(wordCount('The API key is [REDACTED:openai_key]'), { words: 4, contentWords: 2 }, 'a redacted secret is no word of it');
  assert.equal(wordCount('使用pnpm'), { words: 3, contentWords: 3 });
});

test('no reflection of the evaluation sets is refused, and the shortest of them sit at the bar', () => {
  const texts = SETS.flatMap((set) => set.REFLECTIONS.map((reflection) => reflection.content));
  const file = locomoFile();
  // The LoCoMo dev set lies beside the repository (or ENGRAM_EVAL_LOCOMO); the injection sets are in it.
  if (file) {
    const locomo = JSON.parse(readFileSync(file, 'utf8')) as { conversations: Array<{ observations: Array<{ text: string }> }> };
    texts.push(...locomo.conversations.flatMap((conversation) => conversation.observations.map((observation) => observation.text)));
  }
  assert.ok(texts.length >= 100, `${texts.length} reflections`);
  assert.equal(texts.filter((text) => contentProblem(text) !== undefined), []);
  if (file) {
    const counts = texts.map(wordCount);
    assert.is(Math.min(...counts.map((count) => count.words)), MIN_WORDS, 'the bar is the shortest kept, not below it');
    assert.is(Math.min(...counts.map((count) => count.contentWords)), MIN_CONTENT_WORDS);
  }
});

test.run();
