/** Which conversation a request continues: best signal first (DESIGN section 6). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { conversationId, partitionedConversationId } from '../../src/conversation/identity.js';
import { sessionDigestOf } from '../../src/domain/conversation-id.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages } from '../../src/protocols/messages/adapter.js';

const chat = (...contents: string[]) => ({
  model: 'm',
  messages: [{ role: 'system', content: 'You are terse.' }, ...contents.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content }))],
});

test('later turns of a conversation keep its id; another opening is another conversation', () => {
  const first = conversationId(chatCompletions, chat('Fix the build'), {});
  assert.is(conversationId(chatCompletions, chat('Fix the build', 'Done.', 'Now the tests'), {}), first);
  assert.is.not(conversationId(chatCompletions, chat('Write docs'), {}), first);
});

test('the explicit header wins over everything', () => {
  const a = conversationId(chatCompletions, chat('one'), { 'x-engram-conversation': 'ticket-42', 'session-id': 's' });
  const b = conversationId(chatCompletions, chat('two'), { 'x-engram-conversation': 'ticket-42' });
  assert.is(a, b);
  assert.is(a, 'x:ticket-42');
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
