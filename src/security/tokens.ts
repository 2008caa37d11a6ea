import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { TOKEN_PREFIX } from '../domain/token-strength.js';

/** 256 random bits as 43 characters of base64url: the secret part of a token, session, code or link. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A new access token: `egm_` and a secret (256 bits). Shown once. */
export function generateToken(): string {
  return TOKEN_PREFIX + newSecret();
}

/** Tokens carry 256 random bits, so a fast hash is enough; only the hash is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What listings show of a token: its first characters. */
export function tokenDisplayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

export function looksLikeToken(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX) && value.length > TOKEN_PREFIX.length + 8;
}

/** Constant-time comparison of two hex hashes. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Longest `<id>.<secret>` value looked at: anything longer is not one of ours. */
const MAX_ID_SECRET_LENGTH = 200;

/**
 * A session cookie or invitation link, `<record id>.<secret>`, split: the id finds the
 * record in one read, the secret is checked against its stored hash. Undefined when the
 * value is not shaped so.
 */
export function splitIdSecret(value: string | undefined): { id: string; secret: string } | undefined {
  if (!value || value.length > MAX_ID_SECRET_LENGTH) return undefined;
  const dot = value.indexOf('.');
  if (dot < 1 || dot === value.length - 1) return undefined;
  return { id: value.slice(0, dot), secret: value.slice(dot + 1) };
}
