/**
 * A request's scope and user (DESIGN section 13): `x-engram-scope` over the client's own
 * signal (the working directory it states, `domain/scope.ts`), and `x-engram-user`. A
 * header that is present but unusable is refused (400), never ignored: a typo in the
 * user header must not fall back to the agent's shared memory.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { EngramError } from '../errors.js';
import { MAX_SCOPE_LENGTH, emptyPlace, placeFromText, placeNeedles, placeScope, validName, type StatedPlace } from '../domain/scope.js';
import { isObject } from '../protocols/shared.js';
import type { JsonObject } from '../protocols/types.js';
import type { Visibility } from '../domain/types.js';
import { CLIENTS } from '../clients/index.js';
import type { ClientProfile, PlaceSignals } from '../clients/types.js';

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

/**
 * The request's scope and user: headers first (`given`, when already read), then the client's
 * stated working directory. `raw`: the bytes `body` was parsed from, when it was (a chain
 * expanded from records was not), read first for a marker of a place.
 */
export function requestVisibility(
  headers: IncomingHttpHeaders,
  body: unknown,
  given = headerVisibility(headers),
  raw?: Buffer,
  clients: readonly ClientProfile[] = CLIENTS,
): Visibility {
  if (given.scope !== undefined) return given;
  const places = placeSignals(clients);
  // A body whose bytes hold no marker of a place states none: its strings are not walked.
  if (raw !== undefined && !placeNeedles(places).some((marker) => raw.includes(marker))) return given;
  return withScope(given, stateScope(body, places.flatMap((place) => place.rootsFromHeaders?.(headers) ?? []), clients));
}

const PLACES = new WeakMap<readonly ClientProfile[], PlaceSignals[]>();

/** What the clients say of where they run: one list per list of profiles, so what is derived from it is built once. */
export function placeSignals(clients: readonly ClientProfile[] = CLIENTS): PlaceSignals[] {
  let places = PLACES.get(clients);
  if (!places) PLACES.set(clients, (places = clients.flatMap(({ place }) => (place ? [place] : []))));
  return places;
}

/** The scope and user the headers give (MCP, hooks: requests that carry no client prompt). */
export function headerVisibility(headers: IncomingHttpHeaders): Visibility {
  const scope = nameHeader(headers, SCOPE_HEADER);
  const user = nameHeader(headers, USER_HEADER);
  return { ...(scope === undefined ? {} : { scope }), ...(user === undefined ? {} : { user }) };
}

/**
 * What the request states of where the client runs (`domain/scope.ts`). The client's own
 * texts are read first (`clientTexts`), with the roots its metadata lists (in the body, or
 * in its headers, given as `roots`). When they name a working directory or a root, no user
 * or tool text is read: a pasted "Working directory: …" never moves a turn to another
 * project. Otherwise the texts are read in the request's order up to the first naming one,
 * the tool list skipped (tool descriptions talk about working directories too).
 */
export function stateScope(body: unknown, roots: readonly string[] = [], clients: readonly ClientProfile[] = CLIENTS): string | undefined {
  const places = placeSignals(clients);
  const place = emptyPlace();
  place.roots.push(...roots);
  if (isObject(body)) {
    for (const signals of places) place.roots.push(...(signals.rootsFromBody?.(body) ?? []));
    // The first of them to name a place names it; later ones add only project keys.
    for (const text of clientTexts(body, places)) {
      if (!namesPlace(place)) placeFromText(text, place, places);
      else place.projectKeys.push(...placeFromText(text, emptyPlace(), places).projectKeys);
    }
    if (namesPlace(place)) return placeScope(place, places);
  }
  const skipped = new Set(['tools', ...places.flatMap((signals) => signals.skipKeys ?? [])]);
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      placeFromText(value, place, places);
      if (namesPlace(place)) break;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).filter(([key]) => !skipped.has(key));
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i][1]);
    }
  }
  return placeScope(place, places);
}

function namesPlace(place: StatedPlace): boolean {
  return place.directory !== undefined || place.root !== undefined;
}

/** Roles whose messages the client writes itself, never the user or a tool. */
const CLIENT_ROLES = new Set(['system', 'developer']);

/**
 * The texts of a request the client writes itself, system prompt first (`system` of
 * Messages, `instructions` of Responses), then its system and developer messages, then
 * the user messages a client writes about its place, each in the request's order.
 */
function* clientTexts(body: JsonObject, places: readonly PlaceSignals[]): Generator<string> {
  yield* texts(body.system);
  yield* texts(body.instructions);
  const items = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  for (const item of items) if (isObject(item) && CLIENT_ROLES.has(item.role as string)) yield* texts(item.content);
  for (const item of items) {
    if (!isObject(item) || item.role !== 'user') continue;
    for (const text of texts(item.content)) if (places.some((signals) => signals.isPlaceMessage?.(text))) yield text;
  }
}

/** A content's texts: a string, or the `text` of each of its parts. */
function* texts(content: unknown): Generator<string> {
  if (typeof content === 'string') yield content;
  else if (Array.isArray(content)) for (const part of content) if (isObject(part) && typeof part.text === 'string') yield part.text;
}

/** `visible` with `scope` as its scope (none when undefined). */
export function withScope(visible: Visibility, scope: string | undefined): Visibility {
  const { scope: _scope, ...rest } = visible;
  return scope === undefined ? rest : { ...rest, scope };
}
