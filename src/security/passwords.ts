/**
 * Dashboard passwords, hashed with scrypt at OWASP's parameters (N = 2^17, r = 8, p = 1,
 * Password Storage Cheat Sheet) and stored self-describing,
 * `scrypt$<N>$<r>$<p>$<salt>$<hash>`, so the parameters can be raised later: a hash made
 * with weaker ones still verifies, and `needsRehash` says to store a new one at the next
 * log-in. scrypt runs on libuv's thread pool, so a log-in never blocks the event loop.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParameters {
  N: number;
  r: number;
  p: number;
}

export const OWASP_SCRYPT: ScryptParameters = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** Passwords longer than this are refused before hashing (NIST allows at least 64). */
export const MAX_PASSWORD_LENGTH = 256;
export const MIN_PASSWORD_LENGTH = 10;

function derive(password: string, salt: Buffer, { N, r, p }: ScryptParameters): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; Node's default cap (32 MiB) is below OWASP's 128 MiB.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string, parameters: ScryptParameters = OWASP_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, parameters);
  return ['scrypt', parameters.N, parameters.r, parameters.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function parse(stored: string): { parameters: ScryptParameters; salt: Buffer; key: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((value) => Number.isInteger(value) && value > 0)) return undefined;
  return { parameters: { N, r, p }, salt: Buffer.from(parts[4]!, 'base64url'), key: Buffer.from(parts[5]!, 'base64url') };
}

/** False for a wrong password and for a stored value that is not a hash this module made. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed || password.length > MAX_PASSWORD_LENGTH) return false;
  const key = await derive(password, parsed.salt, parsed.parameters);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/** Whether the stored hash was made with other parameters than `current` (store a fresh one). */
export function needsRehash(stored: string, current: ScryptParameters = OWASP_SCRYPT): boolean {
  const parsed = parse(stored);
  return !parsed || parsed.parameters.N !== current.N || parsed.parameters.r !== current.r || parsed.parameters.p !== current.p;
}

/** Why a new password is refused, or undefined when it is acceptable (NIST SP 800-63B: length, not composition rules). */
export function passwordWeakness(password: string, email: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Use at most ${MAX_PASSWORD_LENGTH} characters.`;
  if (password.toLowerCase() === email.trim().toLowerCase()) return 'Do not use your email address as the password.';
  if (new Set(password).size < 4) return 'Use a password with more different characters.';
  return undefined;
}
