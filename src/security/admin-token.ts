/**
 * The admin bearer token (DESIGN section 4): `ENGRAM_ADMIN_TOKEN` when configured, else
 * a token generated once into `<data dir>/admin-token` (mode 0600), so a fresh install
 * is secured without any setup and the CLI on the same machine can find it. A configured
 * token must be at least 32 characters carrying an estimated 128 bits (`adminTokenWeakness`,
 * enforced when the config is loaded); the generated one carries 256.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ADMIN_TOKEN_PREFIX } from '../domain/token-strength.js';
import { hashToken } from './tokens.js';

// Defined beside the strength rule that config.ts applies to a configured token.
export { ADMIN_TOKEN_PREFIX };
export const ADMIN_TOKEN_FILE = 'admin-token';

export interface AdminToken {
  /** SHA-256 of the token; the clear token never leaves this module. */
  hash: string;
  /** Where the token is kept, when it came from (or went to) the data dir. */
  file?: string;
  /** True when this call generated the token. */
  created: boolean;
}

export function adminTokenPath(dataDir: string): string {
  return path.join(dataDir, ADMIN_TOKEN_FILE);
}

/** The token stored in `<dataDir>/admin-token`, if any (used by the CLI). */
export function readAdminToken(dataDir: string): string | undefined {
  try {
    const token = fs.readFileSync(adminTokenPath(dataDir), 'utf8').trim();
    return token === '' ? undefined : token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export function loadOrCreateAdminToken(dataDir: string, configured: string | undefined): AdminToken {
  if (configured !== undefined && configured !== '') return { hash: hashToken(configured), created: false };

  const file = adminTokenPath(dataDir);
  const existing = readAdminToken(dataDir);
  if (existing !== undefined) return { hash: hashToken(existing), file, created: false };

  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  try {
    // An empty file left by a crash is replaced; otherwise 'wx' makes a second process
    // starting on the same data dir at the same moment adopt the first one's token.
    const flag = fs.existsSync(file) ? 'w' : 'wx';
    fs.writeFileSync(file, token + '\n', { mode: 0o600, flag });
    // The mode of writeFileSync is filtered by the umask and ignored for existing files.
    fs.chmodSync(file, 0o600);
  } catch (error) {
    const raced = (error as NodeJS.ErrnoException).code === 'EEXIST' ? readAdminToken(dataDir) : undefined;
    if (raced === undefined) throw error;
    return { hash: hashToken(raced), file, created: false };
  }
  return { hash: hashToken(token), file, created: true };
}
