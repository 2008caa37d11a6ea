/** Prompt-cache-safe placement: which message gets a block, and what is re-applied. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newConversationState } from '../../src/domain/conversation-state.js';
import { forwardedBody, newInsertion, planInjection } from '../../src/conversation/injection.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages as messagesAdapter } from '../../src/protocols/messages/adapter.js';
import { responses } from '../../src/protocols/responses/adapter.js';

const state = () => newConversationState('agt', 'c', 'messages', 0);

test('the newest message gets the retrieval: a user input, or a tool result searched by what it shows', () => {
  const list = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the build' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: { command: 'npm run build' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'error TS2307: Cannot find module ./config' }] },
  ];
  const result = planInjection(messagesAdapter, list, { ...state(), seenMessages: 1 });
  assert.is(result.target, 2, 'the tool result carries the block');
  assert.is(result.carrier, 2);
  assert.is(result.query, 'error TS2307: Cannot find module ./config\nnpm run build');
  const quiet = [
    list[0],
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'TodoWrite', input: { todos: [] } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'Todos updated' }] },
  ];
  const nothing = planInjection(messagesAdapter, quiet, { ...state(), seenMessages: 1 });
  assert.equal([nothing.target, nothing.carrier, nothing.query], [-1, 2, ''], 'nothing to search: no retrieval, the carrier stays');
  const asked = [...list, { role: 'user', content: 'Why does it fail?' }, { role: 'system', content: 'reminder' }];
  const plan = planInjection(messagesAdapter, asked, { ...state(), seenMessages: 3 });
  assert.is(plan.target, 3);
  assert.is(plan.query, 'Why does it fail?');
});

test('a first turn is searched from its newest user input on, not the history it opens with', () => {
  const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/codex');
  const question = JSON.parse(fs.readFileSync(path.join(fixtures, 'http-2-question.json'), 'utf8')).body;
  const plan = planInjection(responses, question.input, state());
  assert.is(plan.query, 'Where is the release checklist?', "Codex's environment context is not searched");
  // A conversation first seen in the middle of a tool loop: the user's request and what followed it.
  const midLoop = [
    { role: 'user', content: 'Deploy to staging please' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{"command":"./deploy.sh staging"}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'Error: AWS_PROFILE is not set' },
  ];
  assert.is(planInjection(chatCompletions, midLoop, state()).query, 'Deploy to staging please\nError: AWS_PROFILE is not set\n./deploy.sh staging');
});

test('a block on a tool result is re-applied byte for byte next turn, beside the reminder that shares its message', () => {
  const list: unknown[] = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the migrations' }] },
    { type: 'function_call', call_id: 'c', name: 'exec_command', arguments: '{"cmd":"npm run migrate"}' },
    { type: 'function_call_output', call_id: 'c', output: 'Error: relation "users" does not exist' },
  ];
  const turn = planInjection(responses, list, { ...state(), seenMessages: 1 });
  assert.is(turn.target, 2);
  const insertions = [newInsertion(list, 2, '<engram-reflections>R</engram-reflections>', 'reflections'), newInsertion(list, 2, '<engram-reminder>M</engram-reminder>', 'reminder')];
  const raw = Buffer.from(JSON.stringify({ model: 'm', input: list }));
  const first = forwardedBody(responses, { raw, body: JSON.parse(raw.toString()), offset: 0 }, list, insertions).toString();
  assert.match(first, '"output":"Error: relation \\"users\\" does not exist\\n\\n<engram-reflections>R</engram-reflections>\\n\\n<engram-reminder>M</engram-reminder>"');

  // Next turn: the answer and a new question; the client re-sends its own (block-free) tool output.
  const next = [...list, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Created it.' }] }, { type: 'message', role: 'user', content: 'Thanks' }];
  const later = planInjection(responses, next, { ...state(), seenMessages: 3, insertions });
  assert.equal(later.kept, insertions, 'both blocks kept, in their order');
  const raw2 = Buffer.from(JSON.stringify({ model: 'm', input: next }));
  const second = forwardedBody(responses, { raw: raw2, body: JSON.parse(raw2.toString()), offset: 0 }, next, later.kept).toString();
  const items = (text: string) => JSON.parse(text).input.map((item: unknown) => JSON.stringify(item));
  assert.equal(items(second).slice(0, 3), items(first), 'the earlier items are byte-identical');
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
