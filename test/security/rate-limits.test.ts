/** The rate and concurrency limiters on a controlled clock. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConcurrencyLimiter, RateLimiter } from '../../src/security/rate-limits.js';
import { LOG_IN_LIMITS, LogInLimits } from '../../src/security/log-in-limits.js';

test('a burst, then the sustained rate, with the exact wait when refused', () => {
  let now = 1_000_000;
  const limiter = new RateLimiter({ perMinute: 60, burst: 3 }, () => now);
  assert.equal([limiter.take('a'), limiter.take('a'), limiter.take('a')], [0, 0, 0]);
  assert.is(limiter.take('a'), 1_000, 'the fourth waits one interval');
  assert.is(limiter.take('b'), 0, 'keys are independent');
  now += 999;
  assert.is(limiter.take('a'), 1);
  now += 1;
  assert.is(limiter.take('a'), 0);
  assert.is(limiter.take('a'), 1_000);
  now += 10_000;
  assert.equal([limiter.take('a'), limiter.take('a'), limiter.take('a'), limiter.take('a') > 0], [0, 0, 0, true], 'the burst refills');
});

test('refused requests do not count; burst defaults to the per-minute rate', () => {
  let now = 0;
  const limiter = new RateLimiter({ perMinute: 2 }, () => now);
  assert.equal([limiter.take('k'), limiter.take('k')], [0, 0]);
  for (let i = 0; i < 100; i++) assert.is(limiter.take('k'), 30_000);
  now += 30_000;
  assert.is(limiter.take('k'), 0, 'one interval later one more may go, however many were refused');
});

test('wait answers what take would, without counting', () => {
  const limiter = new RateLimiter({ perMinute: 60, burst: 1 }, () => 0);
  for (let i = 0; i < 5; i++) assert.is(limiter.wait('k'), 0);
  assert.is(limiter.take('k'), 0);
  assert.is(limiter.wait('k'), 1_000);
  assert.is(limiter.take('k'), 1_000);
});

test('idle keys are forgotten', () => {
  let now = 0;
  const limiter = new RateLimiter({ perMinute: 600 }, () => now);
  for (let i = 0; i < 1_000; i++) limiter.take(`key-${i}`);
  assert.is(limiter.size, 1_000);
  now += 120_000;
  limiter.take('fresh');
  assert.is(limiter.size, 1);
});

test('concurrency: at most max holders per key; release once, idempotent', () => {
  const limiter = new ConcurrencyLimiter(2);
  const first = limiter.enter('a');
  const second = limiter.enter('a');
  assert.ok(first && second);
  assert.is(limiter.enter('a'), undefined);
  assert.ok(limiter.enter('b'), 'other keys unaffected');
  first();
  first();
  assert.is(limiter.held('a'), 1, 'a double release frees one slot only');
  const third = limiter.enter('a');
  assert.ok(third);
  assert.is(limiter.enter('a'), undefined);
  second();
  third();
  assert.is(limiter.held('a'), 0);
});

test('log-in: one address failing at one account locks neither that account for others nor other accounts', () => {
  const limits = new LogInLimits(() => 0);
  const tries = LOG_IN_LIMITS.perAddressAndAccount.burst;
  for (let i = 0; i < tries; i++) assert.is(limits.take('203.0.113.7', 'a@example.com'), 0);
  assert.ok(limits.take('203.0.113.7', 'a@example.com') > 0, 'that address, that account: refused');
  assert.is(limits.take('198.51.100.1', 'a@example.com'), 0, "the account's owner elsewhere gets in");
  assert.is(limits.take('198.51.100.2', 'b@example.com'), 0, 'another account elsewhere');
  assert.is(limits.take('203.0.113.7', 'b@example.com'), 0, 'that address at another account, within its own bound');
});

test('log-in: an address is bounded across accounts, an account across addresses, and refusals do not count', () => {
  let now = 0;
  const limits = new LogInLimits(() => now);
  let allowed = 0;
  for (let i = 0; i < 100; i++) if (limits.take('203.0.113.7', `user-${i}@example.com`) === 0) allowed++;
  assert.is(allowed, LOG_IN_LIMITS.perAddress.burst, 'one address, many accounts');
  allowed = 0;
  for (let i = 0; i < 200; i++) if (limits.take(`198.51.100.${i}`, 'target@example.com') === 0) allowed++;
  assert.is(allowed, LOG_IN_LIMITS.perAccount.burst, 'one account, many addresses');
  now += 60_000 / LOG_IN_LIMITS.perAccount.perMinute;
  assert.is(limits.take('192.0.2.1', 'target@example.com'), 0, 'one interval later, one more: the refused ones did not push it out');
});

test.run();
