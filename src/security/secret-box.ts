/**
 * Encryption of secrets at rest (upstream API keys): AES-256-GCM with a random 96-bit
 * IV per message. Sealed text is versioned so the scheme can change without breaking
 * stored values: `v1:<iv b64>:<tag b64>:<ciphertext b64>`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, StartupError } from '../errors.js';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_FILE = 'secret-key';

/** Where a data dir keeps its generated key. */
export function secretKeyPath(dataDir: string): string {
  return path.join(dataDir, KEY_FILE);
}

/** The key file is missing and `loadOrCreateSecretKey` was told not to create one. */
export class SecretKeyMissingError extends StartupError {
  override name = 'SecretKeyMissingError';
  constructor(readonly file: string) {
    super(`${file} is missing and ENGRAM_SECRET_KEY is not set`);
  }
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) {
      throw new SecretBoxError(`SecretBox needs a ${KEY_BYTES}-byte key, got ${key.length} bytes`);
    }
    // Copy, so a caller that later zeroes or reuses its buffer cannot change our key.
    this.#key = Buffer.from(key);
  }

  /**
   * Seals `plain`. `context` (e.g. the owning agent's id) is bound as additional
   * authenticated data: a sealed value copied onto another record fails to decrypt.
   */
  encrypt(plain: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64'), tag.toString('base64'), ciphertext.toString('base64')].join(':');
  }

  /** Opens a value sealed by `encrypt` with the same key and context; throws `SecretBoxError` otherwise. */
  decrypt(sealed: string, context = ''): string {
    const parts = sealed.split(':');
    if (parts.length !== 4 || parts[0] !== VERSION) {
      throw new SecretBoxError('Sealed secret has an unknown format (expected v1:<iv>:<tag>:<data>)');
    }
    const iv = Buffer.from(parts[1], 'base64');
    const tag = Buffer.from(parts[2], 'base64');
    const ciphertext = Buffer.from(parts[3], 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new SecretBoxError('Sealed secret is malformed (bad IV or tag length)');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SecretBoxError(
        'Cannot decrypt secret: wrong secret key (ENGRAM_SECRET_KEY / <data dir>/secret-key) or tampered data',
        { cause: error },
      );
    }
  }
}

/** Accepts 64 hex characters or base64 (standard or url-safe) of exactly 32 bytes. */
export function parseSecretKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) {
    const key = Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
    if (key.length === KEY_BYTES) return key;
  }
  return undefined;
}

/**
 * The key that encrypts secrets at rest. A configured key wins; otherwise the key in
 * `<dataDir>/secret-key`, created on first start (directory 0700, file 0600) so a
 * zero-setup install still never stores upstream keys in clear. Losing that file makes
 * stored upstream keys unreadable, which is why an explicit key can be configured.
 * With `create: false` a missing file throws `SecretKeyMissingError` instead: a new key
 * over data sealed with the old one would open none of it.
 */
export function loadOrCreateSecretKey(dataDir: string, configured?: string, options: { create?: boolean } = {}): Buffer {
  if (configured !== undefined && configured !== '') {
    const key = parseSecretKey(configured);
    if (!key) {
      throw new ConfigError('ENGRAM_SECRET_KEY must be 64 hex characters or the base64 of 32 bytes');
    }
    return key;
  }
  const file = secretKeyPath(dataDir);
  const existing = readKeyFile(file);
  if (existing) return existing;
  if (options.create === false) throw new SecretKeyMissingError(file);

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  try {
    // `wx`: never overwrite a key another process created a moment ago.
    writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const raced = readKeyFile(file);
    if (!raced) throw new ConfigError(`${file} appeared but holds no key`);
    return raced;
  }
}

function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const key = parseSecretKey(text);
  if (!key) {
    throw new ConfigError(`${file} does not hold a valid key (64 hex characters or base64 of 32 bytes)`);
  }
  return key;
}
