/**
 * Retrieval on what is new in a turn, end to end: an agent's tool fails, and the request
 * that hands the failure back to the model gets the reflection about that error, appended
 * to that tool result; the next request re-sends it byte for byte and injects it nowhere
 * else. Driven by the official SDKs in each client's shape (Copilot CLI's chat completions,
 * Claude Code's messages, Codex's Responses), against the real SQLite store.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('reflections for a tool result');

const LESSON = 'When npm run migrate fails with relation "users" does not exist, create the database first with npm run db:create.';
const FAILURE = [
  '> app@1.0.0 migrate',
  '> node scripts/migrate.js',
  '',
  'Error: relation "users" does not exist',
  '    at Parser.parseErrorMessage (node_modules/pg-protocol/dist/parser.js:287:98)',
  '    at async migrate (scripts/migrate.js:14:5)',
  '',
  'Process exited with code 1',
].join('\n');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
  const { orgId, agentId } = context.agent;
  for (const body of [
    { content: LESSON, kind: 'procedural', topic: 'database migrations' },
    { content: 'The release checklist lives in docs/RELEASE.md.', kind: 'factual', topic: 'release' },
    { content: 'The payments service config lives in config/payments.yaml.', kind: 'factual', topic: 'payments' },
  ]) {
    const added = await context.engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, body);
    assert.is(added.status, 201, JSON.stringify(added.json));
  }
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** One client's way through its SDK: send the history, and turn an answer's tool call and its output into history. */
interface Client {
  name: string;
  /** The request's message list as the upstream received it. */
  list(json: any): any[];
  send(context: Context, history: unknown[], conversation: string): Promise<{ answer: any; injected: number }>;
  /** The answer's tool call and the tool's output, as the client appends them. */
  roundTrip(answer: any, output: string): unknown[];
  call(command: string): { name: string; arguments: Record<string, unknown> };
  /** The first user message. */
  user(text: string): unknown;
}

const headers = (conversation: string) => ({ 'x-engram-conversation': conversation });
const injectedOf = (response: Response) => Number(response.headers.get('x-engram-injected'));
const openai = ({ agent }: Context) => new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });

const clients: Client[] = [
  {
    name: 'Copilot CLI (chat completions, openai SDK)',
    list: (json) => json.messages,
    async send(context, history, conversation) {
      const { data, response } = await openai(context)
        .chat.completions.create(
          {
            model: 'gpt-test',
            messages: [{ role: 'system', content: 'You are the GitHub Copilot CLI.' }, ...(history as OpenAI.ChatCompletionMessageParam[])],
            tools: [{ type: 'function', function: { name: 'bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
          },
          { headers: headers(conversation) },
        )
        .withResponse();
      return { answer: data, injected: injectedOf(response) };
    },
    roundTrip(answer, output) {
      const call = answer.choices[0].message.tool_calls[0];
      return [{ role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: output }];
    },
    call: (command) => ({ name: 'bash', arguments: { command } }),
    user: (text) => ({ role: 'user', content: text }),
  },
  {
    name: 'Claude Code (messages, Anthropic SDK), with Engram’s tools',
    list: (json) => json.messages,
    async send({ agent }, history, conversation) {
      const sdk = new Anthropic({ baseURL: agent.baseUrl, apiKey: agent.token, maxRetries: 0 });
      const schema = { type: 'object' as const, properties: { command: { type: 'string' } } };
      const { data, response } = await sdk.messages
        .create(
          {
            model: 'claude-test',
            max_tokens: 512,
            system: 'You are Claude Code.',
            messages: history as Anthropic.MessageParam[],
            tools: [
              { name: 'Bash', description: 'Run a command', input_schema: schema },
              { name: 'mcp__engram__recall', description: 'Search memory', input_schema: schema },
            ],
          },
          { headers: headers(conversation) },
        )
        .withResponse();
      return { answer: data, injected: injectedOf(response) };
    },
    roundTrip(answer, output) {
      const use = answer.content.find((block: any) => block.type === 'tool_use');
      return [
        { role: 'assistant', content: answer.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: output, is_error: true }] },
      ];
    },
    call: (command) => ({ name: 'Bash', arguments: { command } }),
    user: (text) => ({ role: 'user', content: [{ type: 'text', text }] }),
  },
  {
    name: 'Codex (Responses, openai SDK)',
    list: (json) => json.input,
    async send(context, history, conversation) {
      const { data, response } = await openai(context)
        .responses.create(
          {
            model: 'gpt-test',
            instructions: 'You are Codex.',
            input: history as OpenAI.Responses.ResponseInput,
            store: false,
            tools: [{ type: 'function', name: 'exec_command', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }],
          },
          { headers: headers(conversation) },
        )
        .withResponse();
      return { answer: data, injected: injectedOf(response) };
    },
    roundTrip(answer, output) {
      const call = answer.output.find((item: any) => item.type === 'function_call');
      return [
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output },
      ];
    },
    call: (command) => ({ name: 'exec_command', arguments: { cmd: command } }),
    user: (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }),
  },
];

const count = (value: unknown, tag: string) => (JSON.stringify(value).match(new RegExp(`<engram-${tag}>`, 'g')) ?? []).length;

for (const client of clients) {
  test(`${client.name}: the failing tool result gets the reflection about its error, once`, async (context) => {
    const { upstream } = context;
    const conversation = `tool-result-${clients.indexOf(client)}`;
    const history: unknown[] = [client.user('Work through the open items in NOTES.md')];

    // Turn 1: the task; the model runs the migrations.
    upstream.enqueue({ type: 'tool_call', ...client.call('npm run migrate') });
    const first = await client.send(context, history, conversation);
    assert.is(first.injected, 0, 'nothing in memory is about the task as worded');
    const opening = client.list(upstream.conversationRequests().at(-1)!.json);

    // Turn 2: the migrations failed; the request handing the failure back gets the lesson.
    history.push(...client.roundTrip(first.answer, FAILURE));
    upstream.enqueue({ type: 'tool_call', ...client.call('npm run migrate -- --verbose') });
    const second = await client.send(context, history, conversation);
    assert.is(second.injected, 1);
    const forwarded = client.list(upstream.conversationRequests().at(-1)!.json);
    const carrier = JSON.stringify(forwarded.at(-1));
    assert.match(carrier, /<engram-reflections>[^]*npm run db:create[^]*<\/engram-reflections>/, 'appended to the tool result');
    assert.not.match(carrier, 'docs/RELEASE.md', 'only the reflection about the error');
    const offset = forwarded.length - history.length; // the system message chat completions carries in the list
    for (let i = 0; i < forwarded.length - 1; i++) {
      // The first turn as forwarded then (with the memory index, for a client with Engram's tools), then the client's own.
      const expected = i < opening.length ? opening[i] : history[i - offset];
      assert.is(JSON.stringify(forwarded[i]), JSON.stringify(expected), `message ${i} unchanged`);
    }
    assert.is(count(forwarded.slice(0, -1), 'reflections'), 0, 'the block joins the newest message only');

    // Turn 3: the same error again. The lesson is re-sent where it was, byte for byte, and not injected again.
    history.push(...client.roundTrip(second.answer, FAILURE));
    upstream.enqueue({ type: 'text', text: 'The database does not exist yet; run npm run db:create first.' });
    const third = await client.send(context, history, conversation);
    assert.is(third.injected, 0, 'already in the conversation');
    const next = client.list(upstream.conversationRequests().at(-1)!.json);
    for (let i = 0; i < forwarded.length; i++) {
      assert.is(JSON.stringify(next[i]), JSON.stringify(forwarded[i]), `turn 3 keeps message ${i} of turn 2`);
    }
    assert.is(count(next, 'reflections'), 1, 'one block in the whole conversation');
    assert.is(count(next.at(-1), 'reflections'), 0, 'none on the newest tool result');
  });
}

test('Claude Code: the failure reminder and the reflections share the tool result, and both survive the next turn', async (context) => {
  const client = clients[1];
  const { upstream } = context;
  const conversation = 'tool-result-reminder';
  const history: unknown[] = [client.user('Work through the open items in NOTES.md')];
  upstream.enqueue({ type: 'tool_call', ...client.call('npm run migrate') });
  const first = await client.send(context, history, conversation);
  history.push(...client.roundTrip(first.answer, FAILURE));
  upstream.enqueue({ type: 'tool_call', ...client.call('npm run db:create') });
  const second = await client.send(context, history, conversation);
  assert.is(second.injected, 1);
  const forwarded = client.list(upstream.conversationRequests().at(-1)!.json);
  const added = forwarded.at(-1).content.slice(1).map((block: any) => block.text.slice(0, block.text.indexOf('>') + 1));
  assert.equal(added, ['<engram-reflections>', '<engram-reminder>'], 'after the tool result: the reflections, then the reminder');

  history.push(...client.roundTrip(second.answer, 'Created database app_dev'));
  upstream.enqueue({ type: 'text', text: 'Done.' });
  await client.send(context, history, conversation);
  const next = client.list(upstream.conversationRequests().at(-1)!.json);
  assert.is(JSON.stringify(next[forwarded.length - 1]), JSON.stringify(forwarded.at(-1)), 'both blocks re-applied byte for byte');
});

test.run();
