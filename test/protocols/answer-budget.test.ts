/**
 * Issue 31: an answer's assembler keeps at most `maxBytes` of it, however long the upstream
 * streams. Each protocol's assembler is fed far more deltas than fit: what it holds stays at
 * the budget (cut at a character's boundary), the answer is still read to its end (its stop
 * reason, whether it is final) and says it was truncated, and with how many bytes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerBudget, utf8Prefix } from '../../src/protocols/answer-budget.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages } from '../../src/protocols/messages/adapter.js';
import { responses } from '../../src/protocols/responses/adapter.js';
import type { SseEvent } from '../../src/protocols/types.js';

const MAX = 64 * 1024;
const DELTA = 'word '.repeat(2_000); // 10,000 bytes
const DELTAS = 1_000; // 10 MB in all

const data = (value: unknown, event = 'message'): SseEvent => ({ event, data: JSON.stringify(value) });
const textOf = (answer: { turns: Array<{ text: string }> }) => answer.turns.map((turn) => turn.text).join('');

test('utf8Prefix never splits a character', () => {
  assert.is(utf8Prefix('héllo', 2), 'h');
  assert.is(utf8Prefix('héllo', 3), 'hé');
  assert.is(utf8Prefix('a😀b', 4), 'a');
  assert.is(utf8Prefix('a😀b', 5), 'a😀');
  assert.is(utf8Prefix('abc', 10), 'abc');
  assert.is(utf8Prefix('abc', 0), '');
});

test('a budget keeps pieces while they fit, cuts the one that crosses, then keeps nothing and counts on', () => {
  const budget = new AnswerBudget(10);
  assert.is(budget.take('abcd'), 'abcd');
  assert.is(budget.truncation(), undefined);
  assert.is(budget.take('efghij'), 'efghij');
  assert.is(budget.truncation(), undefined, 'exactly full is not truncated');
  assert.is(budget.take('k'), '');
  assert.is(budget.take('lmn'), '');
  assert.equal(budget.truncation(), { keptBytes: 10, bytes: 14 });
  const small = new AnswerBudget(5);
  assert.is(small.take('ab😀cd'), 'ab', 'cut before the emoji it cannot hold whole');
  assert.is(small.take('x'), '', 'no piece is spliced on after a gap');
  assert.equal(small.truncation(), { keptBytes: 2, bytes: 9 });
});

test('chat completions: 10 MB of content deltas, 64 KiB kept; the stop is still read', () => {
  const assembler = chatCompletions.createAssembler({ maxBytes: MAX });
  assembler.push(data({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }));
  for (let i = 0; i < DELTAS; i++) assembler.push(data({ choices: [{ index: 0, delta: { content: DELTA } }] }));
  assembler.push(data({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  assembler.push({ event: 'message', data: '[DONE]' });
  const answer = assembler.finish();
  assert.is(textOf(answer).length, MAX);
  assert.ok(DELTA.repeat(7).startsWith(textOf(answer).slice(0, 100)));
  assert.is(answer.final, true);
  assert.equal(answer.truncated, { keptBytes: MAX, bytes: DELTA.length * DELTAS });
});

test('chat completions: tool-call arguments count against the same budget; a call index past the part limit is not assembled', () => {
  const assembler = chatCompletions.createAssembler({ maxBytes: MAX });
  assembler.push(data({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'run', arguments: '' } }] } }] }));
  for (let i = 0; i < 100; i++) assembler.push(data({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: DELTA } }] } }] }));
  assembler.push(data({ choices: [{ index: 0, delta: { tool_calls: [{ index: 1e9, function: { name: 'far', arguments: '{}' } }] } }] }));
  assembler.push(data({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }));
  const answer = assembler.finish();
  assert.ok(textOf(answer).length < MAX + 100);
  assert.not.ok(textOf(answer).includes('far'));
  assert.is(answer.stopReason, 'tool_calls');
  assert.ok(answer.truncated);
});

test('messages: 10 MB of text deltas, 64 KiB kept; message_stop still makes it final', () => {
  const assembler = messages.createAssembler({ maxBytes: MAX });
  assembler.push(data({ type: 'message_start', message: { id: 'msg_1', content: [] } }, 'message_start'));
  assembler.push(data({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'));
  for (let i = 0; i < DELTAS; i++) assembler.push(data({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: DELTA } }, 'content_block_delta'));
  assembler.push(data({ type: 'content_block_stop', index: 0 }, 'content_block_stop'));
  assembler.push(data({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }, 'message_delta'));
  assembler.push(data({ type: 'message_stop' }, 'message_stop'));
  const answer = assembler.finish();
  assert.is(textOf(answer).length, MAX);
  assert.is(answer.final, true);
  assert.equal(answer.truncated, { keptBytes: MAX, bytes: DELTA.length * DELTAS });
});

test('responses: output items are kept while their events fit; the final response, when it comes, stands for them', () => {
  const item = (n: number) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `${n} ${DELTA}` }] });
  const assembler = responses.createAssembler({ maxBytes: MAX });
  for (let i = 0; i < 100; i++) assembler.push(data({ type: 'response.output_item.done', output_index: i, item: item(i) }, 'response.output_item.done'));
  const cut = assembler.finish();
  assert.ok(textOf(cut).length < MAX, 'only the items that fit');
  assert.ok(cut.truncated && cut.truncated.bytes > 100 * DELTA.length);

  const whole = responses.createAssembler({ maxBytes: MAX });
  for (let i = 0; i < 100; i++) whole.push(data({ type: 'response.output_item.done', output_index: i, item: item(i) }, 'response.output_item.done'));
  whole.push(data({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [item(0)] } }, 'response.completed'));
  const answer = whole.finish();
  assert.is(answer.truncated, undefined);
  assert.is(answer.final, true);
});

test('without a budget nothing changes: the whole answer is kept', () => {
  const assembler = chatCompletions.createAssembler();
  for (let i = 0; i < 20; i++) assembler.push(data({ choices: [{ index: 0, delta: { content: DELTA } }] }));
  assembler.push(data({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  const answer = assembler.finish();
  assert.is(textOf(answer).length, 20 * DELTA.length);
  assert.is(answer.truncated, undefined);
});

test.run();
