/**
 * What reaches the model is what memory holds now (DESIGN section 6), through the real
 * openai SDK over real HTTP: the same opening asked before and after a fact changed gets
 * the fact of its time; a conversation that holds a replaced fact carries the replacement
 * from its next turn on; one that holds a deleted reflection never sends it again. Checked
 * at the scripted upstream (what the model was sent), and in the request log, which says
 * what each turn added, kept and rebuilt, or why it added nothing (DESIGN section 12), on
 * the embedded SQLite stores and on two replicas sharing one nats-server, each request on
 * either replica.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { startScriptedUpstream, type ExtractedReflection, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { onNatsReplicas, onSqlite } from '../support/engines.js';

const test = suite<{ upstream: ScriptedUpstream }>('memory you can trust');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
});
test.after(async ({ upstream }) => {
  await upstream.close();
});

const SYSTEM = 'You are the ops assistant of the Acme platform team.';
const QUESTION = 'Which database does staging use?';
const OLD = 'The staging database is db-stage-7.internal.';
const NEW = 'The staging database moved to db-stage-9.internal.';

/** The `[id] (kind) content` lines an extraction request showed, as a model reads them. */
function shown(text: string): Array<{ id: string; content: string }> {
  const block = /<existing-reflections>\n([^]*?)\n<\/existing-reflections>/.exec(text)?.[1] ?? '';
  return [...block.matchAll(/^\[(ref_[0-9a-f]+)\] \((?:factual|procedural)\) (.*)$/gm)].map(([, id, content]) => ({ id, content }));
}

/** The extraction model of this story: it learns the staging database a user states, and says which fact the new one replaces. */
function stagingExtractor(_request: unknown, text: string): ExtractedReflection[] {
  const transcript = text.slice(text.lastIndexOf('<transcript>'));
  if (transcript.includes('db-stage-9')) {
    const replaced = shown(text).filter((r) => r.content.includes('db-stage-7')).map((r) => r.id);
    return [{ kind: 'factual', content: NEW, topic: 'staging', tags: ['staging database'], turn: 0, supersedes: replaced }];
  }
  if (transcript.includes('db-stage-7')) return [{ kind: 'factual', content: OLD, topic: 'staging', tags: ['staging database'], turn: 0 }];
  return [];
}

type Message = OpenAI.Chat.ChatCompletionMessageParam;

/** One chat turn through the openai SDK: the answer, and what the model was sent. */
async function turn(upstream: ScriptedUpstream, agent: TestAgent, messages: Message[], answer: string) {
  upstream.enqueue({ type: 'text', text: answer });
  const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages }).withResponse();
  const sent = upstream.conversationRequests().at(-1)!;
  return { reply: data.choices[0].message, requestId: response.headers.get('x-engram-request-id')!, sent: sent.json.messages as any[], raw: sent.raw.toString('utf8') };
}

/** A request's log entry through the API, once written (just after its answer), read through `engram`. */
async function logged(engram: TestEngram, agent: TestAgent, requestId: string): Promise<any> {
  return eventually(async () => {
    const read = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/requests/${requestId}`);
    return read.status === 200 ? read.json : undefined;
  }, 5000, `the log entry of ${requestId}`);
}

async function learnt(engram: TestEngram, agent: TestAgent, content: string): Promise<any> {
  const found = await eventually(async () => (await engram.reflections(agent)).find((r: any) => r.content === content), 15_000, `"${content}" to be learnt`);
  await idle(engram);
  return found;
}

/**
 * The story, each request on one of the replicas in turn (`a` and `b` may be the same
 * Engram). `on(engram)` is the agent as that replica serves it.
 */
async function story(upstream: ScriptedUpstream, a: TestEngram, b: TestEngram): Promise<void> {
  const created = await a.createAgent(upstream.url);
  const on = (engram: TestEngram): TestAgent => ({ ...created, baseUrl: `${engram.url}/v0/orgs/${created.orgId}/agents/${created.agentId}` });
  const base = `/v0/orgs/${created.orgId}/agents/${created.agentId}`;
  upstream.setExtractor(stagingExtractor);
  const opening: Message[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }];

  const bar = (await a.api('GET', base)).json.memory.min_score;
  assert.type(bar, 'number');

  // Asked before anything is known: nothing to inject, and the log says why.
  const before = await turn(upstream, on(a), opening, 'I do not know yet.');
  assert.not.match(before.raw, '<engram-reflections>');
  const nothing = await logged(b, created, before.requestId);
  assert.equal([nothing.injected, nothing.kept, nothing.rebuilt, nothing.reason, nothing.near_misses], [[], [], null, 'no_candidates', []]);
  assert.is(nothing.bar, bar);
  await idle(a);

  // Taught; the same opening asked again, as a new chat, gets what was taught since.
  await turn(upstream, on(b), [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Note: the staging database is db-stage-7.internal.' }], 'Noted.');
  const old = await learnt(a, created, OLD);
  const asked = await turn(upstream, on(a), opening, 'Noted, thanks.');
  assert.match(asked.raw, 'db-stage-7.internal', 'a repeated opening is a new chat: it gets memory learnt after the first');
  const askedEntry = await logged(a, created, asked.requestId);
  assert.equal(askedEntry.injected.map((i: any) => i.reflection_id), [old.id], 'the log says what the model was sent');
  assert.ok(askedEntry.injected[0].relevance >= bar, `relevance ${askedEntry.injected[0].relevance} at or above the bar ${bar}`);
  assert.equal([askedEntry.kept, askedEntry.rebuilt, askedEntry.reason, askedEntry.bar], [[], null, null, bar]);
  assert.is.not(askedEntry.conversation_id, nothing.conversation_id, 'two chats with the same opening are two conversations');
  const chat: Message[] = [...opening, { role: 'assistant', content: asked.reply.content }];

  // The fact changes: the new reflection supersedes the old one.
  await turn(upstream, on(b), [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Heads up: staging moved to db-stage-9.internal last night.' }], 'Got it.');
  const replacement = await learnt(b, created, NEW);
  assert.is((await a.api('GET', `${base}/reflections/${old.id}`)).json.superseded_by, replacement.id);

  // The same opening, again a new chat: the new fact only.
  const fresh = await turn(upstream, on(b), opening, 'It is db-stage-9.');
  assert.match(fresh.raw, 'db-stage-9.internal');
  assert.not.match(fresh.raw, 'db-stage-7', 'never the replaced fact, byte for byte or otherwise');
  assert.equal((await logged(a, created, fresh.requestId)).injected.map((i: any) => i.reflection_id), [replacement.id]);

  // The earlier chat goes on: its kept block carries the replacement, not the old text.
  chat.push({ role: 'user', content: 'And which port does it listen on?' });
  const next = await turn(upstream, on(b), chat, 'Port 5432.');
  assert.not.match(next.raw, 'db-stage-7', 'a superseded reflection is not re-applied');
  assert.match(JSON.stringify(next.sent[1]), 'db-stage-9.internal', 'its replacement takes its place, on the message that carried the block');
  const rebuilt = await logged(b, created, next.requestId);
  assert.is(rebuilt.conversation_id, askedEntry.conversation_id, 'the continuation found its conversation by its first answer');
  assert.equal(rebuilt.rebuilt, { blocks: ['reflections'], changes: [{ reflection_id: old.id, change: 'superseded', replaced_by: replacement.id }] });
  assert.equal(rebuilt.kept, []);
  chat.push({ role: 'assistant', content: next.reply.content }, { role: 'user', content: 'Who owns it?' });
  const again = await turn(upstream, on(a), chat, 'The platform team.');
  assert.equal(again.sent.slice(0, next.sent.length), next.sent, 'once rebuilt, the block is kept byte for byte: the request extends the previous one');
  const kept = await logged(a, created, again.requestId);
  assert.equal([kept.kept, kept.rebuilt], [[{ reflection_id: replacement.id, turn: 1 }], null], 'kept, from the turn that added the block');

  // Deleted: never sent again. Once idle: a conversation's job still waiting would learn it again from the turns that stated it.
  await idle(a);
  assert.is((await b.api('DELETE', `${base}/reflections/${replacement.id}`)).status, 200);
  chat.push({ role: 'assistant', content: again.reply.content }, { role: 'user', content: 'Thanks. Anything else to know?' });
  const afterDelete = await turn(upstream, on(a), chat, 'No.');
  assert.not.match(afterDelete.raw, 'db-stage-9', 'a deleted reflection never reaches the upstream again');
  assert.not.match(afterDelete.raw, 'db-stage-7');
  const deleted = await logged(b, created, afterDelete.requestId);
  assert.equal([deleted.kept, deleted.rebuilt], [[], { blocks: ['reflections'], changes: [{ reflection_id: replacement.id, change: 'deleted', replaced_by: null }] }]);

  // A request that gets nothing though memory holds something: under the bar, with how close it came.
  const office = await a.api('POST', `${base}/reflections`, { kind: 'factual', content: 'The office coffee machine descales itself every Friday morning.', topic: 'office' });
  assert.is(office.status, 201);
  const unrelated = await turn(upstream, on(b), [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Please summarise the quarterly revenue figures for the board.' }], 'Sure.');
  assert.not.match(unrelated.raw, '<engram-reflections>');
  const miss = await logged(a, created, unrelated.requestId);
  assert.equal([miss.injected, miss.reason, miss.bar], [[], 'under_bar', bar]);
  assert.ok(miss.near_misses.length >= 1 && miss.near_misses.length <= 3, JSON.stringify(miss.near_misses));
  assert.ok(miss.near_misses.some((n: any) => n.reflection_id === office.json.id));
  for (const n of miss.near_misses) assert.ok(n.relevance < bar, `a near miss is under the bar: ${n.relevance}`);
  await idle(a);
}

test('SQLite: the fact of its time, the replacement in place, a deletion honoured', ({ upstream }) =>
  onSqlite((a, b) => story(upstream, a, b), { 'settle-ms': '50' }));

test('two replicas on NATS: the same, each request on either replica', ({ upstream }) =>
  onNatsReplicas('trust', (a, b) => story(upstream, a, b), { 'settle-ms': '50' }));

test('the root memory index given on a first turn is rebuilt in place once a reflection it lists is deleted', async ({ upstream }) => {
  const engram = await startEngram({ 'settle-ms': '50' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const base = `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`;
    const secretish = await engram.api('POST', `${base}/reflections`, { kind: 'factual', content: 'The legacy billing cron runs on host billing-old-3 at 02:15.', topic: 'billing' });
    const kept = await engram.api('POST', `${base}/reflections`, { kind: 'procedural', content: 'Run make lint before pushing to the release branch.', topic: 'ci' });
    assert.equal([secretish.status, kept.status], [201, 201]);
    // A client with Engram's tools (as Copilot CLI names them): its first turn gets the index.
    const tools = [{ type: 'function' as const, function: { name: 'engram-recall', description: 'Search your memory.', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];
    const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
    const messages: Message[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Write a short poem about autumn.' }];
    upstream.enqueue({ type: 'text', text: 'Leaves fall.' });
    const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools });
    assert.match(upstream.conversationRequests().at(-1)!.raw.toString(), 'billing-old-3', 'the index lists it');

    assert.is((await engram.api('DELETE', `${base}/reflections/${secretish.json.id}`)).status, 200);
    messages.push({ role: 'assistant', content: first.choices[0].message.content }, { role: 'user', content: 'Another one, about winter.' });
    upstream.enqueue({ type: 'text', text: 'Snow.' });
    const { response } = await client.chat.completions.create({ model: 'gpt-test', messages, tools }).withResponse();
    const sent = upstream.conversationRequests().at(-1)!.raw.toString();
    assert.not.match(sent, 'billing-old-3', 'a deleted reflection leaves the index it was given in');
    assert.match(sent, 'make lint before pushing', 'the rebuilt index lists the rest, in the same place');
    const entry = await logged(engram, agent, response.headers.get('x-engram-request-id')!);
    assert.equal(entry.rebuilt, { blocks: ['index'], changes: [{ reflection_id: secretish.json.id, change: 'deleted', replaced_by: null }] });
  } finally {
    await engram.close();
  }
});

test.run();
