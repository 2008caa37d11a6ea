/**
 * Every dashboard page in Chromium at a laptop's width (1280x800) and a phone's (390x844),
 * with long reflections (created through the management API, as a real agent's grow):
 * nothing is wider than the viewport, no code block scrolls sideways, and no word in a
 * table or on a button is broken inside (`test/support/layout.ts`).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BrowserContext, Page } from 'playwright-core';
import { openBrowser, type TestBrowser } from '../support/chromium.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import { layoutProblems } from '../support/layout.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  engram: TestEngram;
  upstream: ScriptedUpstream;
  browser: TestBrowser;
  /** `/orgs/<org>/agents/<agent>` */
  agentPath: string;
  reflectionId: string;
}

const test = suite<Context>('dashboard layout at 1280 and 390 px');

/** Reflections as extraction writes them: whole sentences, paths, commands and long words. */
export const LONG_REFLECTIONS = [
  {
    kind: 'factual',
    topic: 'deployment',
    tags: ['deployment', 'kubernetes', 'staging-environment'],
    content:
      'The staging deployment is described in infrastructure/kubernetes/overlays/staging/kustomization.yaml; its configuration values come from the conversation-service Helm chart, and the database credentials are read from the sealed secret named staging-postgresql-credentials.',
  },
  {
    kind: 'procedural',
    topic: 'testing',
    tags: ['integration-tests', 'database'],
    content:
      'Before running the integration tests, start the database with docker compose up postgresql and run npm run db:migrate, otherwise every repository test fails with "relation does not exist" and the failure looks like a flaky connection.',
  },
  {
    kind: 'factual',
    topic: 'documentation',
    tags: ['documentation'],
    content: 'The release checklist lives in docs/RELEASING.md, and the changelog is generated from conventional commit messages by the release-please workflow.',
  },
  {
    kind: 'procedural',
    topic: 'conversation-handling',
    tags: ['internationalisation', 'internationalization'],
    content:
      'Internationalisation strings are extracted with npm run i18n:extract; never edit the generated translations directly, because the next extraction overwrites them without warning and the translators lose their work.',
  },
] as const;

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
  context.engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' });
  context.browser = await openBrowser();
  const page = await context.browser.context.newPage();
  const { engram } = context;
  await page.goto(`${engram.url}/signup`);
  await page.getByLabel('Email').fill('layout@example.com');
  await page.getByLabel('Password').fill('a long enough passphrase');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByLabel('Name').fill('acme-platform-engineering');
  await page.getByRole('button', { name: 'Create organisation' }).click();
  await page.getByLabel('Name', { exact: true }).fill('release-engineering-assistant');
  await page.getByLabel('Upstream base URL').fill(context.upstream.url);
  await page.getByLabel('Upstream API key').fill('sk-upstream-secret-key-0000000000000000');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.waitForURL(/\/connect$/);
  context.agentPath = new URL(page.url()).pathname.replace(/\/connect$/, '');
  const [, , orgId, , agentId] = context.agentPath.split('/');
  for (const reflection of LONG_REFLECTIONS) {
    const created = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, reflection);
    assert.is(created.status, 201, JSON.stringify(created.json));
    context.reflectionId = created.json.id;
  }
  await page.close();
});

test.after(async ({ engram, upstream, browser }) => {
  await browser?.close();
  await engram?.close();
  await upstream?.close();
});

/** Each page, reached as a person reaches it; the token-and-configuration page is a form's answer. */
async function visitAll(page: Page, { engram, agentPath, reflectionId }: Context, check: (name: string) => Promise<void>): Promise<void> {
  const pages: [string, string][] = [
    ['agents', '/'],
    ['overview', agentPath],
    ['reflections', `${agentPath}/reflections`],
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

for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
  test(`at ${viewport.width} px: no page is wider than the screen, no word is broken inside`, async (context) => {
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

test.run();
