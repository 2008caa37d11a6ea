/**
 * A response Engram proxied on a protocol with stateful chains (Responses), kept so a
 * later request can continue it by id (`previous_response_id`) against any upstream,
 * and so `GET /v1/responses/{id}` and its `input_items` can be served.
 */
export interface ResponseRecord {
  /** The upstream's response id (`resp_...`). */
  id: string;
  agentId: string;
  /** The conversation the response belongs to; a continuation joins it. */
  conversationId: string;
  /** The response this one continued, or null at the head of a chain. */
  previousResponseId: string | null;
  /** This request's own input items, as the client sent them (a string input becomes one user message). */
  input: unknown[];
  /** The response's output items. */
  output: unknown[];
  /** The response object as returned to the client. */
  body: Record<string, unknown>;
  createdAt: number;
}
