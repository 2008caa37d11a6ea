/**
 * `npm run screenshots`: the dashboard's main pages, as the README shows them, taken in
 * Debian's Chromium from a fresh Engram with the scripted upstream of the tests (so one
 * reflection is learnt for real). Writes `docs/screenshots/*.png`.
 */
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { EXTRACTION_SUBJECT } from '../src/memory/extraction-job.js';
import { openBrowser } from '../test/support/chromium.js';
import { eventually, startEngram } from '../test/support/engram.js';
import { startScriptedUpstream } from '../test/support/scripted-upstream/index.js';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');
const upstream = await startScriptedUpstream();
// The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
const engram = await startEngram({ 'dashboard-upstream-allow-private': 'true' });
const browser = await openBrowser();
const page = await browser.context.newPage();
const shot = async (name: string) => {
  await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  console.log(`docs/screenshots/${name}.png`);
};

try {
  await page.goto(`${engram.url}/signup`);
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Password').fill('analytical engine 1843');
  await shot('1-sign-up');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByLabel('Name').fill('acme');
  await page.getByRole('button', { name: 'Create organisation' }).click();
  await page.getByLabel('Name', { exact: true }).fill('coder');
  await page.getByLabel('Upstream base URL').fill(upstream.url);
  await page.getByLabel('Upstream API key').fill('sk-upstream-secret-key-0000000000000000');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await page.locator('#check.notice').waitFor();
  await shot('2-agent');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.locator('input[value="claude-code"]').check();
  await shot('3-tool');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.locator('#configuration').waitFor();
  const token = (await page.locator('#token').innerText()).trim();
  const baseUrl = (await page.locator('#base-url').innerText()).trim();
  await shot('4-token-and-configuration');

  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: token, maxRetries: 0 });
  for (const fact of ['The release checklist lives in docs/RELEASING.md.', 'Run `npm run db:migrate` before the integration tests.']) {
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `REMEMBER: ${fact}` }] });
  }
  await eventually(async () => ((await engram.running.deps.bus.pending(EXTRACTION_SUBJECT)) === 0 ? true : undefined), 10_000, 'extraction');
  // The activity counts are written every few seconds.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  await page.goto(baseUrl.replace('/v0/orgs/', '/orgs/'));
  await shot('5-agent-overview');
  await page.goto(baseUrl.replace('/v0/orgs/', '/orgs/') + '/reflections');
  await shot('6-reflections');
  // On a phone.
  const phone = await browser.browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await browser.context.storageState() });
  const small = await phone.newPage();
  for (const [name, suffix] of [['phone-overview', ''], ['phone-reflections', '/reflections']] as const) {
    await small.goto(baseUrl.replace('/v0/orgs/', '/orgs/') + suffix);
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    console.log(`${name}: page width ${width} px in a 390 px viewport`);
    await small.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  }
  await phone.close();

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
  await shot('7-mcp-consent');
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
  await connections.goto(`${engram.url}/account/connections`);
  await connections.screenshot({ path: path.join(out, '8-connected-apps.png'), fullPage: true });
  console.log('docs/screenshots/8-connected-apps.png');
} finally {
  await browser.close();
  await engram.close();
  await upstream.close();
}
