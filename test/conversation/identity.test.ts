/** Which conversation a request continues: best signal first (DESIGN section 6). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { IncomingHttpHeaders } from 'node:http';
import {
  answeredConversationId,
  conversationName,
  MAX_ANSWERS_TRIED,
  openingOf,
  partitionedConversationId,
  settledConversationId,
} from '../../src/conversation/identity.js';
import { sessionDigestOf } from '../../src/control/conversation-id.js';
import type { JsonObject, ProtocolAdapter } from '../../src/protocols/types.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages } from '../../src/protocols/messages/adapter.js';

const chat = (...contents: string[]) => ({
  model: 'm',
  messages: [{ role: 'system', content: 'You are terse.' }, ...contents.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content }))],
});

/** The id a request names its conversation by before any answer does (the header, the opening). */
const conversationId = (adapter: ProtocolAdapter, body: JsonObject, headers: IncomingHttpHeaders) => openingOf(conversationName(adapter, body, headers), (id) => id);

/** The id the first answer gives a conversation the request `body` opens. */
const named = (body: JsonObject, answer: string, headers: IncomingHttpHeaders = {}) =>
  settledConversationId(undefined, conversationId(chatCompletions, body, headers), [{ role: 'assistant', text: answer }]);

/** The ids a later request tries, oldest answer first. */
const tried = (body: JsonObject, headers: IncomingHttpHeaders = {}) => {
  const name = conversationName(chatCompletions, body, headers);
  return 'opening' in name ? [...name.answers()].map((answer) => answeredConversationId(name.opening, answer)) : [];
};

test('a request holding no answer opens a conversation that its first answer names; later turns find it by that answer', () => {
  const opening = conversationName(chatCompletions, chat('Fix the build'), {});
  assert.ok('opening' in opening && [...opening.answers()].length === 0, 'no earlier answer: nothing to look up');
  const id = named(chat('Fix the build'), 'Done.');
  assert.ok(id);
  assert.equal(tried(chat('Fix the build', 'Done.', 'Now the tests')), [id]);
  assert.equal(tried(chat('Fix the build', 'Done.', 'Now the tests', 'Green.', 'Thanks')), [id, named(chat('Fix the build', 'Done.', 'Now the tests'), 'Green.')]);
  assert.is.not(conversationId(chatCompletions, chat('Write docs'), {}), conversationId(chatCompletions, chat('Fix the build'), {}));
});

test('two chats with the same opening are two conversations from their first answer on', () => {
  const a = named(chat('What is the staging database?'), 'It is db-stage-7.');
  const b = named(chat('What is the staging database?'), 'It moved to db-stage-9.');
  assert.is.not(a, b);
  assert.equal(tried(chat('What is the staging database?', 'It moved to db-stage-9.', 'And its port?')), [b]);
});

test('the answer names the conversation however its spacing and tool arguments are re-serialised', () => {
  const opening = 'h:x';
  const relayed = answeredConversationId(opening, { role: 'assistant', text: 'Sure.\n[tool call Read {"path": "a.ts"}]' });
  const sentBack = answeredConversationId(opening, { role: 'assistant', text: ' Sure. [tool call Read {"path":"a.ts"}]' });
  assert.is(relayed, sentBack);
});

test('answers a client opened with (few-shot) are tried in order, at most a bounded number', () => {
  const shots = Array.from({ length: MAX_ANSWERS_TRIED + 4 }, (_, i) => [`example ${i}`, `answer ${i}`]).flat();
  assert.is(tried(chat(...shots, 'the real question')).length, MAX_ANSWERS_TRIED);
});

test('an answer with no assistant turn names nothing; a found conversation keeps its id', () => {
  assert.is(settledConversationId(undefined, 'h:x', []), undefined);
  assert.is(settledConversationId(undefined, 'h:x', undefined), undefined);
  assert.is(settledConversationId('h:x:y', 'h:x', [{ role: 'assistant', text: 'other' }]), 'h:x:y');
});

test('the explicit header wins over everything', () => {
  const a = conversationId(chatCompletions, chat('one'), { 'x-engram-conversation': 'ticket-42', 'session-id': 's' });
  const b = conversationId(chatCompletions, chat('two'), { 'x-engram-conversation': 'ticket-42' });
  assert.is(a, b);
  assert.match(a, /^x:[A-Za-z0-9_-]{32}$/, 'its digest: the value itself is never kept');
});

test('a client session separates identical openings, and threads within one session stay apart', () => {
  const body = chat('Fix the build');
  const s1 = conversationId(chatCompletions, body, { 'session-id': 'codex-1' });
  const s2 = conversationId(chatCompletions, body, { 'session-id': 'codex-2' });
  assert.is.not(s1, s2);
  assert.is.not(conversationId(chatCompletions, { ...body, prompt_cache_key: 'thread-a' }, {}), conversationId(chatCompletions, { ...body, prompt_cache_key: 'thread-b' }, {}));
  const subAgent = conversationId(chatCompletions, chat('Search the repo for TODOs'), { 'session-id': 'codex-1' });
  assert.is.not(subAgent, s1, 'a sub-agent in the same session is its own thread');
});

test("Claude Code's session, from its header or from metadata.user_id (JSON or the older string)", () => {
  const body = (userId: string) => ({
    model: 'claude',
    system: [{ type: 'text', text: 'You are Claude Code.' }],
    metadata: { user_id: userId },
    messages: [{ role: 'user', content: 'hello' }],
  });
  const json = conversationId(messages, body(JSON.stringify({ device_id: 'd', account_uuid: '', session_id: 'f0e1d2c3-0000-4000-8000-000000000001' })), {});
  const header = conversationId(messages, body('ignored'), { 'x-claude-code-session-id': 'f0e1d2c3-0000-4000-8000-000000000001' });
  assert.is(json, header);
  const legacy = conversationId(messages, body('user_abc_account__session_f0e1d2c3-0000-4000-8000-000000000001'), {});
  assert.is(legacy, json);
  assert.is.not(conversationId(messages, body(JSON.stringify({ session_id: 'other-session-0000' })), {}), json);
});

test('moving cache_control does not change the opening', () => {
  const plain = { model: 'c', system: 'sys', messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }] };
  const marked = { model: 'c', system: 'sys', messages: [{ role: 'user', content: [{ type: 'text', text: 'q', cache_control: { type: 'ephemeral' } }] }] };
  assert.is(conversationId(messages, plain, {}), conversationId(messages, marked, {}));
});

test('an end user’s and a named project’s conversations are apart, and still known as their client session’s', () => {
  const id = conversationId(chatCompletions, chat('Fix the build'), { 'session-id': 'codex-1' });
  const session = sessionDigestOf(id);
  assert.ok(session);
  const variants = [
    partitionedConversationId(id, {}),
    partitionedConversationId(id, { user: 'alice' }),
    partitionedConversationId(id, { scope: 'alpha-shop' }),
    partitionedConversationId(id, { scope: 'beta-crm' }),
    partitionedConversationId(id, { user: 'alice', scope: 'alpha-shop' }),
  ];
  assert.is(variants[0], id, 'neither: unchanged');
  assert.is(new Set(variants).size, variants.length);
  for (const variant of variants) assert.is(sessionDigestOf(variant), session, variant);
  assert.is(sessionDigestOf(partitionedConversationId('h:abc', { user: 'alice', scope: 'x' })), undefined);
});

test.run();
