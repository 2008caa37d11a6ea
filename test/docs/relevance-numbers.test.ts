/**
 * The relevance numbers of the README and the docs (docs/retrieval.md above all) are the
 * code's (issue 32, one relevance scale): the default bar is
 * `DEFAULT_MEMORY_SETTINGS.minScore`, each embedder's calibrated cosine and named-term
 * lift are its `relevance` calibration, and the offset the docs give (relevance = cosine
 * minus it) is the one `relevanceRule` subtracts. A calibration or a default that changes
 * fails here until the docs say the new numbers.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import { createLocalEmbedder, LOCAL_EMBEDDER_ID } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder, SEMANTIC_EMBEDDER_ID } from '../../src/memory/embedders/semantic-embedder.js';
import { CALIBRATED_MIN_SCORE, relevanceRule } from '../../src/memory/retrieval.js';
import { PAGES } from '../support/docs.js';

/** README.md and every docs page, one after the other. */
const docs = PAGES.map((page) => page.text).join('\n');
const semantic = createSemanticEmbedder(loadWordVectors());
const hashed = createLocalEmbedder();

/** The numbers `pattern` captures in the docs (it must be there). */
function numbers(pattern: RegExp): number[] {
  const match = pattern.exec(docs);
  assert.ok(match, `the docs say ${pattern}`);
  return match!.slice(1).map(Number);
}

const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

test('the default bar: every "`min_score` (… by default)" and the bold row of the table is DEFAULT_MEMORY_SETTINGS.minScore', () => {
  const defaults = [...docs.matchAll(/`min_score`[^()]{0,30}?\((?:`--min-score`, )?(\d\.\d+) by default[):]/g)].map((match) => Number(match[1]));
  assert.ok(defaults.length >= 3, `${defaults.length} mentions`);
  for (const value of defaults) assert.is(value, DEFAULT_MEMORY_SETTINGS.minScore);
  assert.equal(numbers(/\| \*\*(\d\.\d+)\*\* \(default\) \|/), [DEFAULT_MEMORY_SETTINGS.minScore]);
  assert.is(CALIBRATED_MIN_SCORE, DEFAULT_MEMORY_SETTINGS.minScore, 'the calibrated bar sits at the default');
  assert.not.match(docs, /cosine bar of|is the cosine bar itself/, 'no bar spoken of on the cosine scale');
});

test('the calibration: the calibrated cosines and the offsets are the embedders\', named', () => {
  const [semanticCosine, hashedCosine] = numbers(/the calibrated bar is a cosine of (\d\.\d+) for the\s+default embedder \(`[^`]+`\) and (\d\.\d+) for hashed words alone/);
  const [semanticId, hashedId] = /default embedder \(`([^`]+)`\) and [\d.]+ for hashed words alone\s+\(`([^`]+)`\)/.exec(docs)!.slice(1);
  assert.equal([semanticId, hashedId], [SEMANTIC_EMBEDDER_ID, LOCAL_EMBEDDER_ID]);
  assert.is(semanticCosine, semantic.relevance!.minCosine);
  assert.is(hashedCosine, hashed.relevance!.minCosine);

  const [semanticOffset, hashedOffset] = numbers(/relevance is the cosine minus (\d\.\d+)\s+\(hashed words: minus (\d\.\d+)\)/);
  assert.ok(close(semanticOffset, relevanceRule(semantic, DEFAULT_MEMORY_SETTINGS.minScore).offset), `${semanticOffset}`);
  assert.ok(close(hashedOffset, relevanceRule(hashed, DEFAULT_MEMORY_SETTINGS.minScore).offset), `${hashedOffset}`);
  const [relevance, cosine] = numbers(/\b[Aa] relevance of (\d\.\d+) is a cosine of (\d\.\d+)/);
  assert.equal([relevance, cosine], [DEFAULT_MEMORY_SETTINGS.minScore, semantic.relevance!.minCosine]);
});

test('a named term\'s lift is the embedders\' named bonus', () => {
  const [semanticBonus, hashedBonus] = numbers(/lifts the relevance of the\s+reflections naming it \(below\) by up to (\d\.\d+) \((\d\.\d+) for hashed words alone\)/);
  assert.is(semanticBonus, semantic.relevance!.namedBonus);
  assert.is(hashedBonus, hashed.relevance!.namedBonus);
});

test.run();
