/**
 * An agent's daily token budget, through the proxy with the `openai` SDK and the scripted
 * upstream (which reports usage like the real APIs): what extraction spends is counted per
 * agent and UTC day; once the day's budget is spent, the next conversation's job is not
 * run but waits for 00:00 UTC (not extracted, not dead-lettered, listed as queued with its
 * due time), the dashboard says so and /metrics counts the tokens. Engram's clock is then
 * moved past midnight (not waited for): the waiting conversation is learnt from.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { idDigest } from '../../src/control/conversation-id.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { stringLength, tokensFor } from '../support/scripted-upstream/shared.js';
import { WebSession } from '../support/web-session.js';
import { startNatsServer } from '../support/nats-server.js';
import { nextUtcDay } from '../../src/memory/budget.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  /** Engram's clock: Date.now() moved by `offset`, which the test shifts past midnight. */
  clock: { offset: number };
}
const test = suite<Context>('daily token budget');

/** Noon, UTC, on the day the test starts in Engram's clock. */
const NOON = Date.UTC(2030, 0, 1, 12, 0, 0);
const MIDNIGHT = Date.UTC(2030, 0, 2);

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.clock = { offset: NOON - Date.now() };
  const clock = context.clock;
  context.engram = await startEngram({ 'settle-ms': '50' }, undefined, { now: () => Date.now() + clock.offset });
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

const client = (agent: TestAgent) => new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
const agentPath = (agent: TestAgent) => `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`;

/** One conversation that teaches `fact` (the scripted extractor learns `REMEMBER:` lines). */
async function teach(context: Context, agent: TestAgent, conversation: string, fact: string): Promise<void> {
  context.upstream.enqueue({ type: 'text', text: 'Noted.' });
  const answer = await client(agent).chat.completions.create(
    { model: 'gpt-test', messages: [{ role: 'user', content: `REMEMBER: ${fact}` }] },
    { headers: { 'x-engram-conversation': conversation } },
  );
  assert.is(answer.choices[0].message.content, 'Noted.');
}

/** A counter's value for the agent, from the /metrics text; labels in any order. */
async function metric(engram: TestEngram, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${engram.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((row) => row.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => row.includes(`${key}="${value}"`)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const contents = async (engram: TestEngram, agent: TestAgent) => (await engram.reflections(agent)).map((r: { content: string }) => r.content).sort();

/** A person who watches the agent on the dashboard, signed in with an org of their own; the agent itself is made through the API in that org. */
async function watchedAgent(context: Context, email: string, org: string): Promise<{ web: WebSession; agent: TestAgent }> {
  const web = new WebSession(context.engram.url);
  assert.is((await web.signIn(email, 'a long enough passphrase')).status, 303);
  await web.get('/orgs/new');
  assert.is((await web.post('/orgs/new', { name: org })).status, 303);
  return { web, agent: await context.engram.createAgent(context.upstream.url, { org }) };
}

test('past its daily budget an agent\'s conversations wait for 00:00 UTC, are not dropped, and are learnt from the next day', async (context) => {
  const { engram, upstream } = context;
  const { web, agent } = await watchedAgent(context, 'budget@example.com', 'budget-org');
  const overview = `/orgs/${agent.orgId}/agents/${agent.agentId}`;
  assert.is((await engram.api('GET', agentPath(agent))).json.memory.daily_token_budget, null, 'no budget unless set');

  // Day one, no budget yet: the first conversation is learnt from, and its spend counted.
  await teach(context, agent, 'conv-a', 'The staging cluster is called kestrel.');
  await engram.waitForReflections(agent, 1);
  const [first] = upstream.extractionRequests();
  const input = tokensFor(stringLength([first!.json.system, first!.json.messages, first!.json.instructions, first!.json.input, first!.json.tools]));
  const labels = { agent: agent.agentId, job: 'extraction' };
  const spentInput = await eventually(async () => (await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'input' })) || undefined, 5000, 'tokens in /metrics');
  assert.is(spentInput, input, 'the input tokens the upstream reported for the call');
  const spentOutput = await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'output' });
  assert.ok(spentOutput > 0, 'and its output tokens');
  assert.is(await metric(engram, 'engram_extraction_calls_total', labels), 1);

  // A budget just above what was spent: the second conversation still fits, and spends past it.
  const patched = await engram.api('PATCH', agentPath(agent), { memory: { daily_token_budget: spentInput + spentOutput + 1 } });
  assert.is(patched.status, 200, JSON.stringify(patched.json));
  assert.is(patched.json.memory.daily_token_budget, spentInput + spentOutput + 1);
  await teach(context, agent, 'conv-b', 'Deploys to kestrel need the ops-deploy role.');
  await engram.waitForReflections(agent, 2);

  // The budget is spent: the third conversation's job is handed to the worker and deferred, not run.
  await teach(context, agent, 'conv-c', 'The kestrel database is backed up at 02:00 UTC.');
  const { bus } = engram.running.deps;
  type Payload = { conversationId?: string; deferred?: unknown };
  const deferred = await eventually(async () => (await bus.queued(EXTRACTION_SUBJECT)).find((message) => (message.payload as Payload).deferred), 10_000, 'the third conversation to be deferred');
  const conversationId = (deferred.payload as Payload).conversationId!;
  assert.ok(conversationId.endsWith(`x:${idDigest('conv-c')}`), 'the third conversation\'s job');
  assert.is(deferred.state, 'waiting');
  assert.is(deferred.dueAt, MIDNIGHT, 'due at the next 00:00 UTC by Engram\'s clock');
  assert.is(await bus.pending(EXTRACTION_SUBJECT), 1, 'nothing else is queued: the deferral replaced the delivery');
  assert.is(upstream.extractionRequests().length, 2, 'no call was made for it');
  assert.equal(await contents(engram, agent), ['Deploys to kestrel need the ops-deploy role.', 'The staging cluster is called kestrel.'], 'nothing learnt from it yet');
  assert.equal(await bus.deadLetters(), [], 'not dead-lettered');

  const jobs = await engram.api('GET', `${agentPath(agent)}/jobs`);
  assert.is(jobs.status, 200);
  assert.equal(
    jobs.json.queued.map((job: { conversation_id?: string; due_at?: string }) => [job.conversation_id, job.due_at]),
    [[conversationId, new Date(MIDNIGHT).toISOString()]],
    'the API lists it as queued, with its due time',
  );
  assert.equal([jobs.json.failed, jobs.json.dead], [[], []]);

  const page = await eventually(async () => {
    const answer = await web.get(overview);
    return answer.text.includes('id="budget-reached"') ? answer.text : undefined;
  }, 10_000, 'the overview to say the budget is reached');
  assert.match(page, 'Daily budget reached: 1 conversation waits and will be learnt from after 00:00 UTC.');
  const spend = await eventually(async () => {
    const text = (await web.get(overview)).text;
    return text.includes('<dd>2 extraction, 0 tagging</dd>') ? text : undefined;
  }, 10_000, 'the overview to show the day\'s two calls');
  assert.match(spend, `${spentInput + spentOutput + 1} tokens, reached`);
  assert.match(spend, /data-label="Day"><time datetime="2030-01-01" title="Tue 1 Jan 2030">today<\/time><\/td><td data-label="Requests">3<\/td><td data-label="Reflections injected">\d+<\/td><td data-label="Conversations learnt from">2<\/td>/, 'the deferral is no conversation learnt from');
  const activity = (await web.get(`${overview}/activity`)).text;
  assert.match(
    activity,
    /<time datetime="2030-01-02T00:00:00.000Z" title="Wed 2 Jan 2030, 00:00:00 UTC">in \d+ hours<\/time> <span class="hint">\(daily budget spent\)<\/span>/,
    'the activity page lists it with its due time (in words, whole on hover) and why',
  );

  assert.ok((await metric(engram, 'engram_extraction_jobs_finished_total', { outcome: 'deferred' })) >= 1, 'counted as deferred');
  assert.is(await metric(engram, 'engram_extraction_jobs_finished_total', { outcome: 'dead' }), 0);
  assert.is(await metric(engram, 'engram_extraction_calls_total', labels), 2, 'two calls made, none for the deferred job');

  const spentBeforeMidnight =
    (await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'input' })) + (await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'output' }));
  // Engram's clock moves past midnight: a new day's budget, and the waiting conversation is learnt from.
  context.clock.offset += MIDNIGHT + 5_000 - (Date.now() + context.clock.offset);
  await engram.waitForReflections(agent, 3);
  assert.equal(await contents(engram, agent), [
    'Deploys to kestrel need the ops-deploy role.',
    'The kestrel database is backed up at 02:00 UTC.',
    'The staging cluster is called kestrel.',
  ]);
  assert.is(upstream.extractionRequests().length, 3);
  await eventually(async () => ((await bus.pending(EXTRACTION_SUBJECT)) === 0 ? true : undefined), 5000, 'the queue to empty');
  const nextDay = await eventually(async () => {
    const text = (await web.get(overview)).text;
    return text.includes('<dd>1 extraction, 0 tagging</dd>') ? text : undefined;
  }, 10_000, 'the overview to show the new day\'s call');
  assert.not.match(nextDay, /\d+ conversations? waits? and will be learnt/, 'nothing waits any more');
  // The new day counts only its own call: the overview's total is what /metrics added since the move.
  const total = (await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'input' })) + (await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'output' }));
  assert.match(nextDay, `<dd>${total - spentBeforeMidnight} (`);
  assert.equal(await bus.deadLetters(), []);
});

test('on NATS (the activity counts in NATS KV, the jobs on JetStream) the spend is counted and a job past the budget waits for 00:00 UTC, not dead-lettered', async ({ upstream }) => {
  const nats = await startNatsServer();
  // Real time here: JetStream delays by its own clock, so the clock is not moved; the day's rollover is the SQLite test's.
  const engram = await startEngram({ 'settle-ms': '50', 'nats-url': nats.url, 'nats-prefix': 'budget', 'secret-key': '56'.repeat(32) });
  try {
    const agent = await engram.createAgent(upstream.url, { memory: { daily_token_budget: 1 } });
    await teach({ upstream, engram, clock: { offset: 0 } }, agent, 'conv-a', 'The NATS cluster is called heron.');
    await engram.waitForReflections(agent, 1);
    await teach({ upstream, engram, clock: { offset: 0 } }, agent, 'conv-b', 'Heron runs three JetStream nodes.');
    // Due at the next 00:00 UTC: the settle wait of the job as published is 50 ms.
    const isMidnight = (due: string) => Date.parse(due) === nextUtcDay(Date.now());
    const jobs = await eventually(async () => {
      const listed = await engram.api('GET', `${agentPath(agent)}/jobs`);
      return listed.json.queued.length === 1 && listed.json.running.length === 0 && isMidnight(listed.json.queued[0].due_at) ? listed.json : undefined;
    }, 10_000, 'the second conversation to wait for 00:00 UTC');
    assert.ok(jobs.queued[0].conversation_id.endsWith(`x:${idDigest('conv-b')}`), 'the second conversation\'s job');
    assert.equal([jobs.failed, jobs.dead], [[], []], 'not failed, not dead-lettered');
    assert.equal(await contents(engram, agent), ['The NATS cluster is called heron.'], 'only the first conversation learnt from');
    assert.is(await metric(engram, 'engram_extraction_calls_total', { agent: agent.agentId, job: 'extraction' }), 1);
    // The spend reached the KV bucket: what another replica would read for the budget.
    const today = await eventually(async () => {
      const [row] = await engram.running.deps.control.activity.read(agent.agentId, new Date().toISOString().slice(0, 10));
      return row?.extractionCalls === 1 ? row : undefined;
    }, 10_000, 'the spend to be written to NATS KV');
    assert.ok(today.extractionInputTokens > 0 && today.extractionOutputTokens > 0);
  } finally {
    await engram.close();
    await nats.cleanup();
  }
});

test('the budget is set, lifted and refused like the other memory settings', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url, { memory: { daily_token_budget: 50_000 } });
  assert.is((await engram.api('GET', agentPath(agent))).json.memory.daily_token_budget, 50_000);
  for (const bad of [0, -1, 1.5, '1000', true, 1_000_000_000_001]) {
    const refused = await engram.api('PATCH', agentPath(agent), { memory: { daily_token_budget: bad } });
    assert.is(refused.status, 400, JSON.stringify(bad));
    assert.match(JSON.stringify(refused.json), 'daily_token_budget', `the error names the field for ${JSON.stringify(bad)}`);
  }
  assert.is((await engram.api('GET', agentPath(agent))).json.memory.daily_token_budget, 50_000, 'a refused change changes nothing');
  const untouched = await engram.api('PATCH', agentPath(agent), { memory: { top_k: 3 } });
  assert.is(untouched.json.memory.daily_token_budget, 50_000, 'a patch that does not name it keeps it');
  const lifted = await engram.api('PATCH', agentPath(agent), { memory: { daily_token_budget: null } });
  assert.is(lifted.status, 200);
  assert.is(lifted.json.memory.daily_token_budget, null, 'null lifts it');
});

test("Anthropic's prompt cache: the fixed part of every extraction call is marked for it, and the cached tokens are counted apart", async (context) => {
  const { engram, upstream } = context;
  const { web, agent } = await watchedAgent(context, 'cache@example.com', 'cache-org');
  const anthropic = new Anthropic({ baseURL: agent.baseUrl, apiKey: agent.token, maxRetries: 0 });
  const before = upstream.extractionRequests().length;
  for (const [i, fact] of ['The billing queue is drained by worker-7.', 'Invoices are rendered by the pdf-svc service.'].entries()) {
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    await anthropic.messages.create(
      { model: 'claude-test', max_tokens: 256, messages: [{ role: 'user', content: `REMEMBER: ${fact}` }] },
      { headers: { 'x-engram-conversation': `cache-${i}` } },
    );
    await engram.waitForReflections(agent, i + 1);
  }
  const [first, second] = upstream.extractionRequests().slice(before);
  for (const call of [first, second]) {
    assert.is(call.protocol, 'messages');
    assert.equal(call.json.system.at(-1).cache_control, { type: 'ephemeral' }, 'the system prompt ends the cached prefix');
  }
  assert.is(JSON.stringify([second.json.tools, second.json.system]), JSON.stringify([first.json.tools, first.json.system]), 'the prefix is byte for byte the same');
  const prefix = tokensFor(stringLength([first.json.tools, first.json.system]));
  const total = (call: typeof first) => tokensFor(stringLength([call.json.system, call.json.messages, call.json.tools]));
  const labels = { agent: agent.agentId, job: 'extraction' };
  const cached = await eventually(async () => (await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'cached_input' })) || undefined, 5000, 'cached tokens in /metrics');
  assert.is(cached, prefix, 'the second call read the prefix from the cache; the first wrote it');
  assert.is(await metric(engram, 'engram_extraction_tokens_total', { ...labels, kind: 'input' }), total(first) + total(second), 'input counts every input token, cached or not');

  // The agent's day keeps them, and its overview says how much of the input the cache served.
  const [day] = await eventually(async () => {
    const days = await engram.running.deps.control.activity.read(agent.agentId, '2000-01-01');
    return days[0]?.extractionCalls === 2 ? days : undefined;
  }, 10_000, 'the day\'s spend to be written');
  assert.equal([day.extractionInputTokens, day.extractionCachedInputTokens], [total(first) + total(second), prefix]);
  const page = (await web.get(`/orgs/${agent.orgId}/agents/${agent.agentId}`)).text;
  assert.match(page, `(${total(first) + total(second)} input, ${prefix} of it read from the provider's prompt cache,`);
});

test.run();
