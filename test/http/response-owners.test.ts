/**
 * A stored response belongs to the end user and the project that created it (issue 31):
 * through the real openai SDK over real HTTP, another end user (`x-engram-user`), another
 * project named by `x-engram-scope`, or the agent's own traffic without either, gets the
 * same 404 as an unknown id for `GET`, `DELETE` and `input_items`, and the same
 * `previous_response_not_found` for a continuation; two users' records with one upstream
 * id are two records. On the embedded SQLite stores and on two replicas sharing one
 * nats-server, each request on either replica.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import type { TestAgent, TestEngram } from '../support/engram.js';
import { onNatsReplicas, onSqlite } from '../support/engines.js';

const test = suite<{ upstream: ScriptedUpstream }>('stored responses belong to their owner');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
});
test.after(async ({ upstream }) => {
  await upstream.close();
});

/** The openai SDK of one owner, on one replica's copy of `agent`. */
function sdk(engram: TestEngram, agent: TestAgent, headers: Record<string, string>): OpenAI {
  const baseUrl = agent.baseUrl.replace(/^http:\/\/[^/]+/, engram.url);
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: agent.token, maxRetries: 0, defaultHeaders: headers });
}

/** The SDK error a call ends with, or undefined when it succeeds. */
async function failure(call: Promise<unknown>): Promise<any> {
  return call.then(() => undefined, (error: unknown) => error);
}

async function assertForeign(client: OpenAI, id: string, who: string): Promise<void> {
  const read = await failure(client.responses.retrieve(id));
  assert.is(read?.status, 404, `${who}: GET`);
  assert.is(read?.error?.code ?? read?.code, 'not_found', `${who}: GET says not found`);
  assert.is((await failure(client.responses.inputItems.list(id)))?.status, 404, `${who}: input_items`);
  assert.is((await failure(client.responses.delete(id)))?.status, 404, `${who}: DELETE`);
  const continued = await failure(client.responses.create({ model: 'gpt-test', previous_response_id: id, input: 'What am I allergic to?' }));
  assert.is(continued?.status, 400, `${who}: continuation`);
  assert.is(continued?.code, 'previous_response_not_found', `${who}: continuation is told the id is unknown`);
}

const inputs = async (client: OpenAI, id: string): Promise<string[]> =>
  (await client.responses.inputItems.list(id, { order: 'asc' })).data.map((item: any) => item.content?.[0]?.text);

/** The story, each request sent to `a` or `b` (one server, or two replicas of one deployment). */
async function story(upstream: ScriptedUpstream, a: TestEngram, b: TestEngram): Promise<void> {
  const agent = await a.createAgent(upstream.url);
  const u1 = sdk(a, agent, { 'x-engram-user': 'u1' });
  const u1b = sdk(b, agent, { 'x-engram-user': 'u1' });
  const u2 = sdk(b, agent, { 'x-engram-user': 'u2' });
  const agentOwn = sdk(a, agent, {});

  upstream.enqueue({ type: 'text', text: 'Noted: penicillin.' });
  const mine = await u1.responses.create({ model: 'gpt-test', input: 'I am allergic to penicillin.' });
  await assertForeign(u2, mine.id, 'another end user');
  await assertForeign(agentOwn, mine.id, 'the agent without an end user');
  assert.is((await u1b.responses.retrieve(mine.id)).id, mine.id, "the owner still reads it, on the other replica");
  assert.equal(await inputs(u1b, mine.id), ['I am allergic to penicillin.']);

  upstream.enqueue({ type: 'text', text: 'Penicillin.' });
  const next = await u1b.responses.create({ model: 'gpt-test', previous_response_id: mine.id, input: 'What am I allergic to?' });
  assert.equal(await inputs(u1, next.id), ['I am allergic to penicillin.', 'Noted: penicillin.', 'What am I allergic to?'], 'the owner continues its chain');

  // A project named by its header: the same end user in another project is another owner.
  const alpha = sdk(a, agent, { 'x-engram-user': 'u1', 'x-engram-scope': 'alpha' });
  const beta = sdk(b, agent, { 'x-engram-user': 'u1', 'x-engram-scope': 'beta' });
  upstream.enqueue({ type: 'text', text: 'Alpha deploys on Fridays.' });
  const project = await alpha.responses.create({ model: 'gpt-test', input: 'When does alpha deploy?' });
  await assertForeign(beta, project.id, 'another project');
  await assertForeign(u1b, project.id, 'the same user without the project');
  assert.is((await alpha.responses.retrieve(project.id)).id, project.id);

  // Two users whose upstream answers carry one id: two records, neither overwrites the other.
  upstream.enqueue({ type: 'text', text: 'Hello.' });
  const ann = await u1.responses.create({ model: 'gpt-test', input: 'My name is Ann.' });
  upstream.enqueue({ type: 'text', text: 'Hello.' });
  const bob = await u2.responses.create({ model: 'gpt-test', input: 'My name is Bob.' });
  assert.is(bob.id, ann.id, 'the upstream gave both answers one id');
  assert.equal(await inputs(u1b, ann.id), ['My name is Ann.']);
  assert.equal(await inputs(u2, bob.id), ['My name is Bob.']);
  await u2.responses.delete(bob.id);
  assert.is((await failure(u2.responses.retrieve(bob.id)))?.status, 404, 'deleted for its owner');
  assert.equal(await inputs(u1, ann.id), ['My name is Ann.'], "the other user's record is untouched");
}

test('on SQLite: GET, DELETE, input_items and previous_response_id only for the same user and project', ({ upstream }) =>
  onSqlite((a, b) => story(upstream, a, b)));

test('on two replicas sharing one nats-server: the same, each request on either replica', ({ upstream }) =>
  onNatsReplicas('owners', (a, b) => story(upstream, a, b)));

test.run();
