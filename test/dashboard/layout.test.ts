/**
 * Every dashboard page in Chromium at a laptop's width (1280x800) and a phone's (390x844),
 * with long reflections (created through the management API, as a real agent's grow), an
 * agent on an upstream whose host name has hyphens, hyphenated projects and requests in
 * the log: nothing is wider than the viewport, no word in a table or on a button is
 * broken inside, a host name, path, id or timestamp breaks only after "/" or ".", and a
 * code block scrolls rather than break a URL (`test/support/layout.ts`).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BrowserContext, Page } from 'playwright-core';
import { openBrowser, type TestBrowser } from '../support/chromium.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import { VIEWPORTS, layoutProblems } from '../support/layout.js';
import { signUpWithAgent } from '../support/dashboard.js';
import { LONG_REFLECTIONS } from '../support/long-reflections.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { requestEntry } from '../support/request-entry.js';
import type { RequestEntry } from '../../src/ports/index.js';

/** An upstream as companies name their hosts: hyphens on both sides of the dots. */
const HYPHENATED_UPSTREAM = 'https://acme-build-cache-eu.db-stage-9.internal:8443/openai-proxy';
const LONG_AGO = Date.UTC(2024, 10, 12, 9, 5, 7, 949);

interface Context {
  engram: TestEngram;
  upstream: ScriptedUpstream;
  browser: TestBrowser;
  /** `/orgs/<org>/agents/<agent>` */
  agentPath: string;
  reflectionId: string;
  /** The agent on `HYPHENATED_UPSTREAM`. */
  hyphenatedPath: string;
}

const test = suite<Context>('dashboard layout at 1280 and 390 px');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
  context.engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' });
  context.browser = await openBrowser();
  const { engram } = context;
  const { agentPath, orgId, agentId } = await signUpWithAgent(context.browser.context, {
    engramUrl: engram.url,
    upstreamUrl: context.upstream.url,
    email: 'layout@example.com',
    org: 'acme-platform-engineering',
    agent: 'release-engineering-assistant',
  });
  context.agentPath = agentPath;
  const ids: string[] = [];
  for (const reflection of LONG_REFLECTIONS) {
    const created = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, reflection);
    assert.is(created.status, 201, JSON.stringify(created.json));
    ids.push(created.json.id);
  }
  const cache = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, {
    kind: 'factual',
    topic: 'build-cache',
    scope: 'acme-platform-release-tooling',
    tags: ['build-cache', 'db-stage-9'],
    content: `The build cache of the release pipeline is ${HYPHENATED_UPSTREAM}/v2/artifacts, behind db-stage-9.internal; its chat-completions proxy answers 2026-11-29T01:24:16.949Z-stamped logs.`,
  });
  assert.is(cache.status, 201, JSON.stringify(cache.json));
  ids.push(cache.json.id);
  context.reflectionId = cache.json.id;

  // A second agent of the organisation, on an upstream with hyphens in its host name (the operator's API creates it: it is never called).
  const hyphenated = await engram.api('POST', `/v0/orgs/${orgId}/agents`, {
    name: 'acme-build-cache-eu',
    type: 'api_provider',
    upstream: { base_url: HYPHENATED_UPSTREAM, api_key: 'sk-upstream-secret-key-0000000000000000' },
  });
  assert.is(hyphenated.status, 201, JSON.stringify(hyphenated.json));
  context.hyphenatedPath = `/orgs/${orgId}/agents/${hyphenated.json.id}`;

  // Requests in the log, as the inject step writes them: reflections injected, kept and missed, in a hyphenated project.
  const at = Date.now();
  const entry = (n: number, fields: Partial<RequestEntry>) =>
    requestEntry({ id: `req_layout${String(n).padStart(16, '0')}`, agentId, at: at - n * 2 * 3_600_000, protocol: 'chat-completions', conversationId: 's:YWNtZS1idWlsZC1jYWNoZS1ldQ:ZGItc3RhZ2UtOS5pbnRlcm5hbA', scope: 'acme-platform-release-tooling', user: 'release-bot@acme-build-cache-eu.example.com', ...fields });
  for (const logged of [
    entry(1, { injected: ids.slice(0, 3).map((reflectionId, index) => ({ reflectionId, relevance: 0.61 - index / 10, why: 'named term "db-stage-9.internal"' })), bar: 0.2 }),
    entry(2, { kept: [{ reflectionId: ids[4]!, turn: 2 }], reason: 'already_held', bar: 0.2 }),
    entry(3, { reason: 'under_bar', bar: 0.25, nearMisses: [{ reflectionId: ids[4]!, relevance: 0.2411 }] }),
    // Long ago: said as a date ("12 Nov 2024"), not as hours.
    entry(4, { at: LONG_AGO, reason: 'no_candidates' }),
  ].reverse()) {
    // The log lists entries in the order they were appended, the latest first: the oldest goes in first.
    await engram.running.deps.control.requests.append(logged);
  }
});

test.after(async ({ engram, upstream, browser }) => {
  await browser?.close();
  await engram?.close();
  await upstream?.close();
});

/** Each page, reached as a person reaches it; the token-and-configuration page is a form's answer. */
async function visitAll(page: Page, { engram, agentPath, reflectionId, hyphenatedPath }: Context, check: (name: string) => Promise<void>): Promise<void> {
  const pages: [string, string][] = [
    ['agents', '/'],
    ['overview', agentPath],
    ['overview of the agent on a hyphenated host', hyphenatedPath],
    ['reflections', `${agentPath}/reflections`],
    ['reflection search as a project and end user see it', `${agentPath}/reflections?q=release&scope=acme-platform-release-tooling&user=alice@example.com`],
    ['one reflection', `${agentPath}/reflections/${reflectionId}`],
    ['tokens', `${agentPath}/tokens`],
    ['activity', `${agentPath}/activity`],
    ['tool picker', `${agentPath}/connect`],
    ['connected apps', '/account/connections'],
    ['new agent', `${agentPath.split('/agents/')[0]}/agents/new`],
  ];
  for (const [name, path] of pages) {
    await page.goto(engram.url + path);
    await check(name);
  }
  for (const tool of ['other', 'openai-sdk', 'claude-code']) {
    await page.goto(`${engram.url}${agentPath}/connect`);
    await page.locator(`input[name="tool"][value="${tool}"]`).check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#configuration').waitFor();
    await check(`token and configuration (${tool})`);
  }
}

for (const viewport of VIEWPORTS) {
  test(`at ${viewport.width} px: no page is wider than the screen, no word is broken inside, no value at a hyphen, no URL in a code block`, async (context) => {
    let browserContext: BrowserContext | undefined;
    try {
      browserContext = await context.browser.browser.newContext({ viewport, storageState: await context.browser.context.storageState() });
      const page = await browserContext.newPage();
      const problems: string[] = [];
      await visitAll(page, context, async (name) => {
        for (const problem of await layoutProblems(page)) problems.push(`${name}: ${problem}`);
      });
      assert.equal(problems, []);
    } finally {
      await browserContext?.close();
    }
  });
}

test('the activity page gives each injected reflection a readable width: on a phone upright (390 px) and turned (844 px), and on a laptop', async ({ engram, browser, agentPath }) => {
  for (const width of [390, 844, 1280]) {
    const context = await browser.browser.newContext({ viewport: { width, height: 844 }, storageState: await browser.context.storageState() });
    try {
      const page = await context.newPage();
      await page.goto(`${engram.url}${agentPath}/activity`);
      const items = page.locator('#requests .injected-list li');
      assert.ok((await items.count()) >= 3, 'the seeded requests name reflections');
      const widths = await items.evaluateAll((lis) => lis.map((li) => Math.round(li.getBoundingClientRect().width)));
      // 18rem: some 35 characters a line, the least a sentence reads well in.
      assert.ok(widths.every((one) => one >= 288), `at ${width} px the reflections are ${widths.join(', ')} px wide`);
    } finally {
      await context.close();
    }
  }
});

test('before any request, the overview shows the one command to try instead of a chart of zeros', async ({ engram, browser, agentPath }) => {
  const page = await browser.context.newPage();
  try {
    await page.goto(engram.url + agentPath);
    const command = await page.locator('#next-step #next-command').innerText();
    assert.ok(command.startsWith(`curl ${engram.url}/v1/chat/completions \\\n  -H "Authorization: Bearer $ENGRAM_TOKEN"`), command);
    assert.is(await page.locator('.chart svg').count(), 0, 'no chart without traffic');
    assert.match(await page.locator('#chart-summary').innerText(), 'No requests yet');
  } finally {
    await page.close();
  }
});

test('the tool picker offers the OpenAI and Anthropic SDKs first, names the editors, and no description repeats its title', async ({ engram, browser, agentPath }) => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/connect`);
    const offered = await page.locator('.tools label').evaluateAll((labels) =>
      labels.map((label) => ({ title: label.querySelector('strong')!.textContent!.trim(), summary: label.querySelector('.hint')!.textContent!.trim() })),
    );
    assert.equal(offered.slice(0, 2).map((tool) => tool.title), ['OpenAI SDK', 'Anthropic SDK']);
    assert.ok(offered.some((tool) => tool.title === 'Editor extension (VS Code, Cursor, Windsurf)'));
    assert.ok(offered.some((tool) => tool.title === 'Editor plugin (JetBrains IDEs, Neovim)'));
    for (const tool of offered) assert.not.ok(tool.summary.toLowerCase().startsWith(tool.title.toLowerCase()), `${tool.title}: ${tool.summary}`);
  } finally {
    await page.close();
  }
});

test("the token page shows Engram's one address first, with the SDKs' variables, then the agent's own address", async ({ engram, browser, agentPath }) => {
  const page = await browser.context.newPage();
  try {
    await page.goto(`${engram.url}${agentPath}/connect`);
    await page.locator('input[name="tool"][value="anthropic-sdk"]').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#configuration').waitFor();
    const token = (await page.locator('#token').innerText()).trim();
    assert.is((await page.locator('#short-url').innerText()).trim(), `${engram.url}/v1`);
    assert.is((await page.locator('#short-url-anthropic').innerText()).trim(), engram.url);
    assert.is(
      await page.locator('#env').innerText(),
      `OPENAI_BASE_URL=${engram.url}/v1\nOPENAI_API_KEY=${token}\nANTHROPIC_BASE_URL=${engram.url}\nANTHROPIC_API_KEY=${token}`,
    );
    const agentUrl = `${engram.url}/v0${agentPath.replace(/^\/orgs/, '/orgs')}`;
    assert.is((await page.locator('#base-url').innerText()).trim(), agentUrl);
    const shortFirst = await page.evaluate(() => !!(document.querySelector('#short-url')!.compareDocumentPosition(document.querySelector('#base-url')!) & Node.DOCUMENT_POSITION_FOLLOWING));
    assert.ok(shortFirst, 'the short address comes before the agent\'s own');
    const configuration = await page.locator('#configuration').innerText();
    assert.match(configuration, `export ANTHROPIC_BASE_URL="${engram.url}"\n  export ANTHROPIC_API_KEY="$ENGRAM_TOKEN"`);
    // The address the text opens with is the one the export names: no /v1, which the SDK adds itself.
    assert.match(configuration, `\n  base URL   ${engram.url}   (any agent: the token says which; the client adds /v1)\n`);
    assert.not.match(configuration, `${engram.url}/v1`);
    assert.match(configuration, `The agent's own address works too: ANTHROPIC_BASE_URL=${agentUrl}`);
    // Sentences, not a filled-in template.
    assert.is(await page.locator('h1').innerText(), 'release-engineering-assistant: token and setup');
    assert.match(configuration, 'Environment: add these lines to your shell profile (~/.bashrc, ~/.zshrc), then start the tool from a new shell:');
    assert.not.match(configuration, 'start Anthropic SDK from');
  } finally {
    await page.close();
  }
});

test('on a phone, an id or URL too long for its line is cut with "…", whole on hover, and its Copy button copies it whole, with the clipboard API and without', async ({ engram, browser, agentPath }) => {
  const phone = await browser.browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await browser.context.storageState() });
  try {
    await phone.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await phone.newPage();
    await page.goto(engram.url + agentPath);
    const value = `${engram.url}/v0${agentPath}`;
    const cut = page.locator('#overview-base-url');
    assert.is(await cut.getAttribute('title'), value);
    assert.ok(await cut.evaluate((element) => element.scrollWidth > element.clientWidth), 'the URL is cut on a phone');
    await page.locator('button[data-copy="#overview-base-url"]').click();
    assert.is(await page.evaluate(() => navigator.clipboard.readText()), value);

    // Over plain http (not localhost) browsers offer no clipboard API: the copy goes through a selected textarea.
    const plain = await phone.newPage();
    await plain.goto(engram.url + agentPath);
    // A string, as the page runs it (tsx would wrap the getter in a helper the page lacks).
    await plain.evaluate(`
      Object.defineProperty(Navigator.prototype, 'clipboard', { value: undefined });
      document.addEventListener('copy', (event) => { window.copied = event.target.value; });
    `);
    await plain.locator('button[data-copy="#overview-agent-id"]').click();
    assert.is(await plain.evaluate(() => (window as unknown as { copied?: string }).copied), agentPath.split('/').at(-1));
    assert.is((await plain.locator('button[data-copy="#overview-agent-id"]').innerText()).trim(), 'Copied');
  } finally {
    await phone.close();
  }
});

test.run();
