import type { ProtocolId } from '../domain/types.js';
import { chatCompletions } from './chat-completions/adapter.js';
import { messages } from './messages/adapter.js';
import { responses } from './responses/adapter.js';
import type { ProtocolAdapter } from './types.js';

/** Every protocol Engram speaks, by id. */
export const PROTOCOLS: Record<ProtocolId, ProtocolAdapter> = {
  'chat-completions': chatCompletions,
  messages,
  responses,
};

/** The protocol whose envelope renders an error of a route that names none. */
export const DEFAULT_PROTOCOL: ProtocolAdapter = chatCompletions;

/**
 * The dialect a `GET /v1/models` is asked in, which the upstream answers in: Anthropic's
 * clients send `anthropic-version` (and their key as `x-api-key`), OpenAI's do not.
 */
export function modelsDialect(headers: Record<string, string | string[] | undefined>): ProtocolAdapter {
  return headers['anthropic-version'] ? messages : chatCompletions;
}
