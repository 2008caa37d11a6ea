/**
 * Who is calling. Agent tokens arrive in several headers (DESIGN section 1, issue 2):
 * `X-Engram-Api-Key`, `X-Service-Api-Key`, `Authorization: Bearer`, and `x-api-key`
 * when it holds an Engram token. A client's own provider key may sit in another of
 * those headers; it is ignored, never forwarded and never logged.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { EngramError } from '../errors.js';
import type { TokenLookup } from '../ports/index.js';
import type { Control } from './control.js';
import { hashToken, looksLikeToken, sameHash } from '../security/tokens.js';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const value = header(headers, 'authorization');
  const match = value && /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match ? match[1] : undefined;
}

/** The Engram token of a request: the first Engram-looking candidate, else the first candidate. */
export function presentedToken(headers: IncomingHttpHeaders): string | undefined {
  const candidates = [
    header(headers, 'x-engram-api-key'),
    header(headers, 'x-service-api-key'),
    bearer(headers),
    header(headers, 'x-api-key'),
  ].filter((value): value is string => typeof value === 'string' && value.length > 0);
  return candidates.find(looksLikeToken) ?? candidates[0];
}

/**
 * Resolves the token to its agent and checks that it is the agent of the path. A
 * missing token, an unknown one and another agent's all give the same 401, so the
 * answer never reveals whether an org or agent exists.
 */
export async function authenticateAgent(
  control: Control,
  headers: IncomingHttpHeaders,
  orgId: string,
  agentId: string,
): Promise<TokenLookup> {
  const token = presentedToken(headers);
  if (!token) throw new EngramError('unauthorized');
  const found = await control.directory.findToken(hashToken(token));
  if (!found || found.agent.id !== agentId || found.agent.orgId !== orgId) {
    throw new EngramError('unauthorized');
  }
  return found;
}

export function isAdmin(adminTokenHash: string, headers: IncomingHttpHeaders): boolean {
  const token = bearer(headers) ?? header(headers, 'x-engram-api-key');
  return token !== undefined && sameHash(hashToken(token), adminTokenHash);
}
