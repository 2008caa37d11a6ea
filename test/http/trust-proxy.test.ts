/**
 * Behind a proxy (`ENGRAM_TRUST_PROXY`): the client's address comes from the
 * `X-Forwarded-For` of a trusted proxy and from nowhere else, and every per-address limit
 * counts it; log-in failures from one address lock out neither other accounts nor the
 * account's owner at another address. Over real HTTP, from two loopback addresses: the
 * "proxy" connects from 127.0.0.2, an untrusted client from 127.0.0.1.
 */
import http from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession } from '../support/web-session.js';
import { LOG_IN_LIMITS } from '../../src/security/log-in-limits.js';

/** A client registration sent from `from`, with `forwardedFor` as the X-Forwarded-For it claims; answers the status. */
function register(engram: TestEngram, from: string, forwardedFor?: string): Promise<number> {
  const body = JSON.stringify({ client_name: 'limits', redirect_uris: ['http://127.0.0.1:5000/callback'], token_endpoint_auth_method: 'none' });
  const url = new URL('/oauth/register', engram.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Registrations from one client until refused: how many went through. */
async function registrationsUntilRefused(send: (i: number) => Promise<number>): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const status = await send(i);
    if (status === 429) return i;
    assert.is(status, 201);
  }
  throw new Error('never refused');
}

const proxy = suite<{ engram: TestEngram }>('a trusted proxy names the client');

proxy.before(async (context) => {
  context.engram = await startEngram({ 'trust-proxy': '127.0.0.2' });
});

proxy.after(async ({ engram }) => {
  await engram?.close();
});

proxy('X-Forwarded-For from the trusted proxy is the client; from anyone else it is ignored', async ({ engram }) => {
  // Through the proxy, each client has its own registration limit.
  const burst = await registrationsUntilRefused(() => register(engram, '127.0.0.2', '203.0.113.1'));
  assert.ok(burst >= 10, `a burst of ${burst}`);
  assert.is(await register(engram, '127.0.0.2', '203.0.113.2'), 201, 'another client behind the proxy is not held back');
  assert.is(await register(engram, '127.0.0.2', '198.51.100.9, 203.0.113.1'), 429, 'the proxy appends the address it saw: that one counts');
  // A client connecting directly cannot borrow another address by claiming it...
  assert.is(await register(engram, '127.0.0.1', '203.0.113.1'), 201, 'counted as 127.0.0.1, not as the client it claims');
  // ...nor escape its own limit with a new claim each time.
  const direct = await registrationsUntilRefused((i) => register(engram, '127.0.0.1', `198.51.100.${i + 1}`));
  assert.is(direct, burst - 1, 'one limit for 127.0.0.1 whatever it claims');
});

proxy.run();

const logIn = suite<{ engram: TestEngram }>('log-in limits behind a proxy');

logIn.before(async (context) => {
  // The clock stands still: limits refill with time, and a slow machine's log-ins (each an
  // scrypt hash) must not earn the guessing address a try the test says it has not got.
  const frozen = Date.now();
  context.engram = await startEngram({ 'trust-proxy': 'loopback' }, undefined, { now: () => frozen });
});

logIn.after(async ({ engram }) => {
  await engram?.close();
});

const PASSWORD = 'a long enough passphrase';

async function logInFrom(engram: TestEngram, address: string, email: string, password: string) {
  const web = new WebSession(engram.url);
  await web.get('/login');
  return web.post('/login', { email, password, next: '/' }, { 'x-forwarded-for': address });
}

logIn('one address failing at account A stops neither A\'s owner nor account B, each at their own address', async ({ engram }) => {
  for (const email of ['victim@example.com', 'bystander@example.com']) {
    assert.is((await new WebSession(engram.url).signIn(email, PASSWORD)).status, 303);
  }
  const failures = LOG_IN_LIMITS.perAddressAndAccount.burst;
  for (let i = 0; i < failures; i++) assert.is((await logInFrom(engram, '203.0.113.7', 'victim@example.com', `guess ${i}`)).status, 401);
  const refused = await logInFrom(engram, '203.0.113.7', 'victim@example.com', 'guess again');
  assert.is(refused.status, 429, 'the guessing address is held back');
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  const owner = await logInFrom(engram, '198.51.100.20', 'victim@example.com', PASSWORD);
  assert.is(owner.status, 303, `the owner at another address gets in: ${owner.status}`);
  const other = await logInFrom(engram, '198.51.100.30', 'bystander@example.com', PASSWORD);
  assert.is(other.status, 303, `another account at another address: ${other.status}`);
  const attacker = await logInFrom(engram, '203.0.113.7', 'victim@example.com', PASSWORD);
  assert.is(attacker.status, 429, 'even the right password from the guessing address waits');
});

logIn.run();
