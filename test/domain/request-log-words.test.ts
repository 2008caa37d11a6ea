/**
 * The request log's words (`domain/request-log-words.ts`), the one wording the dashboard
 * and `engram requests` share: every reason and change the port names has its words (the
 * compiler checks the lists against `ports/requests.ts`), and a name a newer server sends
 * is shown as named.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  addedSummary,
  keptChangeText,
  NOTHING_ADDED_REASONS,
  rebuiltBlocksText,
  reasonLabel,
  reasonSentence,
} from '../../src/domain/request-log-words.js';
import { relevanceAgainstBar, relevanceText } from '../../src/domain/relevance-words.js';
import type { KeptChange, NothingAdded, Rebuilt } from '../../src/ports/index.js';

// Compile-time: the words list every reason of the port, and nothing else.
type Missing = Exclude<NothingAdded, (typeof NOTHING_ADDED_REASONS)[number]>;
type Extra = Exclude<(typeof NOTHING_ADDED_REASONS)[number], NothingAdded>;
const complete: [Missing | Extra] extends [never] ? 'complete' : Missing | Extra = 'complete';
const CHANGES: Record<KeptChange, true> = { superseded: true, deleted: true, edited: true, out_of_scope: true };
const BLOCKS: Record<Rebuilt['blocks'][number], true> = { reflections: true, index: true };

test('every reason has a label and a sentence of its own; an older entry without one, and an unknown one, still read', () => {
  assert.is(complete, 'complete');
  const labels = NOTHING_ADDED_REASONS.map(reasonLabel);
  const sentences = NOTHING_ADDED_REASONS.map(reasonSentence);
  assert.is(new Set(labels).size, NOTHING_ADDED_REASONS.length);
  assert.is(new Set(sentences).size, NOTHING_ADDED_REASONS.length);
  for (const [i, reason] of NOTHING_ADDED_REASONS.entries()) {
    assert.not.ok(labels[i].includes('_'), `${reason}: words, not the name`);
    assert.ok(sentences[i].length > labels[i].length, reason);
  }
  assert.is(reasonLabel('under_bar'), 'under the bar');
  assert.match(reasonSentence('under_bar'), "none reached this agent's bar");
  assert.match(reasonSentence(null), 'no reason was recorded');
  assert.is(addedSummary({ injected: [], kept: [], reason: null }), 'none: no reason recorded');
  assert.is(addedSummary({ injected: [], kept: [1], reason: 'already_held' }), 'none: already held, 1 kept');
  assert.is(addedSummary({ injected: [1, 2], kept: [1], reason: null }), '2 injected, 1 kept');
  assert.is(reasonLabel('some_new_reason'), 'some new reason');
});

test('every change of a kept block and every block kind in words; a relevance against the bar', () => {
  for (const change of Object.keys(CHANGES)) assert.not.ok(keptChangeText(change, null).includes('_'), change);
  assert.is(keptChangeText('superseded', 'ref_b'), 'superseded by ref_b, shown in its place');
  assert.match(keptChangeText('superseded', null), 'dropped');
  assert.is(keptChangeText('renamed', null), 'renamed');
  assert.is(rebuiltBlocksText(Object.keys(BLOCKS)), 'the relevant reflections and the root memory index');
  assert.is(rebuiltBlocksText(['index']), 'the root memory index');
  assert.is(relevanceText(0.2), '0.20');
  assert.is(relevanceText(-0.049), '-0.05');
  assert.is(relevanceAgainstBar(0.2, 0.2), "relevance 0.20, at or above this agent's bar of 0.20");
  assert.is(relevanceAgainstBar(0.1949, 0.2), "relevance 0.19, under this agent's bar of 0.20");
});

test.run();
