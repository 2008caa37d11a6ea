/**
 * The request log through the real surface (DESIGN section 12): the `openai` SDK's raw
 * response shows `x-engram-request-id`, the management API lists and returns what each
 * request did (the injected reflection with its relevance and why; what was kept, rebuilt,
 * or why nothing was added), pages with a cursor, filters, keeps no text, answers only the
 * admin and the agent's own token, and forgets entries past `ENGRAM_REQUEST_LOG_DAYS` (the
 * clock moved, not waited for); the same on NATS.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import OpenAI from 'openai';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket, { type RawData } from 'ws';
import { maintenancePlugin } from '../../src/http/maintenance.js';
import { RequestJson, RequestPageJson } from '../../src/http/management/requests.js';
import type { RequestEntry } from '../../src/ports/index.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN_TOKEN, eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { requestEntry } from '../support/request-entry.js';

const DAY_MS = 24 * 3600_000;

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  /** Engram's clock: moved by the retention test. */
  clock: { offset: number };
  nats?: NatsServer;
  natsEngram?: TestEngram;
}
const test = suite<Context>('request log');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.clock = { offset: 0 };
  const clock = context.clock;
  context.engram = await startEngram({ 'settle-ms': '50' }, undefined, { now: () => Date.now() + clock.offset });
});
test.before.each(({ upstream }) => upstream.reset());
test.after(async ({ upstream, engram, nats, natsEngram }) => {
  await natsEngram?.close();
  await nats?.stop();
  await engram.close();
  await upstream.close();
});

const client = (agent: TestAgent) => new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
const requestsPath = (agent: TestAgent) => `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/requests`;

/** One chat turn through the SDK; the request id its raw response carried. */
async function ask(context: Context, agent: TestAgent, text: string, answer: string, conversation?: string): Promise<string> {
  context.upstream.enqueue({ type: 'text', text: answer });
  const { data, response } = await client(agent)
    .chat.completions.create(
      { model: 'gpt-test', messages: [{ role: 'user', content: text }] },
      conversation ? { headers: { 'x-engram-conversation': conversation } } : {},
    )
    .withResponse();
  assert.is(data.choices[0].message.content, answer);
  const id = response.headers.get('x-engram-request-id');
  assert.match(id ?? '', /^req_[A-Za-z0-9_-]{22}$/, 'the raw response carries the request id');
  return id!;
}

/** The agent's log through the API, once it holds `count` entries (they are written just after the answer). */
async function logOf(engram: TestEngram, agent: TestAgent, count: number, query = ''): Promise<any> {
  return eventually(async () => {
    const listed = await engram.api('GET', `${requestsPath(agent)}${query}`);
    assert.is(listed.status, 200, JSON.stringify(listed.json));
    return listed.json.data.length >= count ? listed.json : undefined;
  }, 5000, `${count} request log entries`);
}

const TAUGHT = 'The billing-svc deploy key rotation runs from ops/rotate-keys.sh every Monday at 04:00.';
const QUESTION = 'How does the billing-svc deploy key rotation work? Ticket QZX-88412 asks.';
const TEACH_ANSWER = 'Understood: noted the rotation schedule VLK-3301.';
const ASK_ANSWER = 'It runs from ops/rotate-keys.sh on Mondays, reply WPT-5517.';

test('teach then ask: the SDK sees each id; the log lists both, latest first, the second with the injected reflection, its relevance and why; no text kept', async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  const taught = await ask(context, agent, `REMEMBER: ${TAUGHT}`, TEACH_ANSWER);
  const [reflection] = await engram.waitForReflections(agent, 1);
  const asked = await ask(context, agent, QUESTION, ASK_ANSWER);
  assert.ok(JSON.stringify(context.upstream.conversationRequests().at(-1)!.json).includes('rotate-keys.sh'), 'the reflection was injected');

  const listed = await logOf(engram, agent, 2);
  RequestPageJson.parse(listed);
  assert.equal(listed.data.map((entry: any) => entry.id), [asked, taught], 'newest first');
  assert.is(listed.next_cursor, null);
  const [second, first] = listed.data;
  assert.equal(first.injected, [], 'nothing was known when it taught');
  for (const entry of [first, second]) {
    assert.is(entry.protocol, 'chat-completions');
    assert.is(entry.status, 200);
    assert.is(entry.outcome, 'settled');
    assert.type(entry.conversation_id, 'string');
    assert.ok(entry.latency_ms > 0 && entry.upstream_ms > 0 && entry.upstream_ms <= entry.latency_ms, JSON.stringify(entry));
    assert.ok(Math.abs(Date.parse(entry.at) - Date.now()) < 60_000);
  }
  assert.is(second.injected.length, 1);
  const [injected] = second.injected;
  assert.is(injected.reflection_id, reflection.id);
  assert.type(injected.relevance, 'number');
  assert.ok(injected.relevance >= 0.2, `at or above the agent's min_score: ${injected.relevance}`);
  assert.match(injected.why, /^(meaning|tags|named term ".+")$/);
  // One relevance scale: a search for the same words gives the same reflection the same relevance, beside the same bar.
  const searched = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections?q=${encodeURIComponent(QUESTION)}`);
  const same = searched.json.data.find((r: any) => r.id === reflection.id);
  assert.ok(Math.abs(same.relevance - injected.relevance) < 1e-9, `search ${same.relevance}, log ${injected.relevance}`);
  assert.is(searched.json.bar, 0.2);

  const one = await engram.api('GET', `${requestsPath(agent)}/${asked}`);
  assert.is(one.status, 200);
  RequestJson.parse(one.json);
  assert.equal(one.json, second, 'GET …/requests/{id} is the listed entry of the header\'s id');

  // No text of the request or the answer anywhere in what the log holds: the API's
  // answers, and every row of the log's table in the SQLite file.
  const db = new Database(path.join(engram.dataDir, 'engram.db'), { readonly: true, fileMustExist: true });
  const rows = JSON.stringify(db.prepare('SELECT * FROM request_log').all());
  db.close();
  assert.ok(rows.includes(asked) && rows.includes(reflection.id), 'the rows are the entries');
  const stored = JSON.stringify(listed) + JSON.stringify(one.json) + rows;
  for (const secret of ['rotate-keys', 'QZX-88412', 'VLK-3301', 'WPT-5517', 'Monday', 'REMEMBER']) {
    assert.not.ok(stored.includes(secret), `"${secret}" is not in the log`);
  }
});

test('errors, the pass-through routes and Engram\'s own refusals carry a request id too; a bad body is logged with its status', async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  const models = await client(agent).models.list().withResponse();
  assert.match(models.response.headers.get('x-engram-request-id') ?? '', /^req_/, 'models (pass-through)');

  const refused = await fetch(`${agent.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer egm_wrong' }, body: '{}' });
  assert.is(refused.status, 401);
  assert.match(refused.headers.get('x-engram-request-id') ?? '', /^req_/, 'the proxy\'s error handler');

  const bad = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: '{"model": "gpt-test", "messages": [',
  });
  assert.is(bad.status, 400);
  const badId = bad.headers.get('x-engram-request-id');
  assert.match(badId ?? '', /^req_/, 'an error runExchange rendered');

  context.upstream.enqueue({ type: 'error', status: 503 });
  const upstreamDown = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.is(upstreamDown.status, 503);
  const downId = upstreamDown.headers.get('x-engram-request-id');
  assert.match(downId ?? '', /^req_/, 'an upstream error relayed');

  const { data } = await logOf(engram, agent, 2);
  assert.equal(data.map((entry: any) => entry.id), [downId, badId], 'only the turns the conversation machine ran');
  assert.equal([data[0].status, data[0].outcome], [503, 'upstream_error']);
  assert.equal([data[1].status, data[1].outcome, data[1].conversation_id, data[1].upstream_ms], [400, 'failed', null, null]);
});

test('pages: limit and cursor walk the log once, latest first; bad limits and cursors are 400s; an unknown id is a 404', async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await ask(context, agent, `Question ${i}?`, `Answer ${i}.`));
  await logOf(engram, agent, 5);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await engram.api('GET', `${requestsPath(agent)}${query}`);
    assert.is(page.status, 200);
    assert.ok(page.json.data.length <= 2);
    seen.push(...page.json.data.map((entry: any) => entry.id));
    cursor = page.json.next_cursor;
    pages++;
  } while (cursor);
  assert.is(pages, 3);
  assert.equal(seen, [...ids].reverse());

  for (const query of ['?cursor=nonsense', '?cursor=', '?limit=0', '?limit=201', '?limit=ten', '?limit=1&limit=2']) {
    const refused = await engram.api('GET', `${requestsPath(agent)}${query}`);
    assert.is(refused.status, 400, query);
    assert.is(refused.json.error.type, 'invalid_request_error', query);
    assert.ok(['cursor', 'limit'].includes(refused.json.error.param), `${query}: ${JSON.stringify(refused.json)}`);
  }
  const missing = await engram.api('GET', `${requestsPath(agent)}/req_AAAAAAAAAAAAAAAAAAAAAA`);
  assert.is(missing.status, 404);
  assert.is(missing.json.error.code, 'not_found');
});

/**
 * An entry as the inject step will write it (issue 32). The proxy on this branch does not
 * produce kept, rebuilt, reasons beyond the chore and injection off, bars or near misses
 * yet, so these tests append such entries to the real store of a real Engram
 * (`running.deps.control.requests`) and read them through the real API.
 */
function logged(agentId: string, n: number, overrides: Partial<RequestEntry> = {}): RequestEntry {
  return requestEntry({ id: `req_${String(n).padStart(22, 'N')}`, agentId, at: Date.now() - 60_000 + n, conversationId: 'cnv_first', latencyMs: 41.5, upstreamMs: 40.25, ...overrides });
}

test('every field through the API: added with relevance and why, kept with their turn, rebuilt with its changes, the reason, the bar and the near misses', async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  const store = engram.running.deps.control.requests;
  const added = logged(agent.agentId, 1, {
    injected: [{ reflectionId: 'ref_new', relevance: 0.4312, why: 'named term "billing-svc"' }],
    kept: [{ reflectionId: 'ref_kept', turn: 2 }],
    rebuilt: {
      blocks: ['reflections', 'index'],
      changes: [
        { reflectionId: 'ref_old', change: 'superseded', replacedBy: 'ref_repl' },
        { reflectionId: 'ref_gone', change: 'deleted' },
      ],
    },
    bar: 0.2,
  });
  const missed = logged(agent.agentId, 2, {
    reason: 'under_bar',
    bar: 0.25,
    nearMisses: [
      { reflectionId: 'ref_close', relevance: 0.2411 },
      { reflectionId: 'ref_far', relevance: -0.05 },
    ],
  });
  await store.append(added);
  await store.append(missed);
  const listed = await logOf(engram, agent, 2);
  RequestPageJson.parse(listed);
  const [second, first] = listed.data;
  assert.equal(first, {
    id: added.id,
    at: new Date(added.at).toISOString(),
    protocol: 'messages',
    conversation_id: 'cnv_first',
    status: 200,
    outcome: 'settled',
    latency_ms: 41.5,
    upstream_ms: 40.25,
    scope: null,
    user: null,
    injected: [{ reflection_id: 'ref_new', relevance: 0.4312, why: 'named term "billing-svc"' }],
    kept: [{ reflection_id: 'ref_kept', turn: 2 }],
    rebuilt: {
      blocks: ['reflections', 'index'],
      changes: [
        { reflection_id: 'ref_old', change: 'superseded', replaced_by: 'ref_repl' },
        { reflection_id: 'ref_gone', change: 'deleted', replaced_by: null },
      ],
    },
    reason: null,
    bar: 0.2,
    near_misses: [],
    answer_limit: null,
  });
  assert.equal([second.reason, second.bar, second.injected, second.kept, second.rebuilt], ['under_bar', 0.25, [], [], null]);
  assert.equal(second.near_misses, [
    { reflection_id: 'ref_close', relevance: 0.2411 },
    { reflection_id: 'ref_far', relevance: -0.05 },
  ]);
  const one = await engram.api('GET', `${requestsPath(agent)}/${missed.id}`, undefined, agent.token);
  assert.is(one.status, 200);
  assert.equal(one.json, second, "one entry by id, with the agent's own token");
});

test('filters: ?conversation_id, ?outcome and ?nothing_added, alone and together, page with limit and cursor; a bad one is a 400 naming it', async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  // Two real turns in two conversations, then logged ones around them.
  const real = [await ask(context, agent, 'First question?', 'First answer.', 'conv-a'), await ask(context, agent, 'Second question?', 'Second answer.', 'conv-b')];
  const [b, a] = (await logOf(engram, agent, 2)).data;
  assert.equal([a.id, b.id], real);
  assert.is.not(a.conversation_id, b.conversation_id);
  const store = engram.running.deps.control.requests;
  const written: RequestEntry[] = [];
  for (let n = 10; n < 22; n++) {
    const nothing = n % 3 === 0;
    const entry = logged(agent.agentId, n, {
      conversationId: n % 2 === 0 ? a.conversation_id : 'cnv_other',
      outcome: n % 4 === 0 ? 'upstream_error' : 'settled',
      injected: nothing ? [] : [{ reflectionId: 'ref_x', relevance: 0.3, why: 'meaning' }],
      reason: nothing ? 'no_candidates' : null,
    });
    written.push(entry);
    await store.append(entry);
  }
  await logOf(engram, agent, 14);
  const walk = async (query: string): Promise<string[]> => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; json: any } = await engram.api('GET', `${requestsPath(agent)}?limit=2&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, undefined, agent.token);
      assert.is(page.status, 200, `${query}: ${JSON.stringify(page.json)}`);
      if (page.json.next_cursor) assert.is(page.json.data.length, 2, `${query}: a page with an older one is full`);
      seen.push(...page.json.data.map((entry: any) => entry.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    return seen;
  };
  const newest = (entries: RequestEntry[]) => entries.map((e) => e.id).reverse();
  assert.equal(await walk(`conversation_id=${encodeURIComponent(a.conversation_id)}`), [...newest(written.filter((e) => e.conversationId === a.conversation_id)), a.id]);
  assert.equal(await walk(`conversation_id=${encodeURIComponent(b.conversation_id)}`), [b.id]);
  assert.equal(await walk('outcome=upstream_error'), newest(written.filter((e) => e.outcome === 'upstream_error')));
  assert.equal(await walk('nothing_added=true'), newest(written.filter((e) => e.injected.length === 0)).concat(b.id, a.id), 'the real turns got nothing: the agent knew nothing yet');
  assert.equal(await walk('nothing_added=false'), newest(written.filter((e) => e.injected.length > 0)));
  assert.equal(
    await walk(`conversation_id=${encodeURIComponent(a.conversation_id)}&outcome=settled&nothing_added=false`),
    newest(written.filter((e) => e.conversationId === a.conversation_id && e.outcome === 'settled' && e.injected.length > 0)),
  );
  assert.equal(await walk('conversation_id=cnv_nowhere'), []);

  for (const [query, param] of [
    ['outcome=done', 'outcome'],
    ['outcome=settled&outcome=failed', 'outcome'],
    ['nothing_added=yes', 'nothing_added'],
    ['nothing_added=', 'nothing_added'],
    ['conversation_id=', 'conversation_id'],
    ['conversation_id=a&conversation_id=b', 'conversation_id'],
  ]) {
    const refused = await engram.api('GET', `${requestsPath(agent)}?${query}`);
    assert.is(refused.status, 400, query);
    assert.is(refused.json.error.type, 'invalid_request_error', query);
    assert.is(refused.json.error.param, param, `${query}: ${JSON.stringify(refused.json)}`);
  }
  const refused = await engram.api('GET', `${requestsPath(agent)}?outcome=done`);
  assert.match(refused.json.error.message, 'settled, upstream_error, interrupted, failed, aborted', 'the message lists what it takes');
});

test("the agent's own token reads its log; another agent's token gets 401, as for reflections; deleting the agent forgets it", async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  const other = await engram.createAgent(context.upstream.url);
  const id = await ask(context, agent, 'Hello?', 'Hi.');
  await logOf(engram, agent, 1);

  const own = await engram.api('GET', requestsPath(agent), undefined, agent.token);
  assert.is(own.status, 200);
  assert.equal(own.json.data.map((entry: any) => entry.id), [id]);
  assert.is((await engram.api('GET', `${requestsPath(agent)}/${id}`, undefined, agent.token)).status, 200);

  for (const pathname of [requestsPath(agent), `${requestsPath(agent)}/${id}`, `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`]) {
    const refused = await engram.api('GET', pathname, undefined, other.token);
    assert.is(refused.status, 401, pathname);
  }
  // Another agent's id is not found through this agent, even by the admin.
  assert.is((await engram.api('GET', `${requestsPath(other)}/${id}`)).status, 404);

  assert.is((await engram.api('DELETE', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`)).status, 200);
  const db = new Database(path.join(engram.dataDir, 'engram.db'), { readonly: true, fileMustExist: true });
  const left = db.prepare('SELECT count(*) AS n FROM request_log WHERE agent_id = ?').get(agent.agentId) as { n: number };
  db.close();
  assert.is(left.n, 0, 'the deleted agent\'s entries are gone');
});

test('a Responses WebSocket response names its request id on its last frame, and is logged', async (context) => {
  const { engram } = context;
  const agent = await engram.createAgent(context.upstream.url);
  context.upstream.enqueue({ type: 'text', text: 'Over the socket.' });
  const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
  try {
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const frames: any[] = [];
    const done = new Promise<void>((resolve) =>
      socket.on('message', (data: RawData) => {
        const frame = JSON.parse(data.toString());
        frames.push(frame);
        if (['response.completed', 'response.failed', 'error'].includes(frame.type)) resolve();
      }),
    );
    socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }], store: false }));
    await done;
    const last = frames.at(-1);
    assert.is(last.type, 'response.completed');
    assert.match(last.engram_request_id, /^req_/);
    assert.ok(frames.slice(0, -1).every((frame) => frame.engram_request_id === undefined), 'only the last frame');
    assert.type(last.sequence_number, 'number', 'the upstream\'s own fields are kept');
    const { data } = await logOf(engram, agent, 1);
    assert.equal([data[0].id, data[0].protocol, data[0].status], [last.engram_request_id, 'responses', 200]);
  } finally {
    socket.terminate();
  }
});

test('entries older than ENGRAM_REQUEST_LOG_DAYS are pruned by the maintenance run (the clock moved, not waited for)', async (context) => {
  const { engram, clock } = context;
  const agent = await engram.createAgent(context.upstream.url);
  const old = await ask(context, agent, 'An old question?', 'An old answer.');
  await logOf(engram, agent, 1);
  clock.offset = 6 * DAY_MS;
  const recent = await ask(context, agent, 'A newer question?', 'A newer answer.');
  await logOf(engram, agent, 2);
  // Eight days after the first request, two after the second: the default keeps 7 days.
  clock.offset = 8 * DAY_MS;
  const app = Fastify();
  await app.register(maintenancePlugin, { deps: engram.running.deps, firstAfterMs: 10, everyMs: 60_000 });
  await app.ready();
  try {
    await eventually(async () => ((await engram.api('GET', `${requestsPath(agent)}/${old}`)).status === 404 ? true : undefined), 5000, 'the old entry to go');
    const { data } = (await engram.api('GET', requestsPath(agent))).json;
    assert.equal(data.map((entry: any) => entry.id), [recent]);
  } finally {
    await app.close();
    clock.offset = 0;
  }
});

test('a log write the store refuses is logged and counted; the answer is whole and on time', async (context) => {
  const engram = await startEngram({ 'settle-ms': '50' });
  try {
    const agent = await engram.createAgent(context.upstream.url);
    await ask(context, agent, 'Before?', 'Logged.');
    await logOf(engram, agent, 1);
    // Another connection to the file takes the table away: every later append fails in the store.
    const db = new Database(path.join(engram.dataDir, 'engram.db'));
    db.exec('DROP TABLE request_log');
    db.close();
    const started = Date.now();
    const id = await ask(context, agent, 'After?', 'Still answered.');
    assert.ok(Date.now() - started < 5000);
    const metrics = async () => {
      const response = await fetch(`${engram.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return /^engram_request_log_failures_total (\d+)$/m.exec(await response.text())?.[1];
    };
    await eventually(async () => ((await metrics()) === '1' ? true : undefined), 5000, 'the failure to be counted');
    assert.match(id, /^req_/, 'the answer still carried its id');
  } finally {
    await engram.close();
  }
});

test('the same API with the control stores on NATS: ids, the injected reflection, one entry by id, pages', async (context) => {
  context.nats = await startNatsServer();
  const engram = (context.natsEngram = await startEngram({
    'settle-ms': '50',
    'nats-url': context.nats.url,
    'nats-prefix': 'reqlog',
    'secret-key': '34'.repeat(32),
  }));
  const agent = await engram.createAgent(context.upstream.url);
  const taught = await ask(context, agent, `REMEMBER: ${TAUGHT}`, TEACH_ANSWER);
  const [reflection] = await engram.waitForReflections(agent, 1);
  const asked = await ask(context, agent, QUESTION, ASK_ANSWER);
  const listed = await logOf(engram, agent, 2);
  assert.equal(listed.data.map((entry: any) => entry.id), [asked, taught]);
  assert.equal(listed.data[0].injected.map((i: any) => i.reflection_id), [reflection.id]);
  assert.equal((await engram.api('GET', `${requestsPath(agent)}/${asked}`)).json, listed.data[0]);
  const page = await engram.api('GET', `${requestsPath(agent)}?limit=1`);
  assert.equal(page.json.data.map((entry: any) => entry.id), [asked]);
  const next = await engram.api('GET', `${requestsPath(agent)}?limit=1&cursor=${encodeURIComponent(page.json.next_cursor)}`);
  assert.equal(next.json.data.map((entry: any) => entry.id), [taught]);
  assert.is(next.json.next_cursor, null);
  assert.is((await engram.api('GET', `${requestsPath(agent)}?cursor=x`)).status, 400);
  assert.not.ok(JSON.stringify(listed).includes('rotate-keys'));
});

test.run();
