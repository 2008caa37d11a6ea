/**
 * `npm run screenshots`: the dashboard's main pages, as the README shows them, taken in
 * Debian's Chromium from a fresh Engram with the scripted upstream of the tests (so one
 * reflection is learnt for real). Writes `docs/screenshots/*.png`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { EXTRACTION_SUBJECT } from '../src/memory/extraction-job.js';
import { openBrowser } from '../test/support/chromium.js';
import { eventually, startEngram } from '../test/support/engram.js';
import { startScriptedUpstream } from '../test/support/scripted-upstream/index.js';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');
const upstream = await startScriptedUpstream();
const engram = await startEngram();
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
  await page.goto(baseUrl.replace('/v0/orgs/', '/orgs/'));
  await shot('5-agent-overview');
  await page.goto(baseUrl.replace('/v0/orgs/', '/orgs/') + '/reflections');
  await shot('6-reflections');
} finally {
  await browser.close();
  await engram.close();
  await upstream.close();
}
