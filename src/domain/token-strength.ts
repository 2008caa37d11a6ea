/**
 * How hard a configured admin token would be to guess. The admin token opens every org,
 * so `ENGRAM_ADMIN_TOKEN` must be long and random: at least 32 characters carrying an
 * estimated 128 bits. The estimate is deliberately simple (no dictionary): each character
 * is worth log2 of the alphabet the token draws from (the classes it uses), except one
 * that repeats the previous character, steps by one from it (`0123`, `abcd`), or ends a
 * three-character run seen earlier (`abcabc`): those are worth one bit. The public prefix
 * of generated tokens counts for nothing. A generated token (the prefix and 32 random
 * bytes in base64url) estimates near 250 bits; `openssl rand -hex 32` near 280.
 */

/** Prefix of every token Engram generates (`security/tokens.ts`): public, and how the log knows one. */
export const TOKEN_PREFIX = 'egm_';
/** Prefix of the admin tokens Engram generates; public, so it adds nothing to a token's strength. */
export const ADMIN_TOKEN_PREFIX = `${TOKEN_PREFIX}admin_`;
export const ADMIN_TOKEN_MIN_LENGTH = 32;
export const ADMIN_TOKEN_MIN_BITS = 128;

/** Sizes of the character classes a token may draw from. */
function alphabetSize(characters: readonly string[]): number {
  let size = 0;
  if (characters.some((c) => c >= 'a' && c <= 'z')) size += 26;
  if (characters.some((c) => c >= 'A' && c <= 'Z')) size += 26;
  if (characters.some((c) => c >= '0' && c <= '9')) size += 10;
  if (characters.some((c) => c < '\u0080' && !/[a-zA-Z0-9]/.test(c))) size += 33;
  if (characters.some((c) => c >= '\u0080')) size += 100;
  return size;
}

/** The estimated bits of `secret`, not counting `publicPrefix` when it starts with it. */
export function estimatedBits(secret: string, publicPrefix = ''): number {
  const body = publicPrefix !== '' && secret.startsWith(publicPrefix) ? secret.slice(publicPrefix.length) : secret;
  const characters = [...body];
  if (characters.length === 0) return 0;
  const full = Math.log2(alphabetSize(characters));
  const seen = new Set<string>();
  let bits = 0;
  for (let i = 0; i < characters.length; i++) {
    const code = characters[i].codePointAt(0)!;
    const previous = i > 0 ? characters[i - 1].codePointAt(0)! : undefined;
    const run = i >= 2 ? characters.slice(i - 2, i + 1).join('') : undefined;
    const predictable = (previous !== undefined && Math.abs(code - previous) <= 1) || (run !== undefined && seen.has(run));
    if (run !== undefined) seen.add(run);
    bits += predictable ? 1 : full;
  }
  return bits;
}

/** Why `token` is refused as the admin token, or undefined when it is strong enough. */
export function adminTokenWeakness(token: string): string | undefined {
  if (token.length < ADMIN_TOKEN_MIN_LENGTH) return `it has ${token.length} characters, at least ${ADMIN_TOKEN_MIN_LENGTH} are required`;
  const bits = Math.floor(estimatedBits(token, ADMIN_TOKEN_PREFIX));
  if (bits < ADMIN_TOKEN_MIN_BITS) return `it carries an estimated ${bits} bits of randomness, at least ${ADMIN_TOKEN_MIN_BITS} are required`;
  return undefined;
}
