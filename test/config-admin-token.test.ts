/**
 * Issue 15: `ENGRAM_ADMIN_TOKEN` opens every org, so a configured one must be at least 32
 * characters carrying an estimated 128 bits; a weak one stops the server before it starts,
 * with a message saying how to make a good one.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../src/config.js';
import { estimatedBits } from '../src/domain/token-strength.js';
import { ADMIN_TOKEN_PREFIX } from '../src/security/admin-token.js';
import { cleanEnv, CLI_ENTRY } from './support/cli.js';

const refused = (token: string) => {
  try {
    loadConfig({ 'admin-token': token }, {});
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return undefined;
};

test('short, repetitive, sequential or prefix-only tokens are refused, saying how to make one', () => {
  for (const weak of [
    'secret',
    'changeme-changeme-changeme-changeme',
    'a'.repeat(64),
    '0123456789abcdefghijklmnopqrstuvwxyz',
    'abcabcabcabcabcabcabcabcabcabcabcabcabc',
    'egm_admin_test_token_0123456789abcdef',
    'egm_admin_00000000000000000000000000000000',
    `${ADMIN_TOKEN_PREFIX}${'x'.repeat(30)}`,
  ]) {
    const message = refused(weak);
    assert.ok(message, `"${weak}" is refused`);
    assert.match(message!, 'ENGRAM_ADMIN_TOKEN is too weak');
    assert.match(message!, 'openssl rand -hex 32');
  }
  assert.match(refused('short')!, 'at least 32 are required');
  assert.match(refused('changeme-changeme-changeme-changeme')!, /estimated \d+ bits/);
});

test('random tokens pass: openssl rand -hex 32, base64 of 24 bytes, the generated form', () => {
  for (let i = 0; i < 200; i++) {
    for (const token of [randomBytes(32).toString('hex'), randomBytes(24).toString('base64'), ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url')]) {
      assert.is(refused(token), undefined, token);
    }
  }
  assert.ok(estimatedBits(ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url'), ADMIN_TOKEN_PREFIX) > 200);
  assert.is(loadConfig({}, {}).adminToken, undefined, 'no token configured: one is generated');
});

test('engram serve refuses to start with a weak admin token', async () => {
  const child = spawn(process.execPath, [...CLI_ENTRY, 'serve', '--port', '0', '--data-dir', path.join(os.tmpdir(), 'engram-weak-token')], {
    env: cleanEnv({ ENGRAM_ADMIN_TOKEN: 'admin123' }),
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  // A server that started anyway is stopped, and the test fails on its exit code.
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  assert.is(code, 2, stderr);
  assert.match(stderr, 'ENGRAM_ADMIN_TOKEN is too weak');
});

test.run();
