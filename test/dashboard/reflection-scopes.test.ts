/**
 * Projects and end users on the dashboard's reflections page (DESIGN section 13), in
 * Chromium: a reflection added through the form for a project or an end user is stored
 * so; the list filters by project and by end user; a search with a project or user shows
 * what a request of theirs would see, and its "would be injected" verdicts agree with what
 * the proxy injects into such a request (sent with the `openai` SDK).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { layoutProblems } from '../support/layout.js';
import { startSignedInDashboard, type SignedInDashboard } from '../support/dashboard.js';

type Context = SignedInDashboard;

const test = suite<Context>('projects and end users on the reflections page');

const SHOP = 'Release the storefront with make ship-storefront after the smoke tests pass.';
const ALICE = 'Alice wants every storefront release announced in the #storefront-alice channel.';
const QUESTION = 'How do I release the storefront?';

test.before(async (context) => {
  Object.assign(context, await startSignedInDashboard({ email: 'scopes@example.com', org: 'acme', agent: 'shop-assistant' }, { 'settle-ms': '600000' }));
});

test.after(async (context) => {
  await context.close?.();
});

/** The "Add a reflection by hand" form (the search form above it has a Kind, a Project and an End user too). */
const addForm = (page: Page) => page.locator('form', { has: page.getByRole('button', { name: 'Add reflection' }) });
/** The search and filter form. */
const filters = (page: Page) => page.getByRole('search');

async function addThroughForm(page: Page, context: Context, fields: { content: string; kind: string; project?: string; user?: string }): Promise<string> {
  await page.goto(`${context.engram.url}${context.agentPath}/reflections`);
  const form = addForm(page);
  await form.getByLabel('Reflection', { exact: true }).fill(fields.content);
  await form.getByLabel('Kind', { exact: true }).selectOption(fields.kind);
  if (fields.project) await form.getByLabel(/^Project/).fill(fields.project);
  if (fields.user) await form.getByLabel(/^End user/).fill(fields.user);
  await form.getByRole('button', { name: 'Add reflection' }).click();
  await page.waitForURL(/\/reflections\/ref_[0-9a-f]+$/);
  return page.url().split('/').at(-1)!;
}

/** The rows of the list or search on the page: each reflection's text and whether it is marked "would be injected". */
async function rowsOn(page: Page): Promise<Array<{ text: string; injected: boolean }>> {
  return page.locator('#reflections tbody tr').evaluateAll((rows) =>
    rows.map((row) => ({ text: row.textContent ?? '', injected: row.querySelector('.badge.injected') !== null })),
  );
}

test('a reflection added for a project or an end user is filtered, searched and judged as that project’s and user’s requests see it', async (context) => {
  const { engram, browser, agentPath, orgId, agentId } = context;
  const page = await browser.context.newPage();
  try {
    const shopId = await addThroughForm(page, context, { content: SHOP, kind: 'procedural', project: 'alpha-shop' });
    assert.is(await page.locator('#scope').inputValue(), 'alpha-shop', 'its page shows the project it holds in');
    const aliceId = await addThroughForm(page, context, { content: ALICE, kind: 'factual', user: 'alice' });
    assert.match(await page.locator('#user').innerText(), /Taught by user alice/);
    const of = async (id: string) => (await engram.api('GET', `/v0/orgs/${orgId}/agents/${agentId}/reflections/${id}`)).json;
    const [shop, alice] = [await of(shopId), await of(aliceId)];
    assert.equal([shop.scope, shop.user, alice.scope, alice.user], ['alpha-shop', null, null, 'alice']);

    // The list filters by end user beside the project.
    await page.goto(`${engram.url}${agentPath}/reflections`);
    await filters(page).getByLabel('End user', { exact: true }).fill('alice');
    await filters(page).getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/user=alice/);
    assert.is(await filters(page).getByLabel('End user', { exact: true }).inputValue(), 'alice');
    const alices = await rowsOn(page);
    assert.is(alices.length, 1);
    assert.match(alices[0]!.text, '#storefront-alice');

    // A search with a project: what a request in alpha-shop (no end user) would get.
    await filters(page).getByLabel('End user', { exact: true }).fill('');
    await filters(page).getByLabel('Project', { exact: true }).fill('alpha-shop');
    await filters(page).getByLabel('Search', { exact: true }).fill(QUESTION);
    await filters(page).getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/scope=alpha-shop/);
    assert.match(await page.locator('#search-view').innerText(), /as a request in project alpha-shop without an end user would see them/);
    let rows = await rowsOn(page);
    assert.ok(rows.find((row) => row.text.includes('make ship-storefront'))?.injected, JSON.stringify(rows));
    assert.not.ok(rows.some((row) => row.text.includes('#storefront-alice')), 'Alice’s is not seen by a request without her');

    // The proxy agrees: a request in alpha-shop gets it, one in beta-crm does not.
    const token = (await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/tokens`, { name: 'sdk' })).json.token;
    let asked = 0;
    const injectedInto = async (headers: Record<string, string>) => {
      const client = new OpenAI({ baseURL: `${engram.url}/v1`, apiKey: token, maxRetries: 0, defaultHeaders: headers });
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `${QUESTION} (${++asked})` }] });
      return JSON.stringify(context.upstream.conversationRequests().at(-1)!.json);
    };
    assert.match(await injectedInto({ 'x-engram-scope': 'alpha-shop' }), /<engram-reflections>[^]*make ship-storefront/);

    await filters(page).getByLabel('Project', { exact: true }).fill('beta-crm');
    await filters(page).getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/scope=beta-crm/);
    assert.match(await page.locator('#search-view').innerText(), /as a request in project beta-crm/);
    assert.not.ok((await rowsOn(page)).some((row) => row.text.includes('make ship-storefront')), 'another project never sees it');
    assert.match(await page.locator('#injection-preview').innerText(), /would get 0 reflections injected/);
    assert.not.match(await injectedInto({ 'x-engram-scope': 'beta-crm' }), /make ship-storefront/);

    // Project and user together: Alice in alpha-shop sees both, and both would be injected.
    await filters(page).getByLabel('Project', { exact: true }).fill('alpha-shop');
    await filters(page).getByLabel('End user', { exact: true }).fill('alice');
    await filters(page).getByLabel('Search', { exact: true }).fill('How do I release the storefront, and where is it announced?');
    await filters(page).getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/user=alice/);
    assert.match(await page.locator('#search-view').innerText(), /as a request in project alpha-shop from end user alice would see them/);
    assert.equal(
      [await filters(page).getByLabel('Project', { exact: true }).inputValue(), await filters(page).getByLabel('End user', { exact: true }).inputValue()],
      ['alpha-shop', 'alice'],
      'the filters keep what was searched with',
    );
    rows = await rowsOn(page);
    assert.ok(rows.find((row) => row.text.includes('make ship-storefront'))?.injected, JSON.stringify(rows));
    assert.ok(rows.some((row) => row.text.includes('#storefront-alice')), JSON.stringify(rows));

    // Without filters the search stays the management view: every project's and user's.
    await page.goto(`${engram.url}${agentPath}/reflections?q=${encodeURIComponent(QUESTION)}`);
    assert.match(await page.locator('#search-view').innerText(), /Every project's and every end user's reflections are weighed here/);
    rows = await rowsOn(page);
    assert.ok(rows.some((row) => row.text.includes('make ship-storefront')));

    // A project name the API would refuse is refused by the form too, with what was typed kept.
    await page.goto(`${engram.url}${agentPath}/reflections`);
    await addForm(page).getByLabel('Reflection', { exact: true }).fill('Something for a project with a bad name.');
    // (the field's maxlength stops a browser from typing more: a hand-made request is checked all the same)
    await addForm(page).getByLabel(/^Project/).evaluate((input) => input.removeAttribute('maxlength'));
    await addForm(page).getByLabel(/^Project/).fill('x'.repeat(201));
    await addForm(page).getByRole('button', { name: 'Add reflection' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /scope is a printable name of 1 to 200 characters/);
    assert.is(await addForm(page).getByLabel('Reflection', { exact: true }).inputValue(), 'Something for a project with a bad name.');

    // The filtered search holds its layout on a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${engram.url}${agentPath}/reflections?q=${encodeURIComponent(QUESTION)}&scope=alpha-shop&user=alice`);
    assert.equal(await layoutProblems(page), []);
  } finally {
    await page.close();
  }
});

test.run();
