/**
 * A local model on a personal install, in a real browser (Debian's Chromium through
 * playwright-core): on an Engram that listens only on loopback, with sign-up open as by
 * default, a person signs up, creates an agent whose upstream is a model server on this
 * machine (the scripted upstream on 127.0.0.1), tests the connection, uses the token and
 * sees the request on the activity page. On an Engram that listens on every address with
 * sign-up open, the same upstream is refused, and the form says what to do instead; so it
 * is on the personal install for a request that came through a tunnel or under another
 * host name.
 */
import http from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { openBrowser, type TestBrowser } from '../support/chromium.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { WebSession } from '../support/web-session.js';

interface Context {
  upstream: ScriptedUpstream;
  browser: TestBrowser;
  engrams: TestEngram[];
}

const test = suite<Context>('local models from the dashboard');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.browser = await openBrowser();
  context.engrams = [];
});

test.after(async ({ engrams, upstream, browser }) => {
  await browser?.close();
  for (const engram of engrams ?? []) await engram.close();
  await upstream?.close();
});

/** `web.post` with another Host header, through node:http (fetch does not let a caller set Host). */
function postWithHost(web: WebSession, path: string, fields: Record<string, string>, host: string): Promise<{ status: number; text: string }> {
  const url = new URL(web.baseUrl);
  const body = new URLSearchParams({ _csrf: web.csrf, ...fields }).toString();
  const cookie = [...web.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  return new Promise((resolve, reject) => {
    const sent = http.request(
      { host: url.hostname, port: url.port, path, method: 'POST', headers: { host, cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    sent.on('error', reject).end(body);
  });
}

/** Where a browser on this machine reaches `engram`: a listener on every address is reached on loopback. */
const reach = (engram: TestEngram) => engram.url.replace('//0.0.0.0:', '//127.0.0.1:');

/** Signs up and creates an organisation; leaves the page on the new-agent form with its fields filled for `baseUrl`. */
async function fillNewAgent(page: Page, engram: TestEngram, email: string, baseUrl: string): Promise<void> {
  await page.goto(reach(engram) + '/signup');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough passphrase');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.waitForURL(/\/orgs\/new$/);
  await page.getByLabel('Name').fill(`home-${email.split('@')[0]}`);
  await page.getByRole('button', { name: 'Create organisation' }).click();
  await page.waitForURL(/\/agents\/new$/);
  await page.getByLabel('Name', { exact: true }).fill('local');
  await page.getByLabel('Upstream base URL').fill(baseUrl);
  await page.getByLabel('Upstream API key').fill('ollama-needs-no-key-but-takes-one');
}

test('loopback-only Engram, sign-up open: an agent on a local model server is created from the dashboard and its first request shows on the activity page', async ({ upstream, browser, engrams }) => {
  // The defaults but for the port and data dir: ENGRAM_HOST 127.0.0.1, sign-up open, no proxy in front.
  const engram = await startEngram();
  engrams.push(engram);
  assert.ok(engram.running.deps.config.dashboardUpstreamAllowPrivate, 'a personal install lets its dashboard users reach local models');
  const page = await browser.context.newPage();
  try {
    await fillNewAgent(page, engram, 'me@localhost.example', upstream.url);
    assert.match(await page.locator('form[action$="/agents/new"]').innerText(), 'A model server on this machine works too, such as Ollama at http://127.0.0.1:11434.');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.locator('#check.notice').waitFor();
    assert.match(await page.locator('#check').innerText(), /answered 200 OK/);
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/connect$/);
    await page.locator('input[name="tool"][value="openai-sdk"]').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#token').waitFor();
    const token = (await page.locator('#token').innerText()).trim();
    const baseUrl = (await page.locator('#base-url').innerText()).trim();

    upstream.enqueue({ type: 'text', text: 'Hello from the local model.' });
    const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: token, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'Say hello from this machine' }] });
    assert.is(answer.choices[0]?.message.content, 'Hello from the local model.');
    assert.match(upstream.requests.at(-1)!.raw.toString('utf8'), 'Say hello from this machine', 'the local model server was asked');

    // The dashboard's agent pages are under the same path as its base URL, without /v0.
    await page.goto(engram.url + new URL(baseUrl).pathname.replace(/^\/v0/, '') + '/activity');
    const rows = page.locator('#requests tbody tr');
    await rows.first().waitFor();
    assert.is(await rows.count(), 1, 'one request so far');
    assert.match(await rows.first().locator('td[data-label="Status"]').innerText(), '200');
  } finally {
    await page.close();
  }
});

test('Engram on every address, sign-up open: the same upstream is refused with what to do instead', async ({ upstream, browser, engrams }) => {
  const engram = await startEngram({ host: '0.0.0.0' });
  engrams.push(engram);
  const page = await browser.context.newPage();
  try {
    await fillNewAgent(page, engram, 'visitor@example.com', upstream.url);
    assert.not.match(await page.locator('form[action$="/agents/new"]').innerText(), 'A model server on this machine', 'not offered where it is refused');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const said = await page.locator('.error, [role="alert"]').first().innerText();
    assert.match(said, /The upstream base URL is refused: 127\.0\.0\.1 is a loopback address/);
    assert.match(said, /Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/);
    assert.not.match(said, '`upstream.base_url`', 'no internal field name');
    assert.match(page.url(), /\/agents\/new$/, 'still on the form');
  } finally {
    await page.close();
  }
});

test('personal install reached through a tunnel or under another host name: a loopback upstream is refused, in the test and on saving', async ({ upstream, engrams }) => {
  const engram = engrams[0]!;
  const web = new WebSession(engram.url);
  assert.is((await web.signIn('tunnel@example.com', 'a long enough passphrase')).status, 303);
  await web.get('/orgs/new');
  const newAgent = (await web.post('/orgs/new', { name: 'tunnelled' })).location!;
  const orgId = newAgent.split('/')[2]!;
  const fields = (intent: string) => ({ intent, name: 'local', base_url: upstream.url, api_key: 'sk-x-1234567890', headers: '' });
  const elsewhere: Array<Record<string, string>> = [
    { 'x-forwarded-for': '203.0.113.9' }, // ngrok, cloudflared, a reverse proxy
    { forwarded: 'for=203.0.113.9;proto=https' },
    { 'cf-connecting-ip': '203.0.113.9' },
  ];
  for (const headers of elsewhere) {
    const why = JSON.stringify(headers);
    await web.get(newAgent);
    const saved = await web.post(newAgent, fields('create'), headers);
    assert.is(saved.status, 400, why);
    assert.match(saved.text, /The upstream base URL is refused: 127\.0\.0\.1 is a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network/, why);
    await web.get(newAgent);
    const tested = await web.post(`/orgs/${orgId}/agents/check`, fields('check'), { ...headers, 'hx-request': 'true' });
    // The page cuts values into pieces that wrap only after / or . (soft-breaks.ts): read its text.
    assert.match(tested.text.replace(/<[^>]*>/g, ''), /127\.0\.0\.1 is a loopback address/, why);
  }
  // A tunnel that keeps its public host name, or a DNS-rebinding page under its own name (fetch cannot set Host).
  await web.get(newAgent);
  const renamed = await postWithHost(web, newAgent, fields('create'), 'engram-abc123.tunnel.example');
  assert.is(renamed.status, 400);
  assert.match(renamed.text, /The upstream base URL is refused: 127\.0\.0\.1 is a loopback address/);
  assert.equal(await engram.running.deps.control.directory.listAgents(orgId), [], 'no agent was saved');
  // The same person on this machine's own browser: allowed.
  await web.get(newAgent);
  assert.is((await web.post(newAgent, fields('create'))).status, 303, 'saved from this machine');
});

test.run();
