/**
 * The extraction watermark's rules, the one place the proxy, uploads and the consumer
 * take them from: what a new job covers, when a history restarts it, which job a newer
 * one replaces, and what a consumer handed a job still has to do.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { extractedUpTo, jobTurns, markAllExtracted, markQueued, newConversationState, pendingTurns, type ConversationState } from '../../src/domain/conversation-state.js';
import type { ExtractionJob } from '../../src/memory/extraction-job.js';

const state = (fields: Partial<ConversationState>): ConversationState => ({ ...newConversationState('agt_a', 'c1', 'messages', 1_000), ...fields });
const job = (fields: Partial<ExtractionJob>): ExtractionJob => ({
  agentId: 'agt_a',
  orgId: 'org_a',
  conversationId: 'c1',
  protocol: 'messages',
  model: 'm',
  firstTurn: 0,
  turns: [],
  turnCount: 4,
  settledAt: 2_000,
  ...fields,
});

test('a new job starts at the watermark; a history that no longer extends it starts again from 0', () => {
  assert.equal(pendingTurns(undefined, 2), { from: 0, restarted: false }, 'a new conversation');
  assert.equal(pendingTurns(state({ extractedTurns: 4 }), 6), { from: 4, restarted: false }, 'grown by two turns');
  assert.equal(pendingTurns(state({ extractedTurns: 4 }), 4), { from: 4, restarted: false }, 'nothing new yet');
  assert.equal(pendingTurns(state({ extractedTurns: 6 }), 3), { from: 0, restarted: true }, 'compacted to 3 turns');
  assert.equal(pendingTurns(state({ extractedTurns: 4 }), 8, { rewritten: true }), { from: 0, restarted: true }, 'a rewritten transcript');
});

test('a queued job marks itself the newest; a restart resets the watermark unless a newer turn already wrote', () => {
  const read = state({ extractedTurns: 6, lastFinalAt: 1_500 });
  assert.equal(markQueued(read, { settledAt: 2_000, queued: true, restarted: false }), { ...read, lastFinalAt: 2_000 });
  assert.equal(markQueued(read, { settledAt: 2_000, queued: false, restarted: false }), read, 'no job: nothing superseded');
  assert.is(markQueued(read, { settledAt: 2_000, queued: true, restarted: true }).extractedTurns, 0);
  assert.is(markQueued(read, { settledAt: 2_000, queued: true, restarted: true, newer: true }).extractedTurns, 6, "the newer turn's watermark stands");
  assert.is(markQueued(state({ lastFinalAt: 3_000 }), { settledAt: 2_000, queued: true, restarted: false }).lastFinalAt, 3_000, 'never moved back');
});

test('a transcript learnt through the proxy counts as extracted, never moving the watermark back', () => {
  assert.is(markAllExtracted(state({ extractedTurns: 2 }), 5).extractedTurns, 5);
  assert.is(markAllExtracted(state({ extractedTurns: 9 }), 5).extractedTurns, 9);
});

test('a consumer skips a job a newer one replaced or the watermark covers, and resumes after what is done', () => {
  assert.equal(jobTurns(undefined, job({})), { from: 0 });
  assert.equal(jobTurns(state({ lastFinalAt: 2_500 }), job({})), { skip: 'superseded by a newer job' });
  assert.equal(jobTurns(state({ lastFinalAt: 2_000 }), job({})), { from: 0 }, 'its own mark');
  assert.equal(jobTurns(state({ extractedTurns: 4 }), job({})), { skip: 'already extracted' });
  assert.equal(jobTurns(state({ extractedTurns: 3 }), job({ firstTurn: 1 })), { from: 3 }, 'a redelivery after a chunk');
  assert.equal(jobTurns(state({ extractedTurns: 0 }), job({ firstTurn: 2 })), { from: 2 }, 'the job holds only its new turns');
});

test('an extracted job moves the watermark forward only', () => {
  assert.is(extractedUpTo(state({ extractedTurns: 2 }), 4)?.extractedTurns, 4);
  assert.is(extractedUpTo(state({ extractedTurns: 4 }), 4), undefined, 'already there: nothing to write');
  assert.is(extractedUpTo(state({ extractedTurns: 6 }), 4), undefined, 'a later job went further');
});

test.run();
