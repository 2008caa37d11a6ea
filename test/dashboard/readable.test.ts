/**
 * What a person reads on the dashboard, in Chromium (issue 34): moments in words with the
 * whole moment on hover, a label on every filter, Engram's one base URL first among the
 * overview's addresses, one token per tool however often Connect is visited, and Engram's
 * by-hand markers never among a reflection's tags. How the pages hold their layout is
 * `layout.test.ts`'s.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startSignedInDashboard, type SignedInDashboard } from '../support/dashboard.js';
import { LONG_REFLECTIONS } from '../support/long-reflections.js';
import { requestEntry } from '../support/request-entry.js';

interface Context extends SignedInDashboard {
  /** A reflection in project `acme-platform-release-tooling`, tagged `build-cache, db-stage-9`. */
  reflectionId: string;
}

const test = suite<Context>('what the dashboard says, in a person\'s words');

const LONG_AGO = Date.UTC(2024, 10, 12, 9, 5, 7, 949);
const HOUR = 3_600_000;

test.before(async (context) => {
  Object.assign(context, await startSignedInDashboard({ email: 'words@example.com', org: 'acme-platform-engineering', agent: 'release-engineering-assistant' }));
  const { engram, orgId, agentId } = context;
  for (const reflection of LONG_REFLECTIONS) {
    const created = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, reflection);
    assert.is(created.status, 201, JSON.stringify(created.json));
  }
  const cache = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, {
    kind: 'factual',
    topic: 'build-cache',
    scope: 'acme-platform-release-tooling',
    tags: ['build-cache', 'db-stage-9'],
    content: 'The build cache of the release pipeline is behind db-stage-9.internal.',
  });
  assert.is(cache.status, 201, JSON.stringify(cache.json));
  context.reflectionId = cache.json.id;
  // Requests 2, 4 and 6 hours ago, and one long ago; the log lists the last appended first.
  const now = Date.now();
  for (const [n, at] of [[4, LONG_AGO], [3, now - 6 * HOUR], [2, now - 4 * HOUR], [1, now - 2 * HOUR]] as const) {
    await engram.running.deps.control.requests.append(requestEntry({ id: `req_words${String(n).padStart(16, '0')}`, agentId, at, reason: 'no_candidates' }));
  }
});

test.after(async (context) => {
  await context.close?.();
});

test('moments are said in words, with the whole moment on hover', async ({ engram, browser, agentPath }) => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/activity`);
    const when = page.locator('#requests td[data-label="When"] time');
    assert.equal(await when.allInnerTexts(), ['2 hours ago', '4 hours ago', '6 hours ago', '12 Nov 2024']);
    const old = when.nth(3);
    assert.is(await old.getAttribute('datetime'), '2024-11-12T09:05:07.949Z');
    assert.is(await old.getAttribute('title'), 'Tue 12 Nov 2024, 09:05:07 UTC');
    assert.not.match(await page.locator('#requests').innerText(), /\d{4}-\d\d-\d\d/, 'no raw ISO date is left');

    const made = await engram.api('POST', `/v0${agentPath}/tokens`, { name: 'moments' });
    assert.is(made.status, 201, JSON.stringify(made.json));
    await page.goto(`${engram.url}${agentPath}/tokens`);
    const created = page.locator('tbody tr', { hasText: 'moments' }).locator('td[data-label="Created"] time');
    assert.match(await created.innerText(), /^(just now|\d+ minutes? ago)$/);
    assert.match((await created.getAttribute('title'))!, /^\w{3} \d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d UTC$/);
  } finally {
    await page.close();
  }
});

test('every filter of the reflection search has a label of its own, shown and read out, and filters by it', async ({ engram, browser, agentPath, reflectionId }) => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/reflections`);
    const search = page.getByRole('search');
    const unlabelled = await search.locator('input:not([type=hidden]), select').evaluateAll((fields) =>
      fields.filter((field) => ![...((field as HTMLInputElement).labels ?? [])].some((label) => label.offsetWidth > 0)).map((field) => (field as HTMLInputElement).name),
    );
    assert.equal(unlabelled, [], 'each field has a visible <label>');
    await search.getByLabel('Kind').selectOption('factual');
    await search.getByLabel('Source').selectOption('mcp');
    await search.getByLabel('Project').fill('acme-platform-release-tooling');
    await search.getByLabel('End user').fill('');
    await search.getByLabel('Status').selectOption('current');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/scope=acme-platform-release-tooling/);
    const listed = await page.locator('#reflections tbody tr a[href*="/reflections/"]').evaluateAll((links) => links.map((link) => link.getAttribute('href')!.split('/').at(-1)));
    assert.equal(listed, [reflectionId], "the project's one factual reflection");
    assert.is(await search.getByLabel('Project').inputValue(), 'acme-platform-release-tooling', 'the filter keeps its value');
  } finally {
    await page.close();
  }
});

test("the overview's addresses give Engram's one base URL first, then the agent's own", async ({ engram, browser, agentPath }) => {
  const page = await browser.context.newPage();
  try {
    await page.goto(engram.url + agentPath);
    const addresses = page.locator('section', { has: page.getByRole('heading', { name: 'Addresses' }) });
    const fields = await addresses.locator('dt').allInnerTexts();
    assert.equal(fields.slice(0, 2).map((field) => field.toLowerCase()), ['base url', "this agent's base url"]);
    const values = await addresses.locator('dd code').allInnerTexts();
    assert.equal(values.slice(0, 2), [`${engram.url}/v1`, `${engram.url}/v0${agentPath}`]);
    await addresses.getByRole('button', { name: 'Copy the base URL', exact: true }).waitFor();
  } finally {
    await page.close();
  }
});

test('a second visit to Connect for a tool makes no second token: it names the one that exists, and makes a new one beside it only when asked', async ({ engram, browser, agentPath }) => {
  const agentId = agentPath.split('/').at(-1)!;
  const liveCodex = async () =>
    (await engram.running.deps.control.directory.listTokens(agentId)).filter((token) => token.name === 'codex' && token.revokedAt === null).map((token) => token.prefix);
  const page = await browser.context.newPage();
  const choose = async () => {
    await page.goto(`${engram.url}${agentPath}/connect`);
    await page.locator('input[name="tool"][value="codex"]').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#configuration').waitFor();
  };
  try {
    assert.equal(await liveCodex(), [], 'no codex token yet');
    await choose();
    const first = (await page.locator('#token').innerText()).trim();
    assert.equal(await liveCodex(), [first.slice(0, 10)]);

    await choose();
    // The page is rendered once the form is answered: by then the token would be minted.
    assert.is(await page.locator('#token').count(), 0, 'no token is shown again');
    const existing = await page.locator('#existing-token').innerText();
    assert.match(existing, 'You already have a token for this tool: codex');
    assert.match(existing, `${first.slice(0, 10)}…`);
    assert.match(existing, /made (just now|\d+ minutes? ago)/);
    assert.match(await page.locator('#configuration').innerText(), "export ENGRAM_TOKEN='<the agent token>'");
    assert.equal(await liveCodex(), [first.slice(0, 10)], 'a second visit made no second token');
    await page.goto(`${engram.url}${agentPath}/connect`);
    assert.is(await page.locator('.tools label', { hasText: 'Codex' }).locator('.badge', { hasText: 'has a token' }).count(), 1);

    await choose();
    await page.getByRole('button', { name: 'Make a new token' }).click();
    await page.locator('#token').waitFor();
    const second = (await page.locator('#token').innerText()).trim();
    assert.is.not(second, first);
    assert.match(await page.locator('#old-token').innerText(), `${first.slice(0, 10)}…) still works`);
    assert.equal((await liveCodex()).sort(), [first.slice(0, 10), second.slice(0, 10)].sort(), 'the new token sits beside the old one');
  } finally {
    await page.close();
  }
});

test("Engram's by-hand markers are never shown among a reflection's tags, but as a note; saving the form keeps them", async ({ engram, browser, agentPath, reflectionId }) => {
  const agentId = agentPath.split('/').at(-1)!;
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/reflections/${reflectionId}`);
    assert.is(await page.getByLabel('Tags').inputValue(), 'build-cache, db-stage-9');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/saved=1$/);
    const stored = await engram.running.deps.reflections.get(agentId, reflectionId);
    assert.equal([...stored!.tags].sort(), ['added-by-hand', 'build-cache', 'db-stage-9', 'edited-by-hand'], 'the markers are kept for extraction');

    assert.is(await page.getByLabel('Tags').inputValue(), 'build-cache, db-stage-9', 'no marker in the form');
    assert.is(await page.locator('#by-hand').innerText(), 'Added and edited by hand.');
    await page.goto(`${engram.url}${agentPath}/reflections`);
    const tags = await page.locator('#reflections td.tags').allInnerTexts();
    assert.ok(tags.length >= 5);
    assert.not.ok(tags.some((cell) => /by-hand/.test(cell)), tags.join(' | '));
    const row = page.locator('#reflections tbody tr', { has: page.locator(`a[href$="/reflections/${reflectionId}"]`) });
    assert.is(await row.locator('td.tags').innerText(), 'build-cache, db-stage-9 (by a person)');
    assert.is(await row.locator('.by-hand').innerText(), 'added and edited by hand');
    assert.not.match(await page.locator('main').innerText(), /(added|edited)-by-hand/);
  } finally {
    await page.close();
  }
});

test.run();
