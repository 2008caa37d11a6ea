/**
 * Where log-in and sign-up send the browser afterwards (`next`) stays on Engram: a
 * `next` is read as a browser reads a `Location` (tabs and newlines dropped, `\` taken
 * for `/`), and anything that would leave Engram's origin goes to `/`. Over real HTTP for
 * every way in (the log-in and sign-up forms, their GET with a session, the form's hidden
 * field), and in Chromium, which must end up on Engram.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openBrowser, type TestBrowser } from '../support/chromium.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession } from '../support/web-session.js';

const test = suite<{ engram: TestEngram; web: WebSession }>('log-in and sign-up redirects stay on Engram');

const PASSWORD = 'a long enough passphrase';
const EMAIL = 'next@example.com';

test.before(async (context) => {
  context.engram = await startEngram();
  context.web = new WebSession(context.engram.url);
  assert.is((await context.web.signIn(EMAIL, PASSWORD)).status, 303);
});

test.after(async ({ engram }) => {
  await engram?.close();
});

/** What the audit found: a tab read as nothing, and newlines that made a 500. */
const FOUND = ['/\t/evil.example/phish', '/\n/evil.example/phish', '/\r/evil.example/phish', '/\r\n/evil.example'];
/** Those, then the classic ways to leave a site through a redirect. */
const LEAVING = [
  ...FOUND,
  '//evil.example',
  '///evil.example',
  '/\\evil.example',
  '\\\\evil.example',
  '/\\/evil.example',
  '\t//evil.example',
  ' //evil.example',
  '/.//evil.example',
  '/..//evil.example',
  'https:evil.example',
  'https://evil.example/',
  'HTTPS://evil.example/',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'java\tscript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'http://127.0.0.1:1/elsewhere',
];
/** Odd, but on Engram: kept as the same page, re-encoded. */
const STAYING: Array<[string, string]> = [
  ['/orgs/new', '/orgs/new'],
  ['/orgs/new?x=1#part', '/orgs/new?x=1#part'],
  ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
  ['/%09/evil.example', '/%09/evil.example'],
  ['/\u3000/page', '/%E3%80%80/page'],
  ['/a b', '/a%20b'],
  ['/\u0000/evil.example', '/%00/evil.example'],
  // An ideographic space is no space to the URL parser (it made a 500 as a raw header).
  ['\u3000//evil.example', '/%E3%80%80//evil.example'],
  ['/\u2028/evil.example', '/%E2%80%A8/evil.example'],
];

/** The answer's Location resolves on Engram's own origin and is a plain path. */
function staysOnEngram(engram: TestEngram, location: string | null, what: string): void {
  assert.ok(location, `${what}: a Location`);
  assert.is(new URL(location, engram.url).origin, new URL(engram.url).origin, `${what}: ${JSON.stringify(location)} stays on Engram`);
  assert.match(location, /^\/(?![/\\])/, `${what}: a path`);
  assert.not.match(location, /[\u0000-\u0020\u007f-\uffff]/, `${what}: nothing a browser would strip or re-read`);
}

test('a signed-in visitor sent to /login or /signup with a leaving `next` lands on /', async ({ engram, web }) => {
  for (const next of LEAVING) {
    for (const page of ['/login', '/signup']) {
      const answer = await web.get(`${page}?next=${encodeURIComponent(next)}`);
      assert.is(answer.status, 303, `${page} ${JSON.stringify(next)}: ${answer.text.slice(0, 200)}`);
      assert.is(answer.location, '/', `${page} ${JSON.stringify(next)}`);
      staysOnEngram(engram, answer.location, page);
    }
  }
  for (const [next, expected] of STAYING) {
    const answer = await web.get(`/login?next=${encodeURIComponent(next)}`);
    assert.is(answer.status, 303);
    assert.is(answer.location, expected, JSON.stringify(next));
  }
});

test('the log-in form carries / in its hidden field for a leaving `next`', async ({ engram }) => {
  const visitor = new WebSession(engram.url);
  for (const next of LEAVING) {
    const form = await visitor.get(`/login?next=${encodeURIComponent(next)}`);
    assert.is(form.status, 200);
    assert.match(form.text, '<input type="hidden" name="next" value="/">', JSON.stringify(next));
  }
});

test('logging in with a leaving `next` posted directly redirects to /, never a 500', async ({ engram }) => {
  // Fresh sessions, one attempt each: a log-in that succeeds still counts against the limits.
  for (const next of [...FOUND, '/\\evil.example', 'https:evil.example', 'javascript:alert(1)', '\u3000//evil.example']) {
    const web = new WebSession(engram.url);
    await web.get('/login');
    const answer = await web.post('/login', { email: EMAIL, password: PASSWORD, next });
    assert.is(answer.status, 303, `${JSON.stringify(next)}: ${answer.status} ${answer.text.slice(0, 200)}`);
    staysOnEngram(engram, answer.location, JSON.stringify(next));
    assert.ok(web.cookies.has('engram_session'), 'signed in all the same');
  }
  const web = new WebSession(engram.url);
  await web.get('/login');
  const kept = await web.post('/login', { email: EMAIL, password: PASSWORD, next: '/orgs/new?from=login' });
  assert.is(kept.location, '/orgs/new?from=login', 'a page of Engram is kept');
});

test('signing up with a leaving `next` redirects to /, never a 500', async ({ engram }) => {
  let n = 0;
  for (const next of [FOUND[0]!, FOUND[1]!, '\u3000//evil.example', '//evil.example']) {
    const web = new WebSession(engram.url);
    await web.get('/signup');
    const answer = await web.post('/signup', { email: `new-${++n}@example.com`, password: PASSWORD, next });
    assert.is(answer.status, 303, `${JSON.stringify(next)}: ${answer.status} ${answer.text.slice(0, 200)}`);
    staysOnEngram(engram, answer.location, JSON.stringify(next));
  }
});

test.run();

const browser = suite<{ engram: TestEngram; browser: TestBrowser }>('log-in redirects in Chromium');

browser.before(async (context) => {
  context.engram = await startEngram();
  assert.is((await new WebSession(context.engram.url).signIn(EMAIL, PASSWORD)).status, 303);
  context.browser = await openBrowser();
});

browser.after(async ({ engram, browser }) => {
  await browser?.close();
  await engram?.close();
});

browser('a link to the log-in page with a tab in `next` leaves the browser on Engram after logging in', async ({ engram, browser }) => {
  const page = await browser.context.newPage();
  // Nothing may leave: a request to any other host fails at once instead of waiting for DNS.
  const left: string[] = [];
  await page.route((url) => url.origin !== new URL(engram.url).origin, (route) => {
    left.push(route.request().url());
    return route.abort();
  });
  // The CSP's form-action ('self': only the consent page adds its client's callback) would
  // also stop a redirect off Engram after the form; `next` must not produce one at all.
  await page.goto(`${engram.url}/login?next=${encodeURIComponent('/\t/localhost:9/phish')}`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForLoadState('load');
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 10_000 }).catch(() => undefined);
  assert.is(new URL(page.url()).origin, new URL(engram.url).origin, `ended on ${page.url()}`);
  assert.equal(left, [], 'no request left Engram');
  await page.close();
});

browser.run();
