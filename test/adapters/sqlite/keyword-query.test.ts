import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pruneTerms, queryTerms } from '../../../src/adapters/sqlite/keyword-query.js';
import { keywordTerms } from '../../../src/memory/keywords.js';
import { words } from '../../../src/domain/text.js';

const keywords = suite('keyword query');

keywords('free text becomes distinct stems without function words and one-character words, capped', () => {
  assert.equal(queryTerms('How do I run the "tests" AND NEAR(x, 2)?'), ['run', 'test', 'near']);
  assert.equal(queryTerms('Café CAFÉ cafe'), ['cafe']);
  assert.equal(queryTerms('the of and'), []);
  assert.is(queryTerms(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')).length, 32);
  assert.equal(words('Déjà-vu, naïve_CODE 42'), ['deja', 'vu', 'naive', 'code', '42']);
  assert.equal(keywordTerms('camped camping camps; deployment deploys deploy.sh v2 utf8'), ['camp', 'camp', 'camp', 'deploy', 'deploy', 'deploy', 'sh', 'v2', 'utf8']);
});

keywords('pruning keeps rare terms within the budget and drops near-universal ones', () => {
  const df: Record<string, number> = { rare: 2, mid: 300, common: 900, everywhere: 6000 };
  const frequency = (term: string): number => df[term] ?? 0;
  assert.equal(pruneTerms(['common', 'rare', 'mid', 'everywhere'], frequency, 500, 1000), ['common', 'rare', 'mid', 'everywhere']);
  assert.equal(pruneTerms(['common', 'rare', 'mid', 'everywhere', 'unknown'], frequency, 10_000, 1000), ['unknown', 'rare', 'mid']);
  assert.equal(pruneTerms(['common'], frequency, 10_000, 100), ['common'], 'the rarest term is always kept');
  assert.equal(pruneTerms(['everywhere'], frequency, 10_000, 100), [], 'a term in most documents ranks nothing');
});

keywords.run();
