/**
 * A request's scope and user (DESIGN section 13): `x-engram-scope` over the client's own
 * signal (the working directory it states, `domain/scope.ts`), and `x-engram-user`. A
 * header that is present but unusable is refused (400), never ignored: a typo in the
 * user header must not fall back to the agent's shared memory.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { EngramError } from '../errors.js';
import { MAX_SCOPE_LENGTH, codexWorkspaces, emptyPlace, placeFromText, placeScope, validName } from '../domain/scope.js';
import type { Visibility } from '../domain/types.js';

export const SCOPE_HEADER = 'x-engram-scope';
export const USER_HEADER = 'x-engram-user';

/** The header's value, trimmed; undefined when absent; refused when blank or unfit. */
export function nameHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  const text = (Array.isArray(value) ? value.join(',') : value).trim();
  if (!validName(text)) {
    throw new EngramError('invalid_request', `${name} must be a printable name of 1 to ${MAX_SCOPE_LENGTH} characters`, { param: name });
  }
  return text;
}

/** The request's scope and user: headers first (`given`, when already read), then the client's stated working directory. */
export function requestVisibility(headers: IncomingHttpHeaders, body: unknown, given = headerVisibility(headers)): Visibility {
  return given.scope !== undefined ? given : withScope(given, stateScope(body, codexWorkspaces(headers[CODEX_TURN_METADATA])));
}

/** The scope and user the headers give (MCP, hooks: requests that carry no client prompt). */
export function headerVisibility(headers: IncomingHttpHeaders): Visibility {
  const scope = nameHeader(headers, SCOPE_HEADER);
  const user = nameHeader(headers, USER_HEADER);
  return { ...(scope === undefined ? {} : { scope }), ...(user === undefined ? {} : { user }) };
}

/**
 * What the request's texts state of where the client runs (`domain/scope.ts`), read in
 * the request's own order (system prompt and first messages come first, where the clients
 * put it) up to the first text naming a working directory or a repository root; the tool
 * list is skipped, since tool descriptions talk about working directories too. Codex's
 * turn metadata (`client_metadata`, or its header, given as `roots`), which lists its git
 * roots, is read first.
 */
export function stateScope(body: unknown, roots: readonly string[] = []): string | undefined {
  const place = emptyPlace();
  place.roots.push(...roots);
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const metadata = (body as { client_metadata?: unknown }).client_metadata;
    if (metadata !== null && typeof metadata === 'object') place.roots.push(...codexWorkspaces((metadata as Record<string, unknown>)[CODEX_TURN_METADATA]));
  }
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      placeFromText(value, place);
      if (place.directory !== undefined || place.root !== undefined) break;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).filter(([key]) => key !== 'tools' && key !== 'client_metadata');
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i][1]);
    }
  }
  return placeScope(place);
}

/** Where Codex puts its turn metadata, as a header and as a key of the body's `client_metadata`. */
const CODEX_TURN_METADATA = 'x-codex-turn-metadata';

/** `visible` with `scope` as its scope (none when undefined). */
export function withScope(visible: Visibility, scope: string | undefined): Visibility {
  const { scope: _scope, ...rest } = visible;
  return scope === undefined ? rest : { ...rest, scope };
}
