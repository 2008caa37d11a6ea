/** Which nudge a turn's newest message gets, decided before anything is read: the index, a reminder, or none. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Insertion } from '../../src/domain/conversation-state.js';
import { REMINDER_EVERY } from '../../src/conversation/memory-tools.js';
import { nudgeDue, type NudgeDraft } from '../../src/conversation/steps/memory-nudge.js';
import { PROTOCOLS } from '../../src/protocols/index.js';

const servers = ['engram'];
const user = (text: string) => ({ role: 'user', content: text });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });
const failedTool = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Error: ENOENT: no such file', is_error: true }] };
const block = (index: number, kind: Insertion['kind']): Insertion => ({ index, messageHash: `m${index}`, block: `<${kind}>`, kind });

const draft = (messages: unknown[], insertions: Insertion[], raw = Buffer.from(JSON.stringify({ messages }))): NudgeDraft => ({
  adapter: PROTOCOLS.messages,
  raw,
  messages,
  carrier: messages.length - 1,
  insertions,
});

test('the first turn gets the index, unless the client already holds one', () => {
  const messages = [user('hello')];
  assert.is(nudgeDue(draft(messages, []), servers), 'index');
  const hooked = Buffer.from(JSON.stringify({ system: 'session start: <engram-memory-index>…</engram-memory-index>', messages }));
  assert.is(nudgeDue(draft(messages, [], hooked), servers), undefined, 'a session-start hook gave it');
  // JSON encoders may write `<` as \u003c: the tag is found without it.
  const escaped = Buffer.from(JSON.stringify({ system: '\\u003cengram-memory-index>…', messages }));
  assert.is(nudgeDue(draft(messages, [], escaped), servers), undefined, 'escaped by the encoder');
});

test('a reminder after enough turns without recall, or at once after a failed tool call', () => {
  const turns = (count: number) => Array.from({ length: count }, (_, i) => [user(`q${i}`), assistant(`a${i}`)]).flat();
  const quiet = [...turns(REMINDER_EVERY - 1), user('next')];
  assert.is(nudgeDue(draft(quiet, [block(0, 'index')]), servers), undefined, 'too soon');
  const long = [...turns(REMINDER_EVERY), user('next')];
  assert.is(nudgeDue(draft(long, [block(0, 'index')]), servers), 'periodic');
  assert.is(nudgeDue(draft([user('q'), assistant('a'), failedTool], [block(0, 'index')]), servers), 'failure');
});

test.run();
