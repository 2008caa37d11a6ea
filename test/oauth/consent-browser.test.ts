/**
 * The consent form in a real browser (Debian's Chromium through playwright-core): after
 * Allow or Deny, the browser must follow the redirect to the client's loopback callback.
 * `form-action` governs that redirect, and CSP has no way to name an IPv6 host: Chromium
 * ignored `http://[::1]:*` as an invalid source and blocked a client whose callback is
 * `http://[::1]:PORT` (as a client binding the IPv6 loopback registers it). The page's
 * policy allows its own callback: the origin, or for `[::1]` the scheme.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { openBrowser, type TestBrowser } from '../support/chromium.js';
import { eventually, startEngram, type TestEngram } from '../support/engram.js';
import { agentFor, authorizeUrl, pkce, registerClient, signUp, tokenRequest, PASSWORD } from './support.js';

interface Callback {
  /** `http://<host>:<port>/callback` */
  uri: string;
  /** The query strings the browser came back to the callback with. */
  hits: URLSearchParams[];
  close(): Promise<void>;
}

/** The client's local callback: a server on `host` that records what the browser brings. */
async function callbackServer(host: string): Promise<Callback> {
  const hits: URLSearchParams[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://callback');
    // Only the callback: the browser also asks the origin for its /favicon.ico.
    if (url.pathname === '/callback') hits.push(url.searchParams);
    response.writeHead(200, { 'content-type': 'text/html' }).end('<p>You may close this window.</p>');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://${host.includes(':') ? `[${host}]` : host}:${port}/callback`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Context {
  engram: TestEngram;
  browser: TestBrowser;
}
const test = suite<Context>('OAuth consent in Chromium');

const EMAIL = 'grace@example.com';

test.before(async (context) => {
  context.engram = await startEngram();
  await signUp(context.engram, EMAIL);
  await agentFor(context.engram, EMAIL, 'grace agent');
  context.browser = await openBrowser();
});
test.after(async ({ engram, browser }) => {
  await browser?.close();
  await engram?.close();
});

/** The browser's part: the authorization URL, log-in, the consent form answered; the CSP complaints on the way. */
async function authorizeInBrowser(page: Page, engram: TestEngram, callback: Callback, decision: 'Allow' | 'Deny', state: string) {
  const registered = await registerClient(engram, [callback.uri], 'IPv6 client');
  assert.is(registered.status, 201, JSON.stringify(registered.json));
  const clientId = registered.json.client_id as string;
  const { verifier, challenge } = pkce();
  const complaints: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) complaints.push(message.text());
  });
  await page.goto(engram.url + authorizeUrl(engram, { clientId, redirectUri: callback.uri, challenge, state }));
  if (page.url().includes('/login')) {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  }
  await page.getByRole('button', { name: decision }).click();
  const query = await eventually(async () => callback.hits.at(-1), 10_000, 'the browser at the callback');
  return { clientId, verifier, query, complaints };
}

test('a callback on [::1]: Allow brings the browser back with a code that the token endpoint takes', async ({ engram, browser }) => {
  const callback = await callbackServer('::1');
  const page = await browser.context.newPage();
  try {
    const { clientId, verifier, query, complaints } = await authorizeInBrowser(page, engram, callback, 'Allow', 'v6-allow');
    assert.equal(complaints, [], 'no CSP source ignored, nothing blocked');
    assert.is(query.get('state'), 'v6-allow');
    const code = query.get('code');
    assert.ok(code, `a code (${query})`);
    assert.ok(page.url().startsWith(callback.uri), page.url());
    const tokens = await tokenRequest(engram, { grant_type: 'authorization_code', client_id: clientId, code: code!, code_verifier: verifier, redirect_uri: callback.uri });
    assert.is(tokens.status, 200, JSON.stringify(tokens.json));
    assert.ok(tokens.json.access_token);
  } finally {
    await page.close();
    await callback.close();
  }
});

test('a callback on [::1]: Deny brings the browser back with access_denied', async ({ engram, browser }) => {
  const callback = await callbackServer('::1');
  const page = await browser.context.newPage();
  try {
    const { query, complaints } = await authorizeInBrowser(page, engram, callback, 'Deny', 'v6-deny');
    assert.equal(complaints, []);
    assert.is(query.get('error'), 'access_denied');
    assert.is(query.get('state'), 'v6-deny');
  } finally {
    await page.close();
    await callback.close();
  }
});

test('a callback on 127.0.0.1 still works, and the consent page allows only that origin', async ({ engram, browser }) => {
  const callback = await callbackServer('127.0.0.1');
  const page = await browser.context.newPage();
  try {
    let policy = '';
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/oauth/authorize' && response.request().method() === 'GET') policy = response.headers()['content-security-policy'] ?? '';
    });
    const { query, complaints } = await authorizeInBrowser(page, engram, callback, 'Allow', 'v4');
    assert.equal(complaints, []);
    assert.ok(query.get('code'), `a code (${query})`);
    assert.match(policy, `form-action 'self' ${new URL(callback.uri).origin};`);
  } finally {
    await page.close();
    await callback.close();
  }
});

test.run();
