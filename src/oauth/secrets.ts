/**
 * The shapes of the authorization server's secrets: codes and refresh tokens are
 * `<grant id>.<secret>` (the id finds the grant in one read; only the secret's SHA-256 is
 * stored, hashed and compared by `security/tokens.ts` as for agent tokens: 256 random bits
 * need no slow hash), and PKCE's S256 check (RFC 7636 §4.6), in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const GRANT_TOKEN = /^(grt_[A-Za-z0-9]{16})\.([A-Za-z0-9_-]{43})$/;

/** A code or refresh token as presented, split; undefined when it is not shaped like one of ours. */
export function splitGrantToken(token: string): { grantId: string; secret: string } | undefined {
  const match = GRANT_TOKEN.exec(token);
  return match ? { grantId: match[1], secret: match[2] } : undefined;
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** The S256 challenge is the base64url (no padding) of a SHA-256: always 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Whether `verifier` is the one `challenge` was made from (S256), compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !S256_CHALLENGE.test(challenge)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
