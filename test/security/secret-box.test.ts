import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadOrCreateSecretKey, parseSecretKey, SecretBox, SecretBoxError } from '../../src/security/secret-box.js';

const box = suite('SecretBox');

box('round trip, including unicode and the empty string', () => {
  const b = new SecretBox(randomBytes(32));
  for (const plain of ['sk-ant-api03-abc', '', 'ключ 🔑 with : colons']) {
    assert.is(b.decrypt(b.encrypt(plain)), plain);
  }
});

box('sealed text is versioned, random per call and does not contain the plain text', () => {
  const b = new SecretBox(randomBytes(32));
  const one = b.encrypt('sk-secret-value');
  const two = b.encrypt('sk-secret-value');
  assert.match(one, /^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/);
  assert.is.not(one, two);
  assert.not.ok(one.includes('sk-secret-value'));
});

box('tampering, a wrong key, a wrong context or a bad format throw SecretBoxError', () => {
  const key = randomBytes(32);
  const b = new SecretBox(key);
  const sealed = b.encrypt('sk-secret', 'agt_1');
  assert.is(b.decrypt(sealed, 'agt_1'), 'sk-secret');

  const [v, iv, tag, data] = sealed.split(':');
  const flipped = Buffer.from(data, 'base64');
  flipped[0] ^= 1;
  const expectError = (run: () => unknown, pattern: RegExp): void => {
    try {
      run();
    } catch (error) {
      assert.instance(error, SecretBoxError);
      assert.match((error as Error).message, pattern);
      return;
    }
    assert.unreachable('expected SecretBoxError');
  };
  expectError(() => b.decrypt([v, iv, tag, flipped.toString('base64')].join(':'), 'agt_1'), /tampered/);
  const badTag = Buffer.from(tag, 'base64');
  badTag[3] ^= 0x80;
  expectError(() => b.decrypt([v, iv, badTag.toString('base64'), data].join(':'), 'agt_1'), /tampered/);
  expectError(() => new SecretBox(randomBytes(32)).decrypt(sealed, 'agt_1'), /wrong secret key/);
  expectError(() => b.decrypt(sealed, 'agt_2'), /Cannot decrypt/);
  expectError(() => b.decrypt(sealed), /Cannot decrypt/);
  expectError(() => b.decrypt('v2:' + sealed.slice(3), 'agt_1'), /unknown format/);
  expectError(() => b.decrypt('sk-plain', 'agt_1'), /unknown format/);
  expectError(() => b.decrypt(`v1:${iv}:AAAA:${data}`, 'agt_1'), /malformed/);
  assert.is(new SecretBox(Buffer.from(key)).decrypt(sealed, 'agt_1'), 'sk-secret', 'same key, new box');
});

box('the key must be 32 bytes', () => {
  assert.throws(() => new SecretBox(randomBytes(16)), /32-byte key/);
});

box.run();

const keys = suite('loadOrCreateSecretKey');

keys('accepts a configured key as hex or base64 (standard or url-safe)', () => {
  const key = randomBytes(32);
  const dir = path.join(tmpdir(), 'engram-never-created-' + randomBytes(4).toString('hex'));
  assert.equal(loadOrCreateSecretKey(dir, key.toString('hex')), key);
  assert.equal(loadOrCreateSecretKey(dir, key.toString('hex').toUpperCase()), key);
  assert.equal(loadOrCreateSecretKey(dir, key.toString('base64')), key);
  assert.equal(loadOrCreateSecretKey(dir, key.toString('base64url')), key);
  assert.equal(loadOrCreateSecretKey(dir, ` ${key.toString('hex')}\n`), key);
  assert.throws(() => loadOrCreateSecretKey(dir, 'too-short'), /ENGRAM_SECRET_KEY/);
  assert.throws(() => loadOrCreateSecretKey(dir, randomBytes(31).toString('hex')), /ENGRAM_SECRET_KEY/);
  assert.throws(() => loadOrCreateSecretKey(dir, randomBytes(16).toString('base64')), /ENGRAM_SECRET_KEY/);
  assert.is(parseSecretKey(randomBytes(33).toString('base64')), undefined);
});

keys('creates <dataDir>/secret-key (0600, directory 0700) once and reads it back', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'engram-key-'));
  try {
    const dataDir = path.join(root, 'nested', 'data');
    const key = loadOrCreateSecretKey(dataDir);
    assert.is(key.length, 32);
    const file = path.join(dataDir, 'secret-key');
    assert.is(statSync(file).mode & 0o777, 0o600);
    assert.is(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(parseSecretKey(readFileSync(file, 'utf8')), key);
    assert.equal(loadOrCreateSecretKey(dataDir), key, 'the same key on the next start');
    const configured = randomBytes(32);
    assert.equal(loadOrCreateSecretKey(dataDir, configured.toString('hex')), configured, 'configured wins');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

keys('a damaged key file is an error, never silently replaced', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'engram-key-'));
  try {
    writeFileSync(path.join(root, 'secret-key'), 'not a key\n', { mode: 0o600 });
    assert.throws(() => loadOrCreateSecretKey(root), /does not hold a valid key/);
    assert.is(readFileSync(path.join(root, 'secret-key'), 'utf8'), 'not a key\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

keys.run();
