/**
 * `response.create` with `generate: false` (the WebSocket mode's warm-up): nothing is
 * generated and the upstream is not called; the request's input is kept in the
 * connection's memory under a new response id, so the next turn can chain from it and
 * send only its new items.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { expandRequest, type ChainCache } from '../../conversation/chains.js';
import { conversationName, openingOf, partitionedConversationId } from '../../conversation/identity.js';
import { headerVisibility } from '../../conversation/scope.js';
import { idDigest } from '../../control/conversation-id.js';
import type { Deps } from '../../deps.js';
import { responses } from '../../protocols/responses/adapter.js';
import { authenticateAgent } from '../../control/auth.js';

export interface WarmUpRequest {
  orgId: string;
  agentId: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  cache: ChainCache;
}

/** The events of a warm-up: created, then completed with no output. */
export async function warmUp(deps: Deps, request: WarmUpRequest): Promise<string[]> {
  const { agent } = await authenticateAgent(deps.control, request.headers, request.orgId, request.agentId);
  const body = request.body;
  responses.validate(body);
  // The end user and project the connection names: whose chains it continues, and its conversation's partition.
  const owner = headerVisibility(request.headers);
  const { body: expanded, chain } = await expandRequest(deps.control, responses.chain!, body, agent.id, request.cache, owner);
  const previousId = chain?.previousId;
  const id = `resp_${randomBytes(24).toString('hex')}`;
  // Nothing answered names the conversation yet: the warm-up's own response does, for the
  // turns that chain from it without a session signal (with one, they are found by their answers).
  const name = conversationName(responses, expanded, request.headers, chain?.conversationId, deps.clients);
  const opening = openingOf(name, (named) => partitionedConversationId(named, owner));
  request.cache.latest = {
    id,
    conversationId: 'id' in name ? opening : `${opening}:${idDigest(id)}`,
    context: responses.messages(expanded),
    output: [],
    stored: false,
  };
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(deps.now() / 1000),
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    model: body.model,
    output: [],
    previous_response_id: previousId ?? null,
    store: false,
    tools: Array.isArray(body.tools) ? body.tools : [],
    usage: null,
    metadata: isRecord(body.metadata) ? body.metadata : {},
  };
  return [
    JSON.stringify({ type: 'response.created', sequence_number: 0, response }),
    JSON.stringify({
      type: 'response.completed',
      sequence_number: 1,
      response: { ...response, status: 'completed', usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } },
    }),
  ];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
