/**
 * The admin token file the server writes and the CLI reads (src/security/admin-token.ts).
 * Kept beside the CLI tests because the CLI is the file's reader.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN_PREFIX, loadOrCreateAdminToken, readAdminToken } from '../../src/security/admin-token.js';
import { hashToken } from '../../src/security/tokens.js';

const dirs: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-admin-'));
  dirs.push(dir);
  return dir;
}

test.after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

test('a configured token is used as is and nothing is written', () => {
  const dir = path.join(tempDir(), 'data');
  const result = loadOrCreateAdminToken(dir, 'egm_admin_configured');
  assert.equal(result, { hash: hashToken('egm_admin_configured'), created: false });
  assert.not.ok(fs.existsSync(dir));
});

test('without one, a token is generated into <dataDir>/admin-token (0600, dir 0700) and reused', () => {
  const dir = path.join(tempDir(), 'data');
  const first = loadOrCreateAdminToken(dir, undefined);
  assert.is(first.created, true);
  assert.is(first.file, path.join(dir, 'admin-token'));
  assert.is(fs.statSync(first.file!).mode & 0o777, 0o600);
  assert.is(fs.statSync(dir).mode & 0o777, 0o700);
  const token = readAdminToken(dir)!;
  assert.ok(token.startsWith(ADMIN_TOKEN_PREFIX));
  assert.is(first.hash, hashToken(token));
  assert.not.ok(JSON.stringify(first).includes(token), 'only the hash leaves the function');

  const second = loadOrCreateAdminToken(dir, '');
  assert.equal(second, { hash: first.hash, file: first.file, created: false });
});

test('an empty token file is replaced; a missing one reads as undefined', () => {
  const dir = tempDir();
  assert.is(readAdminToken(dir), undefined);
  fs.writeFileSync(path.join(dir, 'admin-token'), '\n', { mode: 0o644 });
  const result = loadOrCreateAdminToken(dir, undefined);
  assert.is(result.created, true);
  assert.is(fs.statSync(result.file!).mode & 0o777, 0o600);
  assert.is(hashToken(readAdminToken(dir)!), result.hash);
});

test.run();
