/**
 * Which requests are a client's chore (`conversation/chore.ts`), on what the real clients
 * send: Claude Code's title request is; its turns, Codex's and Copilot CLI's turns are
 * not; nor is an app's structured-output request without a client session.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { isClientChore } from '../../src/conversation/chore.js';
import { conversationName, openingOf } from '../../src/conversation/identity.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages } from '../../src/protocols/messages/adapter.js';
import { responses } from '../../src/protocols/responses/adapter.js';
import type { JsonObject, ProtocolAdapter } from '../../src/protocols/types.js';

const fixture = (path: string): { headers: IncomingHttpHeaders; body: JsonObject } =>
  JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8'));
const chore = (adapter: ProtocolAdapter, { headers, body }: { headers: IncomingHttpHeaders; body: JsonObject }) =>
  isClientChore(adapter, body, openingOf(conversationName(adapter, body, headers), (id) => id));

test('Claude Code’s title request (recorded from the real binary) is a chore; its turns are not', () => {
  const title = fixture('claude-code/title.json');
  assert.ok(chore(messages, title));
  assert.ok(messages.structuredAnswer(title.body));
  assert.is(messages.offeredTools(title.body).length, 0);
  assert.not.ok(chore(messages, fixture('claude-code/turn-1.json')));
  assert.not.ok(chore(messages, fixture('claude-code/turn-2.json')));
  // The same request with tools to call is a turn of work, whatever format it answers in.
  const withTools = { ...title, body: { ...title.body, tools: [{ name: 'Bash', input_schema: { type: 'object' } }] } };
  assert.not.ok(chore(messages, withTools));
  // The older beta field asks the same.
  const { output_config: _config, ...rest } = title.body;
  assert.ok(chore(messages, { ...title, body: { ...rest, output_format: { type: 'json_schema', schema: {} } } }));
});

test('Codex’s and Copilot CLI’s turns are not chores', () => {
  for (const name of ['http-1-remember', 'http-2-question', 'http-3-tool-output', 'http-4-resumed']) {
    assert.not.ok(chore(responses, fixture(`codex/${name}.json`)), name);
  }
  assert.not.ok(chore(chatCompletions, fixture('copilot-cli/turn-1.json')));
});

test('a structured answer without tools is a chore only inside a client session', () => {
  const body = {
    model: 'm',
    messages: [{ role: 'user', content: 'Name the warehouse as JSON.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'a', schema: {} } },
  };
  assert.not.ok(chore(chatCompletions, { headers: {}, body }), 'an app’s own call keeps its memory');
  assert.ok(chore(chatCompletions, { headers: { 'session-id': 'cli-1' }, body }));
  assert.ok(chore(chatCompletions, { headers: { 'session-id': 'cli-1' }, body: { ...body, response_format: { type: 'json_object' } } }));
  assert.not.ok(chore(chatCompletions, { headers: { 'session-id': 'cli-1' }, body: { ...body, response_format: { type: 'text' } } }));
  const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Title this.' }] }];
  assert.ok(chore(responses, { headers: { 'session-id': 'cli-1' }, body: { model: 'm', input, text: { format: { type: 'json_schema', name: 't', schema: {} } } } }));
  assert.not.ok(chore(responses, { headers: { 'session-id': 'cli-1' }, body: { model: 'm', input } }));
});

test.run();
