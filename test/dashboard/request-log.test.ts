/**
 * The request log on the dashboard's activity page (DESIGN section 12), in Chromium:
 * requests sent through the one base URL with the `openai` SDK appear newest first under
 * the ids their responses carried, each injected reflection a link to it with its relevance
 * and signal; what was kept from which turn, what was rebuilt, and when nothing was
 * injected why, the bar and the closest under it; and the list holds its layout at 1280
 * and 390 px.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { layoutProblemsAtEachWidth } from '../support/layout.js';
import { startSignedInDashboard, type SignedInDashboard } from '../support/dashboard.js';
import type { RequestEntry } from '../../src/ports/index.js';
import { requestEntry } from '../support/request-entry.js';

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

test('requests appear newest first under their ids, each injected reflection linked with its relevance and why', async (context) => {
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
    // The proxy's own entry for a request that got nothing: why, the bar, and how close the taught reflection came.
    const nothing = await rows.nth(1).locator('td[data-label="Memory"]').innerText();
    assert.match(nothing, 'Nothing injected');
    assert.match(nothing, "reflections were found, but none reached this agent's bar");
    assert.match(nothing, /bar \(min_score\)[^0-9]*0\.20/);
    assert.is(await rows.nth(1).locator('td[data-label="Memory"] .near-misses').count(), 1);
    assert.match(await rows.nth(1).locator('td[data-label="Memory"] li').first().innerText(), /Integration tests need[^]*relevance -?\d\.\d\d/);
    const link = rows.nth(0).locator('td[data-label="Memory"] a');
    assert.is(await link.count(), 1);
    assert.match(await link.innerText(), 'Integration tests need infrastructure/docker-compose/');
    assert.match(await rows.nth(0).locator('td[data-label="Memory"] li').innerText(), /relevance \d\.\d\d, by (meaning|tags|named term ".+")/);
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
    assert.match(await rows.nth(0).locator('td[data-label="Memory"]').innerText(), /client's own bookkeeping request/);
    assert.match(await rows.nth(1).innerText(), scoped);
    const where = await rows.nth(1).locator('td[data-label="Request"]').innerText();
    assert.match(where, /project\s+alpha-shop/);
    assert.match(where, /end user\s+alice@example\.com/);
    assert.equal(await layoutProblemsAtEachWidth(page, `${engram.url}${agentPath}/activity`), []);
  } finally {
    await page.close();
  }
});

/**
 * An entry as the inject step writes it, appended to the real store of the real Engram
 * (`running.deps.control.requests`): the kept, rebuilt and near-miss cases at once, with
 * long values, for the layout at both widths (the proxy's own entries for them are
 * checked end to end in test/http/memory-trust.test.ts; the first test here reads one).
 */
function logged(agentId: string, n: number, overrides: Partial<RequestEntry>): RequestEntry {
  return requestEntry({ id: `req_page${String(n).padStart(18, '0')}`, agentId, at: Date.now() + 3_600_000 + n * 1000, conversationId: 's:c2Vzc2lvbi1vbmUtdGhhdC1pcy1sb25n:aGVsbG8td29ybGQtb3BlbmluZw', scope: 'acme-platform-release-tooling', ...overrides });
}

test('what reached the model and why: injected with relevance, kept from which turn, rebuilt in words; nothing injected: the reason, the bar, the near misses; at 1280 and 390 px', async ({ engram, browser, agentPath, orgId, agentId }) => {
  const add = async (content: string) => {
    const created = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, { kind: 'procedural', content });
    assert.is(created.status, 201, JSON.stringify(created.json));
    return created.json.id as string;
  };
  const deploy = await add('Deploy the billing service with make deploy-billing from infrastructure/kubernetes/overlays/production/billing-svc after the release checklist.');
  const rotate = await add('Rotate the billing-svc deploy key with ops/rotate-keys.sh every Monday at 04:00.');
  const close = await add('The staging database is reset every night at 02:00 from the anonymised production snapshot.');
  const store = engram.running.deps.control.requests;
  const got = logged(agentId, 1, {
    injected: [{ reflectionId: deploy, relevance: 0.4312, why: 'named term "billing-svc"' }],
    kept: [{ reflectionId: rotate, turn: 3 }],
    rebuilt: {
      blocks: ['reflections', 'index'],
      changes: [
        { reflectionId: 'ref_0123456789abcdef01234567', change: 'superseded', replacedBy: rotate },
        { reflectionId: 'ref_fedcba9876543210fedcba98', change: 'deleted' },
      ],
    },
    bar: 0.2,
  });
  const missed = logged(agentId, 2, {
    reason: 'under_bar',
    bar: 0.25,
    nearMisses: [
      { reflectionId: close, relevance: 0.2411 },
      { reflectionId: deploy, relevance: 0.1049 },
    ],
  });
  const held = logged(agentId, 3, { reason: 'already_held', bar: 0.2, kept: [{ reflectionId: deploy, turn: 1 }] });
  for (const entry of [got, missed, held]) await store.append(entry);

  const page = await browser.context.newPage();
  try {
    const url = `${engram.url}${agentPath}/activity`;
    await page.goto(url);
    const row = (id: string) => page.locator('#requests tbody tr', { hasText: id }).locator('td[data-label="Memory"]');

    const gotCell = await row(got.id).innerText();
    assert.match(gotCell, /Injected \(this agent's bar \(min_score\) was 0\.20\)/);
    assert.match(gotCell, /Deploy the billing service with make deploy-billing[^\n]*relevance 0\.43, by named term "billing-svc"/);
    assert.match(gotCell, /Kept from earlier turns\s+Rotate the billing-svc deploy key[^\n]*from turn 3/);
    assert.match(gotCell, /Rebuilt: the relevant reflections and the root memory index, rewritten at their place, so this request missed the prompt cache from there on/);
    assert.match(gotCell, new RegExp(`ref_0123456789abcdef01234567 \\(deleted since\\) superseded by ${rotate}, shown in its place`));
    assert.match(gotCell, /ref_fedcba9876543210fedcba98 \(deleted since\) deleted: dropped, never sent again/);
    assert.not.match(gotCell, 'Nothing injected');
    assert.is(await row(got.id).locator(`a[href$="/reflections/${deploy}"]`).count(), 1, 'each reflection links to its page');

    const missedCell = await row(missed.id).innerText();
    assert.match(missedCell, "Nothing injected: reflections were found, but none reached this agent's bar; this agent's bar (min_score) was 0.25");
    assert.match(missedCell, /Closest under the bar\s+The staging database is reset[^\n]*relevance 0\.24\s+Deploy the billing service[^\n]*relevance 0\.10/);

    const heldCell = await row(held.id).innerText();
    assert.match(heldCell, /Kept from earlier turns\s+Deploy the billing service[^\n]*from turn 1/);
    assert.match(heldCell, "Nothing injected: the relevant reflections are already in the conversation; this agent's bar (min_score) was 0.20");

    assert.equal(await layoutProblemsAtEachWidth(page, url), []);
    // Left at 390 px: the table stacks, and the memory cell takes the card's width, not a column's.
    const [cell, card] = await Promise.all([row(got.id).boundingBox(), page.locator('#requests tbody tr', { hasText: got.id }).boundingBox()]);
    assert.ok(cell!.width > card!.width * 0.85, `the memory cell is ${cell!.width} px of its ${card!.width} px card`);
  } finally {
    await page.close();
  }
});

test.run();
