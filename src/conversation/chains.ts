/**
 * Responses chains (`previous_response_id`), kept by Engram so chaining works against
 * any upstream: a request that continues a response is expanded into the whole history
 * (the response's own input, every earlier one, and their outputs). Records live behind
 * the control-store port; a WebSocket connection also keeps its latest response in
 * memory, so chaining works there with `store: false` too.
 */
import type { ResponseRecord } from '../domain/response-record.js';
import { EngramError } from '../errors.js';
import type { Control } from '../control/control.js';
import type { ChainSupport, JsonObject } from '../protocols/types.js';
import type { Visibility } from '../domain/types.js';

/** A response a later request may continue. */
export interface ChainLink {
  id: string;
  conversationId: string;
  /** The whole input the response answered (history and its own input), as the client gave it. */
  context: unknown[];
  output: unknown[];
  /** Kept in the control store (and, with `store` true, by the upstream as well). */
  stored: boolean;
}

/** One WebSocket connection's memory: the latest response, whatever its `store`. */
export interface ChainCache {
  latest?: ChainLink;
}

export interface ResolvedChain {
  /** Everything before the request's own input. */
  history: unknown[];
  conversationId: string;
  /** The previous response is in the store, so a record may point at it (and an upstream keeping state has it). */
  stored: boolean;
}

/** Longest chain followed; far beyond any context window. */
const MAX_LINKS = 100_000;

/**
 * The history a continuation of `previousId` stands on, or undefined when the id (or a
 * link before it) is unknown to this `owner` (the request's end user and named project:
 * another's chain is not found, `Control.getResponse`).
 */
export async function resolveChain(
  control: Control,
  agentId: string,
  previousId: string,
  cache: ChainCache | undefined,
  owner: Visibility,
): Promise<ResolvedChain | undefined> {
  const latest = cache?.latest;
  if (latest?.id === previousId) {
    return { history: [...latest.context, ...latest.output], conversationId: latest.conversationId, stored: latest.stored };
  }
  const records: ResponseRecord[] = [];
  const seen = new Set<string>();
  for (let id: string | null = previousId; id !== null; ) {
    if (seen.has(id) || records.length >= MAX_LINKS) return undefined;
    seen.add(id);
    const record = await control.getResponse(agentId, id, owner);
    if (!record) return undefined;
    records.push(record);
    id = record.previousResponseId;
  }
  const history = records.reverse().flatMap((record) => [...record.input, ...record.output]);
  return { history, conversationId: records[records.length - 1].conversationId, stored: true };
}

/**
 * A request as if the client had sent the whole history, with the chain it continued;
 * the request itself when it continues nothing. An unknown id is the API's
 * `previous_response_not_found`.
 */
export async function expandRequest(
  control: Control,
  support: ChainSupport,
  body: JsonObject,
  agentId: string,
  cache: ChainCache | undefined,
  owner: Visibility,
): Promise<{ body: JsonObject; chain?: ResolvedChain & { previousId: string } }> {
  const previousId = support.previousId(body);
  if (!previousId) return { body };
  const found = await resolveChain(control, agentId, previousId, cache, owner);
  if (!found) {
    throw new EngramError('previous_response_not_found', `Previous response with id '${previousId}' not found.`, { param: 'previous_response_id' });
  }
  return { body: support.expand(body, found.history), chain: { ...found, previousId } };
}

/** Everything before and in `owner`'s `record` own input: what the model was given. */
export async function recordContext(control: Control, record: ResponseRecord, owner: Visibility): Promise<unknown[] | undefined> {
  if (record.previousResponseId === null) return record.input;
  const chain = await resolveChain(control, record.agentId, record.previousResponseId, undefined, owner);
  return chain && [...chain.history, ...record.input];
}

export interface NewLink {
  agentId: string;
  /** Whose record it is: the end user and project the request named (`Control.putResponse`). */
  owner: Visibility;
  conversationId: string;
  /** The response as answered. */
  response: { id: string; body: Record<string, unknown>; output: unknown[] };
  /** The request's own input items. */
  input: unknown[];
  /** The response it continued and the history that stood on, if any. */
  chain: (ResolvedChain & { previousId: string }) | undefined;
  store: boolean;
  now: number;
}

/** Remembers a response in the connection's cache, whatever its `store`: the next request may continue it. */
export function cacheResponse(link: NewLink, cache: ChainCache | undefined): void {
  if (!cache) return;
  cache.latest = {
    id: link.response.id,
    conversationId: link.conversationId,
    context: [...(link.chain?.history ?? []), ...link.input],
    output: link.response.output,
    stored: link.store,
  };
}

/**
 * Keeps a response in the store (the caller skips it when the client said `store:
 * false`). A response continuing one that is not in the store (a `store: false` or
 * warm-up response on a WebSocket) is stored with its whole history as input, so it can
 * be continued on its own later. Writing it again writes the same record.
 */
export async function storeResponse(control: Control, link: NewLink): Promise<void> {
  const history = link.chain?.history ?? [];
  const previousId = link.chain?.previousId ?? null;
  const linked = link.chain?.stored === true;
  await control.putResponse(
    {
      id: link.response.id,
      agentId: link.agentId,
      conversationId: link.conversationId,
      previousResponseId: linked ? previousId : null,
      input: linked ? link.input : [...history, ...link.input],
      output: link.response.output,
      // An upstream that was sent the expanded history answers as if nothing was chained.
      body: { ...link.response.body, previous_response_id: previousId },
      createdAt: link.now,
    },
    link.owner,
  );
}
