/**
 * Item 5 of the interface, per client naming form: a request that offers Engram's MCP
 * tools gets the root memory index on the conversation's first turn and, later, a
 * reminder when the rule fires (turns without `recall`, a failed tool call). Both sit
 * in the newest message, byte-stable across turns; the client's own bytes are
 * otherwise untouched. A request without the tools gets neither.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
}
const test = suite<Context>('memory tools: index and reminders');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
});
test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

const MARKER = '[engram-memory]';
const schema = { type: 'object', properties: { query: { type: 'string' } } };

/** How one wire protocol spells a request, its tools, and its turns. */
interface Dialect {
  path: string;
  headers(agent: TestAgent): Record<string, string>;
  body(messages: unknown[], tools: unknown[]): Record<string, unknown>;
  list(body: any): any[];
  user(text: string): unknown;
  /** An assistant turn calling `name`, then the tool's result. */
  call(name: string, id: string): unknown[];
  result(id: string, text: string): unknown;
  tool(name: string, description?: string): unknown;
}

const chat: Dialect = {
  path: '/v1/chat/completions',
  headers: (agent) => ({ authorization: `Bearer ${agent.token}` }),
  body: (messages, tools) => ({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a coding agent.' }, ...messages], tools }),
  list: (body) => body.messages,
  user: (text) => ({ role: 'user', content: text }),
  call: (name, id) => [{ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: '{}' } }] }],
  result: (id, text) => ({ role: 'tool', tool_call_id: id, content: text }),
  tool: (name, description = 'A tool') => ({ type: 'function', function: { name, description, parameters: schema } }),
};

const messages: Dialect = {
  path: '/v1/messages',
  headers: (agent) => ({ 'x-engram-api-key': agent.token, 'anthropic-version': '2023-06-01' }),
  body: (list, tools) => ({ model: 'claude-test', max_tokens: 256, system: 'You are a coding agent.', messages: list, tools }),
  list: (body) => body.messages,
  user: (text) => ({ role: 'user', content: [{ type: 'text', text }] }),
  call: (name, id) => [{ role: 'assistant', content: [{ type: 'tool_use', id, name, input: {} }] }],
  result: (id, text) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] }),
  tool: (name, description = 'A tool') => ({ name, description, input_schema: schema }),
};

const responses: Dialect = {
  path: '/v1/responses',
  headers: (agent) => ({ authorization: `Bearer ${agent.token}` }),
  body: (input, tools) => ({ model: 'gpt-test', instructions: 'You are a coding agent.', input, tools, store: false }),
  list: (body) => body.input,
  user: (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }),
  call: (name, id) => [{ type: 'function_call', call_id: id, name, arguments: '{}' }],
  result: (id, text) => ({ type: 'function_call_output', call_id: id, output: text }),
  tool: (name, description = 'A tool') => ({ type: 'function', name, description, parameters: schema }),
};

/** Codex's form: the MCP server's tools inside one namespace tool. */
const codexNamespace = (server: string) => ({
  type: 'namespace',
  name: `mcp__${server}`,
  description: `Tools of the ${server} MCP server`,
  tools: ['recall', 'remember', 'forget', 'memory_index'].map((name) => ({ type: 'function', name, description: `${name} ${MARKER}`, parameters: schema })),
});

async function send(agent: TestAgent, dialect: Dialect, body: unknown, conversation: string) {
  const response = await fetch(agent.baseUrl + dialect.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-engram-conversation': conversation, ...dialect.headers(agent) },
    body: JSON.stringify(body),
  });
  assert.is(response.status, 200, await response.clone().text());
  await response.text();
}

async function agentWithMemory(context: Context): Promise<TestAgent> {
  const agent = await context.engram.createAgent(context.upstream.url);
  context.upstream.enqueue({ type: 'text', text: 'Noted.' });
  await send(agent, chat, chat.body([chat.user('REMEMBER: The deploy script lives in tools/deploy.sh.')], []), `seed-${agent.agentId}`);
  await context.engram.waitForReflections(agent);
  return agent;
}

/**
 * Runs a conversation: a first user turn, then tool round trips (results from `results`),
 * returning what the upstream received on each request.
 */
async function converse(context: Context, agent: TestAgent, dialect: Dialect, tools: unknown[], results: string[]) {
  const conversation = `conv-${Math.random().toString(36).slice(2)}`;
  const history: unknown[] = [dialect.user('Please tidy up the build scripts.')];
  const received: any[] = [];
  const sent: any[] = [];
  for (let turn = 0; turn <= results.length; turn++) {
    if (turn > 0) history.push(...dialect.call('bash', `call_${turn}`), dialect.result(`call_${turn}`, results[turn - 1]));
    const body = dialect.body([...history], tools);
    context.upstream.enqueue({ type: 'tool_call', name: 'bash', arguments: {} });
    await send(agent, dialect, body, conversation);
    sent.push(body);
    received.push(context.upstream.conversationRequests().at(-1)!);
  }
  return { sent, received };
}

/** Each forwarded list extends the previous one byte for byte; everything but the list is the client's. */
function assertStable(dialect: Dialect, sent: any[], received: any[]) {
  for (let turn = 0; turn < received.length; turn++) {
    const { json } = received[turn];
    for (const key of Object.keys(sent[turn])) {
      if (dialect.list(sent[turn]) === sent[turn][key]) continue;
      assert.equal(json[key], sent[turn][key], `turn ${turn + 1}: ${key} untouched`);
    }
    assert.is(dialect.list(json).length, dialect.list(sent[turn]).length, 'no message added or removed');
    if (turn === 0) continue;
    const before = dialect.list(received[turn - 1].json);
    const now = dialect.list(json);
    for (let i = 0; i < before.length; i++) assert.is(JSON.stringify(now[i]), JSON.stringify(before[i]), `turn ${turn + 1} keeps item ${i}`);
  }
}

const blocks = (value: unknown, tag: string) => (JSON.stringify(value).match(new RegExp(`<engram-${tag}>`, 'g')) ?? []).length;

const forms: Array<{ client: string; dialect: Dialect; tools: (d: Dialect) => unknown[]; recall: string }> = [
  { client: 'Claude Code (mcp__engram__recall)', dialect: messages, tools: (d) => [d.tool('Bash'), d.tool('mcp__engram__recall'), d.tool('mcp__engram__remember')], recall: 'mcp__engram__recall' },
  { client: 'Codex over Responses (namespace mcp__engram)', dialect: responses, tools: (d) => [d.tool('exec_command'), codexNamespace('engram')], recall: 'mcp__engram.recall' },
  { client: 'Copilot CLI (engram-recall)', dialect: chat, tools: (d) => [d.tool('bash'), d.tool('engram-recall'), d.tool('engram-remember')], recall: 'engram-recall' },
  { client: 'opencode (engram_recall)', dialect: chat, tools: (d) => [d.tool('bash'), d.tool('engram_recall')], recall: 'engram_recall' },
  { client: 'Crush (mcp_engram_recall)', dialect: messages, tools: (d) => [d.tool('bash'), d.tool('mcp_engram_recall')], recall: 'mcp_engram_recall' },
  { client: 'Agents SDK (bare names with the marker)', dialect: chat, tools: (d) => [d.tool('recall', `Search memory. ${MARKER}`), d.tool('remember', `Store. ${MARKER}`)], recall: 'recall' },
  { client: 'the server registered as `service`', dialect: responses, tools: (d) => [d.tool('mcp__service__recall')], recall: 'mcp__service__recall' },
];

for (const form of forms) {
  test(`${form.client}: the index on the first turn, a reminder after six turns without recall`, async (context) => {
    const agent = await agentWithMemory(context);
    const { dialect } = form;
    const outputs = ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok'];
    const { sent, received } = await converse(context, agent, dialect, form.tools(dialect), outputs);
    assertStable(dialect, sent, received);

    const first = dialect.list(received[0].json);
    assert.is(blocks(first, 'memory-index'), 1, 'the first turn carries the index');
    assert.match(JSON.stringify(first.at(-1)), /<engram-memory-index>[^]*tools\/deploy\.sh[^]*<\/engram-memory-index>/);
    assert.ok(JSON.stringify(first.at(-1)).includes('`' + form.recall + '`'), 'the guide names recall as the client calls it');

    const reminders = received.map((request) => blocks(dialect.list(request.json), 'reminder'));
    // Turns (user input, tool results) counted from the index's turn: the 6th after it fires.
    assert.equal(reminders, [0, 0, 0, 0, 0, 0, 1, 1], `reminders per request: ${reminders}`);
    const last = dialect.list(received[6].json).at(-1);
    assert.match(JSON.stringify(last), '<engram-reminder>', 'the reminder joins the newest message (a tool result)');
    assert.is(blocks(dialect.list(received.at(-1).json), 'memory-index'), 1, 'the index is given once');
  });
}

test('a failed tool call brings a reminder at once; a recall call resets the count', async (context) => {
  const agent = await agentWithMemory(context);
  const dialect = messages;
  const tools = [dialect.tool('bash'), dialect.tool('mcp__engram__recall')];
  const failures = await converse(context, agent, dialect, tools, ['ok', 'ok', 'ok', 'Error: ENOENT: no such file or directory, open build.sh']);
  const reminders = failures.received.map((request) => blocks(dialect.list(request.json), 'reminder'));
  assert.equal(reminders, [0, 0, 0, 0, 1]);
  assert.match(JSON.stringify(dialect.list(failures.received.at(-1).json).at(-1)), 'That tool call failed');
  // Right after the first turn's index, and once for errors in a row.
  const early = await converse(context, agent, dialect, tools, ['Exit code 1\ncat: x: No such file or directory', 'Error: again', 'Error: and again', 'ok', 'Traceback (most recent call last):']);
  assert.equal(early.received.map((request) => blocks(dialect.list(request.json), 'reminder')), [0, 1, 1, 1, 1, 2]);
  const fine = await converse(context, agent, dialect, tools, ['ok', 'ok', 'ok']);
  assert.equal(fine.received.map((request) => blocks(dialect.list(request.json), 'reminder')), [0, 0, 0, 0]);

  // The model calls recall every few turns: no periodic reminder.
  const conversation = 'recalling';
  const history: unknown[] = [dialect.user('Tidy the scripts.')];
  const seen: number[] = [];
  for (let turn = 1; turn <= 8; turn++) {
    const name = turn % 3 === 0 ? 'mcp__engram__recall' : 'bash';
    history.push(...dialect.call(name, `c${turn}`), dialect.result(`c${turn}`, 'ok'));
    context.upstream.enqueue({ type: 'text', text: 'Done.' });
    await send(agent, dialect, dialect.body([...history], tools), conversation);
    seen.push(blocks(dialect.list(context.upstream.conversationRequests().at(-1)!.json), 'reminder'));
  }
  assert.equal(seen, [0, 0, 0, 0, 0, 0, 0, 0], 'recall calls keep reminders away');
});

test('requests without Engram tools (or with another server’s) get neither index nor reminder', async (context) => {
  const agent = await agentWithMemory(context);
  for (const [dialect, tools] of [
    [chat, [chat.tool('bash'), chat.tool('recall', 'Search notes')]],
    [messages, [messages.tool('mcp__notes__recall')]],
    [responses, [codexNamespace('notes')]],
    [chat, []],
  ] as Array<[Dialect, unknown[]]>) {
    const { received, sent } = await converse(context, agent, dialect, tools, ['ok', 'Error: boom', 'ok', 'ok', 'ok', 'ok', 'ok']);
    for (const request of received) {
      assert.is(blocks(request.json, 'memory-index'), 0);
      assert.is(blocks(request.json, 'reminder'), 0);
    }
    assertStable(dialect, sent, received);
  }
});

test('a client whose session-start hook gave it the index does not get it twice', async (context) => {
  const agent = await agentWithMemory(context);
  const hook = await fetch(`${agent.baseUrl}/copilot/session-start?format=claude`, { method: 'POST', headers: { authorization: `Bearer ${agent.token}` } });
  const context_ = ((await hook.json()) as any).hookSpecificOutput.additionalContext as string;
  assert.match(context_, /deploy script/i);
  // Claude Code puts a SessionStart hook's context in a system reminder of the first user message.
  const opening = { role: 'user', content: [{ type: 'text', text: `<system-reminder>\nSessionStart hook additional context: ${context_}\n</system-reminder>` }, { type: 'text', text: 'Please tidy up the build scripts.' }] };
  const body = messages.body([opening], [messages.tool('mcp__engram__recall')]);
  context.upstream.enqueue({ type: 'text', text: 'ok' });
  await send(agent, messages, body, `hooked-${agent.agentId}`);
  const forwarded = context.upstream.conversationRequests().at(-1)!;
  assert.is(blocks(forwarded.json, 'memory-index'), 1, 'only the hook’s copy');
  assert.equal(forwarded.json.messages, body.messages);
});

test('injection turned off: no index either', async (context) => {
  const agent = await agentWithMemory(context);
  await context.engram.api('PATCH', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`, { memory: { inject: false } });
  const { received } = await converse(context, agent, chat, [chat.tool('engram-recall')], ['ok']);
  assert.is(blocks(received[0].json, 'memory-index'), 0);
});

test.run();
