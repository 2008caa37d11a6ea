/**
 * The memory loop, per protocol: a conversation teaches, it settles, extraction stores
 * a reflection, and a later conversation gets it injected. Plus prompt-cache safety
 * over three turns.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { transcriptOf } from '../support/transcripts.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
}
const test = suite<Context>('memory loop');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

interface Dialect {
  name: string;
  path: string;
  headers(agent: TestAgent): Record<string, string>;
  body(messages: unknown[], extra?: Record<string, unknown>): Record<string, unknown>;
  user(text: string): unknown;
  assistant(text: string): unknown;
  /** The message list and the system prompt of a request body in this dialect. */
  list(body: any): any[];
  system(body: any): unknown;
  tools: unknown[];
}

const bashSchema = { type: 'object', properties: { cmd: { type: 'string' } } };

const dialects: Dialect[] = [
  {
    name: 'chat completions',
    path: '/v1/chat/completions',
    headers: (agent) => ({ authorization: `Bearer ${agent.token}` }),
    body: (messages, extra = {}) => ({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a helpful coding agent.' }, ...messages], ...extra }),
    user: (text) => ({ role: 'user', content: text }),
    assistant: (text) => ({ role: 'assistant', content: text }),
    list: (body) => body.messages,
    system: (body) => body.messages[0],
    tools: [{ type: 'function', function: { name: 'bash', description: 'Run a command', parameters: bashSchema } }],
  },
  {
    name: 'messages',
    path: '/v1/messages',
    headers: (agent) => ({ 'x-engram-api-key': agent.token, 'anthropic-version': '2023-06-01' }),
    body: (messages, extra = {}) => ({ model: 'claude-test', max_tokens: 512, system: 'You are a helpful coding agent.', messages, ...extra }),
    user: (text) => ({ role: 'user', content: [{ type: 'text', text }] }),
    assistant: (text) => ({ role: 'assistant', content: [{ type: 'text', text }] }),
    list: (body) => body.messages,
    system: (body) => body.system,
    tools: [{ name: 'bash', description: 'Run a command', input_schema: bashSchema, cache_control: { type: 'ephemeral' } }],
  },
  {
    name: 'responses',
    path: '/v1/responses',
    headers: (agent) => ({ authorization: `Bearer ${agent.token}` }),
    body: (input, extra = {}) => ({ model: 'gpt-test', instructions: 'You are a helpful coding agent.', input, store: false, ...extra }),
    user: (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }),
    assistant: (text) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }),
    list: (body) => body.input,
    system: (body) => body.instructions,
    tools: [{ type: 'function', name: 'bash', description: 'Run a command', parameters: bashSchema }],
  },
];

async function send(engram: TestEngram, agent: TestAgent, dialect: Dialect, body: unknown, stream = false) {
  const response = await fetch(agent.baseUrl + dialect.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...dialect.headers(agent) },
    body: JSON.stringify({ ...(body as object), stream }),
  });
  const text = await response.text();
  return { status: response.status, injected: Number(response.headers.get('x-engram-injected')), text };
}

async function reflectionsOf(engram: TestEngram, agent: TestAgent): Promise<any[]> {
  const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`);
  assert.is(listed.status, 200);
  return listed.json.data ?? listed.json.reflections ?? listed.json;
}

/** Teaches facts in one settled conversation and waits until they are stored. */
async function teach(context: Context, agent: TestAgent, dialect: Dialect, facts: string[], stream: boolean) {
  context.upstream.enqueue({ type: 'text', text: 'Noted, I will keep that in mind.' });
  const taught = await send(
    context.engram,
    agent,
    dialect,
    dialect.body([dialect.user(facts.map((fact) => `REMEMBER: ${fact}`).join('\n'))]),
    stream,
  );
  assert.is(taught.status, 200);
  return eventually(async () => {
    const stored = await reflectionsOf(context.engram, agent);
    return stored.length >= facts.length ? stored : undefined;
  }, 10_000, 'reflections to be extracted');
}

for (const dialect of dialects) {
  for (const stream of [false, true]) {
    test(`${dialect.name} (${stream ? 'streaming' : 'JSON'}): teach, settle, recall`, async (context) => {
      const agent = await context.engram.createAgent(context.upstream.url);
      const stored = await teach(context, agent, dialect, ['The deploy script lives in tools/deploy.sh and needs the staging profile.'], stream);
      assert.ok(stored.some((r: any) => r.content.includes('tools/deploy.sh')));
      const extraction = context.upstream.extractionRequests().at(-1)!;
      assert.ok(JSON.stringify(extraction.json).includes('record_reflections'));

      context.upstream.enqueue({ type: 'text', text: 'Run tools/deploy.sh.' });
      const asked = await send(context.engram, agent, dialect, dialect.body([dialect.user('Where is the deploy script kept?')]), stream);
      assert.is(asked.status, 200);
      assert.ok(asked.injected >= 1, `x-engram-injected is ${asked.injected}`);
      const forwarded = JSON.stringify(context.upstream.conversationRequests().at(-1)!.json);
      assert.match(forwarded, /<engram-reflections>[^]*tools\/deploy\.sh[^]*<\/engram-reflections>/);
    });
  }
}

for (const dialect of dialects) {
  test(`${dialect.name}: prompt-cache safety over three turns`, async (context) => {
    const agent = await context.engram.createAgent(context.upstream.url);
    await teach(context, agent, dialect, [
      'The deploy script lives in tools/deploy.sh.',
      'Database migrations are run with npm run migrate before the tests.',
      'Never push to the release branch directly; open a pull request.',
    ], false);

    const tools = dialect.tools;
    const questions = ['Where is the deploy script?', 'How do I run the database migrations?', 'Can I push to the release branch?'];
    const history: unknown[] = [];
    const forwarded: any[] = [];
    const conversation = { 'x-engram-conversation': `cache-${dialect.name}` };
    for (const [turn, question] of questions.entries()) {
      history.push(dialect.user(question));
      // The client moves its cache breakpoint to the newest message each turn, as Claude Code does.
      const messages = history.map((message: any, index) =>
        dialect.name === 'messages' && message.role === 'user' && index === history.length - 1
          ? { ...message, content: message.content.map((block: any) => ({ ...block, cache_control: { type: 'ephemeral' } })) }
          : message,
      );
      const body = dialect.body(messages, { tools });
      context.upstream.enqueue({ type: 'text', text: `Answer ${turn + 1}.` });
      const response = await fetch(agent.baseUrl + dialect.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...dialect.headers(agent), ...conversation },
        body: JSON.stringify(body),
      });
      assert.is(response.status, 200);
      await response.text();
      const { json: received, raw } = context.upstream.conversationRequests().at(-1)!;
      forwarded.push(received);
      const system = dialect.system(body);
      assert.ok(raw.includes(JSON.stringify(tools)) && raw.includes(JSON.stringify(system)), 'system prompt and tools are byte-identical');
      assert.equal(received.tools, tools, 'tools reach the upstream as the client sent them');
      assert.equal(dialect.system(received), system, 'system prompt untouched');
      history.push(dialect.assistant(`Answer ${turn + 1}.`));
    }
    const strip = (value: unknown) => JSON.stringify(value, (key, inner) => (key === 'cache_control' ? undefined : inner));
    for (let turn = 1; turn < forwarded.length; turn++) {
      const before = dialect.list(forwarded[turn - 1]);
      const now = dialect.list(forwarded[turn]);
      for (let index = 0; index < before.length; index++) {
        assert.is(strip(now[index]), strip(before[index]), `turn ${turn + 1} keeps message ${index} of turn ${turn}`);
      }
    }
    const all = JSON.stringify(forwarded.at(-1));
    assert.ok((all.match(/<engram-reflections>/g) ?? []).length >= 2, 'several turns added their own block');
  });
}

test('messages: the block joins the user turn even when a system entry follows it (Claude Code)', async (context) => {
  const dialect = dialects[1];
  const agent = await context.engram.createAgent(context.upstream.url);
  await teach(context, agent, dialect, ['The payments service config lives in config/payments.yaml.'], false);
  const reminder = { role: 'system', content: [{ type: 'text', text: 'Today is Sunday.', cache_control: { type: 'ephemeral' } }] };
  context.upstream.enqueue({ type: 'text', text: 'In config/payments.yaml.' });
  const asked = await send(context.engram, agent, dialect, dialect.body([dialect.user('Where is the payments service configuration?'), reminder]));
  assert.ok(asked.injected >= 1);
  const forwarded = context.upstream.conversationRequests().at(-1)!.json;
  assert.equal(forwarded.messages[1], reminder, 'the trailing system entry is untouched and stays last');
  assert.match(JSON.stringify(forwarded.messages[0]), /<engram-reflections>[^]*payments\.yaml/);
});

test('a later turn of the same conversation sends only its new turns to extraction', async (context) => {
  const dialect = dialects[0];
  const agent = await context.engram.createAgent(context.upstream.url);
  const conversation = { 'x-engram-conversation': 'watermark' };
  const turn = async (messages: unknown[]) => {
    context.upstream.enqueue({ type: 'text', text: 'Noted.' });
    const response = await fetch(agent.baseUrl + dialect.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...dialect.headers(agent), ...conversation },
      body: JSON.stringify(dialect.body(messages)),
    });
    await response.text();
  };
  const first = [dialect.user('REMEMBER: The queue worker is started with make worker.')];
  await turn(first);
  await eventually(async () => ((await reflectionsOf(context.engram, agent)).length === 1 ? true : undefined));
  const extractionsBefore = context.upstream.extractionRequests().length;
  await turn([...first, dialect.assistant('Noted.'), dialect.user('REMEMBER: Logs are shipped to Loki at logs.internal.')]);
  await eventually(async () => ((await reflectionsOf(context.engram, agent)).length === 2 ? true : undefined));
  const extractions = context.upstream.extractionRequests().slice(extractionsBefore);
  assert.is(extractions.length, 1);
  // The transcript: the reflection learnt from the first turn may be shown before it, by id.
  const sent = transcriptOf(extractions[0]);
  assert.match(sent, 'Loki');
  assert.not.match(sent, 'make worker', 'the turn extracted before is not sent again');
});

test('an agent with injection turned off gets nothing injected', async (context) => {
  const dialect = dialects[0];
  const agent = await context.engram.createAgent(context.upstream.url);
  await teach(context, agent, dialect, ['The staging database is called pg-stage-3.'], false);
  const patched = await context.engram.api('PATCH', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`, { memory: { inject: false } });
  assert.is(patched.status, 200);
  const asked = await send(context.engram, agent, dialect, dialect.body([dialect.user('What is the staging database called?')]));
  assert.is(asked.injected, 0);
  assert.not.match(JSON.stringify(context.upstream.conversationRequests().at(-1)!.json), '<engram-reflections>');
});

test.run();
