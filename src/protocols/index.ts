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
