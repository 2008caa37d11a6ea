/** Prompt-cache-safe placement: which message gets a block, and what is re-applied. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newConversationState } from '../../src/domain/conversation-state.js';
import { forwardedBody, newInsertion, planInjection } from '../../src/conversation/injection.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages as messagesAdapter } from '../../src/protocols/messages/adapter.js';

const state = () => newConversationState('agt', 'c', 'messages', 0);

test('the newest user message gets the retrieval, not tool results or system entries', () => {
  const list = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the build' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'bash', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'error' }] },
  ];
  assert.is(planInjection(messagesAdapter, list, state()).target, -1, 'a tool result is not a new question');
  const asked = [...list, { role: 'user', content: 'Why does it fail?' }, { role: 'system', content: 'reminder' }];
  const plan = planInjection(messagesAdapter, asked, state());
  assert.is(plan.target, 3);
  assert.is(plan.query, 'Why does it fail?');
});

test('a message already seen never gets a new block; an edited one drops its block and later ones', () => {
  const list = [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'two' }];
  const s = { ...state(), seenMessages: 3, insertions: [newInsertion(list, 0, 'B0', 'reflections'), newInsertion(list, 2, 'B2', 'reflections')] };
  const same = planInjection(chatCompletions, list, s);
  assert.is(same.target, -1);
  assert.is(same.kept.length, 2);
  const edited = [list[0], list[1], { role: 'user', content: 'two, edited' }];
  const plan = planInjection(chatCompletions, edited, s);
  assert.equal(plan.kept.map((i) => i.index), [0]);
  assert.is(plan.target, 2, 'the edited message is new again');
});

test('cache_control moving between turns does not invalidate a block', () => {
  const first = [{ role: 'user', content: [{ type: 'text', text: 'q', cache_control: { type: 'ephemeral' } }] }];
  const s = { ...state(), seenMessages: 1, insertions: [newInsertion(first, 0, 'B', 'reflections')] };
  const later = [{ role: 'user', content: [{ type: 'text', text: 'q' }] }, { role: 'assistant', content: 'a' }];
  assert.is(planInjection(messagesAdapter, later, s).kept.length, 1);
});

test('the forwarded body is the client bytes with blocks appended to their messages', () => {
  const raw = Buffer.from('{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"q"}],"tools":[ ]}');
  const body = JSON.parse(raw.toString());
  assert.is(forwardedBody(chatCompletions, { raw, body, offset: 0 }, body.messages, []), raw);
  const out = forwardedBody(chatCompletions, { raw, body, offset: 0 }, body.messages, [newInsertion(body.messages, 1, '<engram-reflections>r</engram-reflections>', 'reflections')]);
  assert.is(out.toString(), '{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"q\\n\\n<engram-reflections>r</engram-reflections>"}],"tools":[ ]}');
});

test.run();
