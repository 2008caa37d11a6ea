/**
 * `npm run screenshots`: the dashboard's main pages, as docs/dashboard.md shows them, taken in
 * Debian's Chromium at a laptop's width (1280 px) and a phone's (390 px) from a fresh
 * Engram with the scripted upstream of the tests: two reflections are learnt for real
 * from conversations, and a few long ones (as a real agent's grow) are added through the
 * management API, so the pictures show reflections that wrap. Writes
 * `docs/screenshots/*.png`, and prints each page's width to show none is wider than the screen.
 */
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { EXTRACTION_SUBJECT } from '../src/memory/extraction-job.js';
import { openBrowser } from '../test/support/chromium.js';
import { eventually, startEngram } from '../test/support/engram.js';
import { LONG_REFLECTIONS } from '../test/support/long-reflections.js';
import { startScriptedUpstream } from '../test/support/scripted-upstream/index.js';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');
const upstream = await startScriptedUpstream();
// The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
const engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' });
const browser = await openBrowser();
const page = await browser.context.newPage();
await page.setViewportSize({ width: 1280, height: 800 });
const PHONE = { width: 390, height: 844 };

async function save(on: Page, name: string): Promise<void> {
  await on.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  const width = await on.evaluate(() => document.documentElement.scrollWidth);
  console.log(`docs/screenshots/${name}.png (page ${width} px wide in a ${on.viewportSize()!.width} px window)`);
}

/** The same page on a phone, signed in as the laptop is. */
async function onPhone(name: string, url: string, then?: (small: Page) => Promise<void>): Promise<void> {
  const phone = await browser.browser.newContext({ viewport: PHONE, storageState: await browser.context.storageState() });
  try {
    const small = await phone.newPage();
    await small.goto(url);
    await then?.(small);
    await save(small, `phone-${name}`);
  } finally {
    await phone.close();
  }
}

/**
 * The tool picker's answer for `tool`: the token-and-setup page. A tool picked a second
 * time shows the token it has instead of a new one, so each shot picks its own tool.
 */
const pickTool = (tool: string) => async (on: Page): Promise<void> => {
  await on.locator(`input[value="${tool}"]`).check();
  await on.getByRole('button', { name: 'Continue' }).click();
  await on.locator('#configuration').waitFor();
};

try {
  await page.goto(`${engram.url}/signup`);
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Password').fill('analytical engine 1843');
  await save(page, '1-sign-up');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByLabel('Name').fill('acme');
  await page.getByRole('button', { name: 'Create organisation' }).click();
  await page.getByLabel('Name', { exact: true }).fill('release-assistant');
  await page.getByLabel('Upstream base URL').fill(upstream.url);
  await page.getByLabel('Upstream API key').fill('sk-upstream-secret-key-0000000000000000');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await page.locator('#check.notice').waitFor();
  await save(page, '2-agent');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.waitForURL(/\/connect$/);
  const connect = page.url();
  await save(page, '3-tool');
  await onPhone('3-tool', connect);
  await pickTool('openai-sdk')(page);
  const token = (await page.locator('#token').innerText()).trim();
  const baseUrl = (await page.locator('#base-url').innerText()).trim();
  await save(page, '4-token-and-configuration');
  await onPhone('4-token-and-configuration', connect, pickTool('anthropic-sdk'));

  // Before any traffic the overview shows the one command to try.
  const overview = baseUrl.replace('/v0/orgs/', '/orgs/');
  await page.goto(overview);
  await save(page, '5-agent-overview-first-run');

  // Two conversations learnt from for real, on the agent's own address (the tests' scripted upstream answers)...
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: token, maxRetries: 0 });
  for (const fact of ['The release checklist lives in docs/RELEASING.md.', 'Run `npm run db:migrate` before the integration tests.']) {
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `REMEMBER: ${fact}` }] });
  }
  // ...one of them in a project: its reflection and its requests say so.
  const storefront = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: token, maxRetries: 0, defaultHeaders: { 'x-engram-scope': 'storefront' } });
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  await storefront.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'REMEMBER: Ship the storefront with make ship-storefront after the smoke tests.' }] });
  await eventually(async () => ((await engram.running.deps.bus.pending(EXTRACTION_SUBJECT)) === 0 ? true : undefined), 10_000, 'extraction');
  upstream.enqueue({ type: 'text', text: 'Run make ship-storefront.' });
  await storefront.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'How do I ship the storefront?' }] });
  upstream.enqueue({ type: 'text', text: 'It is in docs/RELEASING.md.' });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Where is the release checklist?' }] });
  // ...and the long ones a few weeks of work leave, added through the management API.
  const [, , , orgId, , agentId] = new URL(baseUrl).pathname.split('/');
  for (const reflection of LONG_REFLECTIONS) {
    const created = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/reflections`, reflection);
    if (created.status !== 201) throw new Error(`reflection: ${created.status} ${JSON.stringify(created.json)}`);
  }
  // The activity counts are written every few seconds.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  await page.goto(overview);
  await save(page, '5-agent-overview');
  await onPhone('5-agent-overview', overview);
  await page.goto(`${overview}/reflections`);
  await save(page, '6-reflections');
  await onPhone('6-reflections', `${overview}/reflections`);
  // What a request would get injected, and why each other result would not be.
  const search = `${overview}/reflections?q=${encodeURIComponent('Where is the release checklist?')}`;
  await page.goto(search);
  await save(page, '9-reflection-search');
  // The request log: what memory did for each request.
  await page.goto(`${overview}/activity`);
  await save(page, '10-request-log');
  await onPhone('10-request-log', `${overview}/activity`);

  // An MCP client signing in to /v0/mcp: its consent page, then the connected apps.
  const registered = (await (
    await fetch(`${engram.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Codex CLI', redirect_uris: ['http://127.0.0.1:1455/callback'], token_endpoint_auth_method: 'none' }),
    })
  ).json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = new URL(`${engram.url}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: registered.client_id,
    redirect_uri: 'http://127.0.0.1:1455/callback',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${engram.url}/v0/mcp`,
    state: 'screenshot',
  })) {
    authorize.searchParams.set(name, value);
  }
  await page.goto(authorize.href);
  await save(page, '7-mcp-consent');
  // The client's callback is not listening here: only the grant matters.
  const callback = page.waitForRequest(/^http:\/\/127\.0\.0\.1:1455\/callback/);
  await page.getByRole('button', { name: 'Allow' }).click();
  const code = new URL((await callback).url()).searchParams.get('code')!;
  await fetch(`${engram.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: registered.client_id, redirect_uri: 'http://127.0.0.1:1455/callback', resource: `${engram.url}/v0/mcp` }),
  });
  const connections = await browser.context.newPage();
  await connections.setViewportSize({ width: 1280, height: 800 });
  await connections.goto(`${engram.url}/account/connections`);
  await save(connections, '8-connected-apps');
} finally {
  await browser.close();
  await engram.close();
  await upstream.close();
}
