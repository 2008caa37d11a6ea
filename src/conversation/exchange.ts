import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ConversationState } from '../domain/conversation-state.js';
import type { Revisioned, TokenLookup } from '../ports/index.js';
import type { JsonObject, ProtocolAdapter } from '../protocols/types.js';
import type { ClientSink, RelayOutcome } from '../streaming/relay.js';
import type { ChainCache, ResolvedChain } from './chains.js';

/** A client connection that can still receive a status line and headers. */
export interface ResponseSink extends ClientSink {
  readonly headersSent: boolean;
  /** `flush`: send the headers at once, ahead of a stream's first event. */
  writeHead(status: number, headers: OutgoingHttpHeaders, flush?: boolean): void;
}

/** One proxied request, as the conversation machine's steps see it. */
export interface ExchangeRequest {
  adapter: ProtocolAdapter;
  orgId: string;
  agentId: string;
  headers: IncomingHttpHeaders;
  /**
   * The token lookup the transport already made from the headers (the HTTP routes check
   * the token before reading the body); the authenticate step makes its own without it.
   */
  authenticated?: TokenLookup;
  rawBody: Buffer;
  /** The request's query string, with its `?`, or ''. */
  search: string;
  sink: ResponseSink;
  /** A WebSocket connection's memory of its latest response (Responses chains). */
  chainCache?: ChainCache;
}

/**
 * What goes upstream before Engram's additions: the client's own bytes, or, when Engram
 * expanded a chain, the expanded request. `offset` counts the leading messages of the
 * conversation's list that the upstream keeps itself (a chain it holds by id).
 */
export interface ForwardBase {
  raw: Buffer;
  body: JsonObject;
  offset: number;
}

export interface Resolved {
  /** The request with its whole history (a chain expanded): what injection and extraction read. */
  body: JsonObject;
  conversationId: string;
  /** The conversation's state when the request arrived (a new one when it was not stored yet). */
  state: ConversationState;
  /** The stored state and its revision (null: this request opens the conversation). */
  stored: Revisioned<ConversationState> | null;
  forward: ForwardBase;
  /** The request continued an earlier response. */
  chain?: ResolvedChain & { previousId: string };
}

export interface Injected {
  forwardBody: Buffer;
  injected: number;
  state: ConversationState;
}

export interface Forwarded {
  ok: boolean;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

export type Relayed = RelayOutcome & { final: boolean };

/** Typed view of the machine's step results. */
export interface ExchangeResults {
  authenticate?: TokenLookup;
  resolveConversation?: Resolved;
  inject?: Injected;
  forward?: Forwarded;
  relay?: Relayed;
}
