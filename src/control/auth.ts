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
import { ADMIN_TOKEN_PREFIX } from '../domain/token-strength.js';
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
 * What a refused caller is told (issue 14). Each says only what the caller can already
 * see for itself: the shape of its own URL, which header it sent, what its credential
 * looks like; or, for a revoked token, that the token it holds (and so knew existed)
 * was revoked. A token that is unknown, or live but another agent's, gets the
 * catalogue's one message, so the answer is no oracle for tokens, orgs or agents.
 */
export const AUTH_HINTS = {
  noToken: 'No Engram token in the request: send the agent token as Authorization: Bearer egm_… or X-Engram-Api-Key: egm_…',
  orgId: 'The org in the path is not an org id (org ids start with org_): use the ids that `engram agent create` printed',
  agentId: 'The agent in the path is not an agent id (agent ids start with agt_): use the ids that `engram agent create` printed',
  openAiKey:
    'This looks like an OpenAI key (sk-…), not an Engram token: use the Engram token egm_… — the provider key is configured on the agent',
  anthropicKey:
    'This looks like an Anthropic key (sk-ant-…), not an Engram token: use the Engram token egm_… — the provider key is configured on the agent',
  adminToken: 'The admin token is for the management API (/v0/orgs/...); use an agent token (`engram token create`)',
  revoked: 'This token was revoked; create a new one with `engram token create`',
} as const;

const ID_SHAPE = /^[A-Za-z0-9]+$/;

function idProblem(orgId: string, agentId: string): string | undefined {
  if (!orgId.startsWith('org_') || !ID_SHAPE.test(orgId.slice(4))) return AUTH_HINTS.orgId;
  if (!agentId.startsWith('agt_') || !ID_SHAPE.test(agentId.slice(4))) return AUTH_HINTS.agentId;
  return undefined;
}

/** What a credential that matches no live token looks like, when its shape or its own history says. */
async function missedBecause(
  control: Control,
  token: string,
  hash: string,
  /** The agent the path names; none for the one base URL, where only the token says which agent. */
  path: { orgId: string; agentId: string } | undefined,
  adminTokenHash: string | undefined,
): Promise<string | undefined> {
  if (token.startsWith('sk-ant-')) return AUTH_HINTS.anthropicKey;
  if (/^sk-[A-Za-z0-9_-]{8,}/.test(token)) return AUTH_HINTS.openAiKey;
  // Generated admin tokens carry a public prefix; a configured one is known by its hash.
  if (token.startsWith(ADMIN_TOKEN_PREFIX) || (adminTokenHash !== undefined && sameHash(hash, adminTokenHash))) return AUTH_HINTS.adminToken;
  if (!looksLikeToken(token)) return undefined;
  // Revoked tokens keep their record (revoked_at), so the holder learns that its token was
  // revoked and nothing else. On an agent's own URL only a token of that agent is named:
  // one revoked for another agent, or never issued, falls through to the generic 401.
  const revoked = await control.directory.revokedToken(hash);
  if (!revoked) return undefined;
  return !path || (revoked.agentId === path.agentId && revoked.orgId === path.orgId) ? AUTH_HINTS.revoked : undefined;
}

/**
 * Resolves the token to its agent and checks that it is the agent of the path. Every
 * refusal is a 401 (`unauthorized`); its message says what was wrong only where that
 * reveals nothing (`AUTH_HINTS`). An unknown token and another agent's give the same
 * answer, so it never reveals whether a token, org or agent exists.
 */
export async function authenticateAgent(
  control: Control,
  headers: IncomingHttpHeaders,
  orgId: string,
  agentId: string,
  /** The admin token's hash, so that one configured without the generated prefix is named too. */
  adminTokenHash?: string,
): Promise<TokenLookup> {
  const malformed = idProblem(orgId, agentId);
  if (malformed) throw new EngramError('unauthorized', malformed);
  const token = presentedToken(headers);
  if (!token) throw new EngramError('unauthorized', AUTH_HINTS.noToken);
  const hash = hashToken(token);
  const found = await control.directory.findToken(hash);
  if (found && found.agent.id === agentId && found.agent.orgId === orgId) return found;
  if (found) throw new EngramError('unauthorized');
  throw new EngramError('unauthorized', await missedBecause(control, token, hash, { orgId, agentId }, adminTokenHash));
}

/**
 * Resolves the token to its agent, for the one base URL (`<engram>/v1/...`, `/v0/mcp`)
 * where no path names an agent: the token alone says which. Refusals are 401s with the
 * same hints as `authenticateAgent` where those reveal nothing (a revoked token is told
 * so: its holder knew it existed).
 */
export async function authenticateToken(control: Control, headers: IncomingHttpHeaders, adminTokenHash?: string): Promise<TokenLookup> {
  const token = presentedToken(headers);
  if (!token) throw new EngramError('unauthorized', AUTH_HINTS.noToken);
  const hash = hashToken(token);
  const found = await control.directory.findToken(hash);
  if (found) return found;
  throw new EngramError('unauthorized', await missedBecause(control, token, hash, undefined, adminTokenHash));
}

export function isAdmin(adminTokenHash: string, headers: IncomingHttpHeaders): boolean {
  const token = bearer(headers) ?? header(headers, 'x-engram-api-key');
  return token !== undefined && sameHash(hashToken(token), adminTokenHash);
}
