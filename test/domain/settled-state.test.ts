/**
 * What a settling turn writes over the conversation's latest state: another writer may
 * have come between the request's read and its write (an extraction job moving the
 * watermark, a later turn of the same conversation, an upload), and none of their
 * changes may be undone.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newConversationState, settledState, type ConversationState, type Insertion } from '../../src/domain/conversation-state.js';

const block = (index: number): Insertion => ({ index, messageHash: `m${index}`, block: `<engram-reflections>${index}</engram-reflections>`, kind: 'reflections' });
const read: ConversationState = { ...newConversationState('agt_a', 'c1', 'messages', 1_000), insertions: [block(1)], injectedIds: ['r1'], seenMessages: 2, extractedTurns: 2 };
/** What this turn computed from `read`: one more block, one more reflection, two more messages seen. */
const turn: ConversationState = { ...read, insertions: [block(1), block(3)], injectedIds: ['r1', 'r2'], seenMessages: 4 };

test('a watermark an extraction job moved meanwhile is kept; the turn adds its blocks and activity', () => {
  const current = { ...read, extractedTurns: 6, lastActivityAt: 1_500 };
  const next = settledState(current, turn, { settledAt: 2_000, compacted: false, queued: true });
  assert.is(next.extractedTurns, 6, 'never moved back');
  assert.equal(next.insertions, turn.insertions);
  assert.equal(next.injectedIds, ['r1', 'r2']);
  assert.is(next.seenMessages, 4);
  assert.is(next.lastActivityAt, 2_000);
  assert.is(next.lastFinalAt, 2_000, 'a queued job supersedes older ones');
});

test('a later turn that settled first keeps its blocks; injected ids are the union', () => {
  const later = { ...read, insertions: [block(1), block(3), block(5)], injectedIds: ['r1', 'r9'], seenMessages: 6, lastActivityAt: 3_000, lastFinalAt: 3_000 };
  const next = settledState(later, turn, { settledAt: 2_000, compacted: false, queued: true });
  assert.equal(next.insertions, later.insertions, 'the newer turn’s forwarded body is what the next request extends');
  assert.is(next.seenMessages, 6);
  assert.equal(next.injectedIds.sort(), ['r1', 'r2', 'r9']);
  assert.is(next.lastActivityAt, 3_000);
  assert.is(next.lastFinalAt, 3_000, 'never moved back');
});

test('a compacted history restarts the watermark; no job, no lastFinalAt; a new conversation takes the turn', () => {
  assert.is(settledState({ ...read, extractedTurns: 9 }, turn, { settledAt: 2_000, compacted: true, queued: true }).extractedTurns, 0);
  assert.is(settledState(read, turn, { settledAt: 2_000, compacted: false, queued: false }).lastFinalAt, read.lastFinalAt);
  const opened = settledState(undefined, turn, { settledAt: 2_000, compacted: false, queued: true });
  assert.equal(opened, { ...turn, lastActivityAt: 2_000, lastFinalAt: 2_000 });
});

test('a retried recording that lands after a newer turn undoes none of it, even after a compaction', () => {
  // The newer turn (settled at 3 000) compacted the history: fewer messages than this older turn saw.
  const newer = { ...read, insertions: [block(0)], injectedIds: ['r7'], seenMessages: 2, extractedTurns: 3, lastActivityAt: 3_000, lastFinalAt: 3_000 };
  const older = { ...turn, seenMessages: 4 };
  const next = settledState(newer, older, { settledAt: 2_000, compacted: true, queued: true });
  assert.equal(next.insertions, newer.insertions, 'the newer turn’s blocks stand');
  assert.is(next.seenMessages, 2);
  assert.is(next.extractedTurns, 3, 'the older turn’s compaction does not reset the newer watermark');
  assert.is(next.lastActivityAt, 3_000);
  assert.is(next.lastFinalAt, 3_000);
  assert.equal(next.injectedIds.sort(), ['r1', 'r2', 'r7'], 'what the older turn injected is still remembered');
});

test('the turns counted only grow: a retried older turn does not count them back', () => {
  assert.is(settledState({ ...read, turns: 5 }, { ...turn, turns: 3 }, { settledAt: 2_000, compacted: false, queued: false }).turns, 5);
  assert.is(settledState({ ...read, turns: 3 }, { ...turn, turns: 4 }, { settledAt: 2_000, compacted: false, queued: false }).turns, 4);
});

test('the scope the turn resolved is kept; a retried older turn does not undo a newer one’s', () => {
  const scoped = { ...turn, scope: 'alpha-shop', user: 'alice' };
  const next = settledState(read, scoped, { settledAt: 2_000, compacted: false, queued: true });
  assert.equal([next.scope, next.user], ['alpha-shop', 'alice'], 'a stored state without a scope gets the turn’s');
  const newer = { ...read, scope: 'beta-crm', lastActivityAt: 3_000 };
  assert.is(settledState(newer, scoped, { settledAt: 2_000, compacted: false, queued: true }).scope, 'beta-crm');
});

test.run();
