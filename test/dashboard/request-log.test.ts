/**
 * The request log on the dashboard's activity page (DESIGN section 12), in Chromium:
 * requests sent through the one base URL with the `openai` SDK appear newest first under
 * the ids their responses carried, each injected reflection a link to it with its score
 * and signal, and the list holds its layout on a phone.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { layoutProblemsAtEachWidth } from '../support/layout.js';
import { startSignedInDashboard, type SignedInDashboard } from '../support/dashboard.js';

type Context = SignedInDashboard;

const test = suite<Context>('the request log on the activity page');

/** Opens with a long path, as extraction writes them: it must wrap in its cell, not widen the table. */
const TAUGHT =
  'Integration tests need infrastructure/docker-compose/integration-postgresql.override.yaml up first: start the database with docker compose up postgresql and run npm run db:migrate.';

test.before(async (context) => {
  Object.assign(context, await startSignedInDashboard({ email: 'requests@example.com', org: 'acme', agent: 'coder' }, { 'settle-ms': '600000' }));
});

test.after(async (context) => {
  await context.close?.();
});

test('requests appear newest first under their ids, each injected reflection linked with its score and why', async (context) => {
  const { engram, upstream, browser, agentPath, orgId, agentId } = context;
  const taught = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, { kind: 'procedural', topic: 'testing', content: TAUGHT });
  assert.is(taught.status, 201, JSON.stringify(taught.json));
  const token = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/tokens`, { name: 'sdk' });
  const client = new OpenAI({ baseURL: `${engram.url}/v1`, apiKey: token.json.token, maxRetries: 0 });
  const ask = async (content: string) => {
    upstream.enqueue({ type: 'text', text: 'Done.' });
    const { response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content }] }).withResponse();
    return { id: response.headers.get('x-engram-request-id')!, injected: Number(response.headers.get('x-engram-injected')) };
  };
  const unrelated = await ask('Write a haiku about autumn leaves.');
  const related = await ask('How do I run the integration tests? They fail with relation does not exist.');
  assert.is(unrelated.injected, 0);
  assert.is(related.injected, 1);

  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/activity`);
    const rows = page.locator('#requests tbody tr');
    assert.is(await rows.count(), 2);
    assert.match(await rows.nth(0).innerText(), related.id, 'the newest first');
    assert.match(await rows.nth(1).innerText(), unrelated.id);
    assert.match(await rows.nth(1).locator('td[data-label="Injected"]').innerText(), 'none');
    const link = rows.nth(0).locator('td[data-label="Injected"] a');
    assert.is(await link.count(), 1);
    assert.match(await link.innerText(), 'Integration tests need infrastructure/docker-compose/');
    assert.match(await rows.nth(0).locator('td[data-label="Injected"] li').innerText(), /\d\.\d\d, by (meaning|tags|named term ".+")/);
    assert.match(await rows.nth(0).locator('td[data-label="Status"]').innerText(), '200');
    await link.click();
    await page.waitForURL(new RegExp(`/reflections/${taught.json.id}$`));
    assert.match(await page.content(), TAUGHT, 'the reflection it names');

    assert.equal(await layoutProblemsAtEachWidth(page, `${engram.url}${agentPath}/activity`), []);
  } finally {
    await page.close();
  }
});

test('the list pages back through older requests', async ({ engram, upstream, browser, agentPath, orgId, agentId }) => {
  const token = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/tokens`, { name: 'pages' });
  const client = new OpenAI({ baseURL: `${engram.url}/v1`, apiKey: token.json.token, maxRetries: 0 });
  const ids: string[] = [];
  for (let turn = 0; turn < 26; turn++) {
    upstream.enqueue({ type: 'text', text: 'Ok.' });
    const { response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `Question number ${turn}.` }] }).withResponse();
    ids.push(response.headers.get('x-engram-request-id')!);
  }
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/activity`);
    const first = await page.locator('#requests tbody tr').allInnerTexts();
    assert.is(first.length, 25);
    assert.match(first[0]!, ids.at(-1)!);
    await page.getByRole('link', { name: 'Older' }).click();
    const older = await page.locator('#requests tbody tr').allInnerTexts();
    // 26 here, plus the 2 of the first test.
    assert.is(older.length, 3);
    assert.match(older[0]!, ids[0]!);
    await page.getByRole('link', { name: 'Newest' }).click();
    assert.match((await page.locator('#requests tbody tr').allInnerTexts())[0]!, ids.at(-1)!);
  } finally {
    await page.close();
  }
});

test('each request says where it was seen (project, end user) and why memory left it alone', async ({ engram, upstream, browser, agentPath, orgId, agentId }) => {
  const token = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/tokens`, { name: 'scopes' });
  const send = async (headers: Record<string, string>, body: object) => {
    upstream.enqueue({ type: 'text', text: '{"title": "Release notes"}' });
    const response = await fetch(`${engram.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token.json.token}`, ...headers },
      body: JSON.stringify({ model: 'gpt-test', ...body }),
    });
    assert.is(response.status, 200, await response.clone().text());
    await response.text();
    return response.headers.get('x-engram-request-id')!;
  };
  const scoped = await send({ 'x-engram-scope': 'alpha-shop', 'x-engram-user': 'alice@example.com' }, { messages: [{ role: 'user', content: 'Where are the release notes?' }] });
  // A client's own bookkeeping request: its session, a structured answer, no tools.
  const chore = await send({ 'session-id': 'cli-session-1' }, {
    messages: [{ role: 'user', content: 'Title this session: where are the release notes?' }],
    response_format: { type: 'json_schema', json_schema: { name: 'title', schema: { type: 'object', properties: { title: { type: 'string' } } } } },
  });
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/activity`);
    const rows = page.locator('#requests tbody tr');
    assert.match(await rows.nth(0).innerText(), chore);
    assert.match(await rows.nth(0).locator('td[data-label="Injected"]').innerText(), /client's own bookkeeping request/);
    assert.match(await rows.nth(1).innerText(), scoped);
    const where = await rows.nth(1).locator('td[data-label="Request"]').innerText();
    assert.match(where, /project\s+alpha-shop/);
    assert.match(where, /end user\s+alice@example\.com/);
    assert.equal(await layoutProblemsAtEachWidth(page, `${engram.url}${agentPath}/activity`), []);
  } finally {
    await page.close();
  }
});

test.run();
