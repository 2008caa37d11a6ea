import type { Resolving } from '../../../machines/conversation.machine.js';
import { newConversationState } from '../../domain/conversation-state.js';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { MAX_JSON_DEPTH, jsonDeeperThan, tooDeep } from '../../protocols/shared.js';
import type { ProtocolAdapter } from '../../protocols/types.js';
import { expandRequest } from '../chains.js';
import { isClientChore } from '../chore.js';
import type { EngramTurn, Resolved } from '../exchange.js';
import { conversationName, findConversation, openingOf, partitionedConversationId } from '../identity.js';
import { headerVisibility, requestVisibility, withScope } from '../scope.js';

/** The client's JSON; refused (400) when empty, invalid, or nested too deep for the steps that walk it. */
function parseBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new EngramError('invalid_json', 'The request body is empty; a JSON object is required');
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new EngramError('invalid_json', `Request body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Parses the request, expands a chain it continues (Responses' `previous_response_id`)
 * and finds its conversation. The upstream gets the expanded request unless the agent's
 * upstream keeps chains itself and holds the previous response.
 */
export async function resolveConversation({ control, now, clients }: Pick<Deps, 'control' | 'now' | 'clients'>, { request, authenticated }: Resolving<EngramTurn>): Promise<Resolved> {
  const clientBody = request.body ?? parseBody(request.rawBody);
  const adapter: ProtocolAdapter = request.adapter;
  adapter.validate(clientBody);
  let body = clientBody;
  let forward = { raw: request.rawBody, body: clientBody, offset: 0 };
  let chain: Resolved['chain'];
  // The end user and project the request names: whose Responses records it may continue and keeps.
  const given = headerVisibility(request.headers);
  if (adapter.chain) {
    ({ body, chain } = await expandRequest(control, adapter.chain, clientBody, request.agentId, request.chainCache, given));
    if (chain) {
      const upstreamKeeps = authenticated.agent.upstream.responsesState === 'upstream' && chain.stored;
      forward = upstreamKeeps ? { ...forward, offset: chain.history.length } : { raw: Buffer.from(JSON.stringify(body)), body, offset: 0 };
    }
  }
  const asked = requestVisibility(request.headers, body, given, body === clientBody ? request.rawBody : undefined, clients);
  // One user's conversation is never another's, nor that of a project the request names another's, even where the openings are the same.
  const partition = (id: string) => partitionedConversationId(id, { user: asked.user, scope: given.scope });
  const name = conversationName(adapter, body, request.headers, chain?.conversationId, clients);
  const opening = openingOf(name, partition);
  const found = await findConversation(control.conversations, request.agentId, name, partition);
  const stored = found?.stored ?? null;
  const held = stored?.value ?? newConversationState(request.agentId, found?.id ?? opening, request.adapter.id, now());
  // A turn that states no project keeps the one the conversation had.
  const visible = withScope(asked, asked.scope ?? held.scope);
  const { scope: _scope, user: _user, ...rest } = held;
  const state = { ...rest, ...visible };
  return { body, conversationId: found?.id, opening, state, stored, forward, chain, visible, owner: given, chore: isClientChore(adapter, body, opening, clients) };
}
