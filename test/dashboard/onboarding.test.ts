/**
 * The seed's onboarding in a real browser (Debian's Chromium through playwright-core),
 * from an empty data dir to a client receiving injected memory: sign up, create an
 * organisation and an agent against the scripted upstream (with its connection test),
 * choose each tool kind, copy the token, use it with the `openai` SDK, see the reflection
 * learnt from that conversation in the browser, delete it, revoke the token and see the
 * SDK get 401.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { CLIENT_KINDS } from '../../src/clients/index.js';
import { openBrowser, type TestBrowser } from '../support/chromium.js';
import { eventually, startEngram, type TestEngram, idle } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  engram: TestEngram;
  upstream: ScriptedUpstream;
  browser: TestBrowser;
  page: Page;
}

const test = suite<Context>('dashboard onboarding in Chromium');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
  context.engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' });
  context.browser = await openBrowser({ clipboard: true });
  context.page = await context.browser.context.newPage();
});

test.after(async ({ engram, upstream, browser }) => {
  await browser?.close();
  await engram?.close();
  await upstream?.close();
});

const EMAIL = 'ada@example.com';
const PASSWORD = 'analytical engine 1843';

test('from an empty data dir to a client receiving injected memory, then delete and revoke', async ({ engram, upstream, browser, page }) => {
  // A visitor lands on the log-in page, and signs up from there.
  await page.goto(engram.url + '/');
  assert.match(page.url(), /\/login\?next=%2F$/);
  await page.getByRole('link', { name: 'Sign up' }).first().click();
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();

  // 1. Organisation, in plain words.
  await page.waitForURL(/\/orgs\/new$/);
  assert.equal(await page.locator('ol.steps li').allInnerTexts(), ['1. Organisation', '2. Agent', '3. Tool', '4. Token and setup']);
  assert.is(await page.locator('.card > .hint').first().innerText(), 'An organisation keeps your agents together. For now, only you can see it.');
  await page.getByLabel('Name').fill('acme');
  await page.getByRole('button', { name: 'Create organisation' }).click();

  // 2. Agent, with the connection test (htmx swaps the result in, no reload).
  await page.waitForURL(/\/agents\/new$/);
  const hints = await page.locator('form .hint').allInnerTexts();
  assert.ok(hints.includes("Your provider's address, without /v1 at the end: Engram adds that."), hints.join(' | '));
  assert.ok(hints.includes('We keep it encrypted and never show it again.'), hints.join(' | '));
  await page.getByLabel('Name', { exact: true }).fill('coder');
  await page.getByLabel('Upstream base URL').fill(upstream.url);
  await page.getByLabel('Upstream API key').fill('sk-upstream-secret-key-0000000000000000');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await page.locator('#check.notice').waitFor();
  assert.match(await page.locator('#check').innerText(), /answered 200 OK and lists \d+ models/);
  assert.match(page.url(), /\/agents\/new$/, 'the test did not leave the form');
  await page.getByRole('button', { name: 'Create agent' }).click();

  // 3. Tool: every client kind of `engram connect` is offered; each gives its own configuration.
  await page.waitForURL(/\/connect$/);
  const connectUrl = page.url();
  const offered = await page.locator('input[name="tool"]').evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
  assert.equal(offered, CLIENT_KINDS.map((kind) => kind.name));
  const tokens = new Map<string, string>();
  for (const kind of CLIENT_KINDS) {
    await page.goto(connectUrl);
    await page.locator(`input[name="tool"][value="${kind.name}"]`).check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#configuration').waitFor();
    const configuration = await page.locator('#configuration').innerText();
    assert.ok(configuration.startsWith(`Engram agent "coder"`), `${kind.name}: ${configuration.slice(0, 80)}`);
    assert.ok(configuration.includes(`  tool       ${kind.title}\n`), `${kind.name}: names the tool`);
    const baseUrl = (await page.locator('#base-url').innerText()).trim();
    assert.ok(configuration.includes(baseUrl) || configuration.includes(`${baseUrl}/v0/mcp`), `${kind.name} configuration names the agent`);
    tokens.set(kind.name, (await page.locator('#token').innerText()).trim());
  }
  assert.is(new Set(tokens.values()).size, CLIENT_KINDS.length, 'one new token per tool');

  // 4. The last page: ids and the token, copied with the copy button.
  const orgId = (await page.locator('#org-id').innerText()).trim();
  const agentId = (await page.locator('#agent-id').innerText()).trim();
  const baseUrl = (await page.locator('#base-url').innerText()).trim();
  assert.is(baseUrl, `${engram.url}/v0/orgs/${orgId}/agents/${agentId}`);
  await page.locator('button[data-copy="#token"]').click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.is(copied, tokens.get(CLIENT_KINDS[CLIENT_KINDS.length - 1]!.name));

  // The token works with the openai SDK; the conversation is learnt from...
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: copied, maxRetries: 0 });
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'REMEMBER: The release checklist lives in docs/RELEASING.md.' }] });
  await idle(engram);

  // ...and the next request carries the reflection.
  upstream.enqueue({ type: 'text', text: 'It is in docs/RELEASING.md.' });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Where is the release checklist?' }] });
  const sent = upstream.requests.at(-1)!.raw.toString('utf8');
  assert.match(sent, 'docs/RELEASING.md', 'the reflection was injected');

  // The overview counts today's requests, the injected reflection and the two conversations
  // learnt from (written every few seconds: the page is reloaded until they show).
  await idle(engram);
  await page.goto(`${engram.url}/orgs/${orgId}/agents/${agentId}`);
  const today = new Date().toISOString().slice(0, 10);
  await eventually(async () => {
    await page.reload();
    // The per-day numbers sit under the chart, in a closed <details>.
    // The day in words ("today"), the date on hover.
    const cells = await page.locator('#activity tbody tr', { has: page.locator(`time[datetime="${today}"]`) }).locator('td').allTextContents();
    return cells.join(' ') === 'today 2 1 2 1' ? true : undefined;
  }, 15_000, "today's activity on the overview");
  assert.match((await page.locator(`#activity time[datetime="${today}"]`).getAttribute('title'))!, /^\w{3} \d{1,2} \w{3} \d{4}$/);
  // With traffic, the 14 days are a chart with its text alternative, and the first-request hint is gone.
  assert.is(await page.locator('.chart svg[role="img"]').count(), 1);
  assert.match(await page.locator('#chart-summary').innerText(), 'In the last 14 days: 2 requests, 1 reflection injected, 1 reflection learnt');
  assert.is(await page.locator('#next-step').count(), 0);

  // The reflection shows in the browser; deleting it removes the row in place.
  await page.goto(`${engram.url}/orgs/${orgId}/agents/${agentId}/reflections`);
  const row = page.locator('#reflections tbody tr', { hasText: 'docs/RELEASING.md' });
  await row.waitFor();
  page.once('dialog', (dialog) => void dialog.accept());
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.is(await engram.running.deps.reflections.count(agentId), 0, 'deleted in the store');
  await page.reload();
  assert.is(await page.locator('#reflections tbody tr', { hasText: 'docs/RELEASING.md' }).count(), 0);

  // Revoking the token in the browser locks the SDK out.
  await page.goto(`${engram.url}/orgs/${orgId}/agents/${agentId}/tokens`);
  const prefix = copied.slice(0, 10);
  const tokenRow = page.locator('tbody tr', { hasText: prefix });
  await tokenRow.getByRole('button', { name: 'Revoke' }).click();
  await page.locator('tbody tr', { hasText: prefix }).getByText('revoked').waitFor();
  const refused = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Still there?' }] }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.instance(refused, OpenAI.AuthenticationError);
  assert.is((refused as InstanceType<typeof OpenAI.AuthenticationError>).status, 401);

  // Readable on a phone: no page is wider than a 390 px screen.
  const phone = await browser.browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await browser.context.storageState() });
  try {
    const small = await phone.newPage();
    const agentPath = `/orgs/${orgId}/agents/${agentId}`;
    for (const path of ['/', agentPath, `${agentPath}/reflections`, `${agentPath}/tokens`, `${agentPath}/activity`, `${agentPath}/connect`, '/account/connections']) {
      await small.goto(engram.url + path);
      assert.ok((await small.evaluate(() => document.documentElement.scrollWidth)) <= 390, `${path} fits a phone`);
    }
  } finally {
    await phone.close();
  }
});

test.run();
