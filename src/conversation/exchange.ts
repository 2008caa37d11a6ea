import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ConversationState } from '../domain/conversation-state.js';
import type { Visibility } from '../domain/types.js';
import type { InjectedReflection, RequestEntry, Revisioned, TokenLookup } from '../ports/index.js';
import type { JsonObject, ProtocolAdapter } from '../protocols/types.js';
import type { ClientSink, RelayOutcome } from '../streaming/relay.js';
import type { PublishResult, RecordResult, TurnTypes } from '../../machines/conversation.machine.js';
import type { ChainCache, NewLink, ResolvedChain } from './chains.js';
import type { UnredactedJob } from '../memory/extraction.js';
import type { CleanedTurns } from '../memory/cleaned-turns.js';
import type { Retrieval } from '../memory/retrieval.js';
import type { Deps } from '../deps.js';
import type { TurnOf, TurnRecorder } from './recording-retry.js';

/** What the turn's steps are given, once per app (`provideConversationMachine`). */
export interface ConversationActorDeps extends Deps {
  retrieval: Retrieval;
  /**
   * Turns this process cleaned for extraction, by digest: cleaned after each answer, so a
   * conversation's next job carries its re-sent history cleaned (`selectNewTurns`).
   */
  cleanedTurns: CleanedTurns;
  /** Where a turn's writes go: now, and again later for those the store refused (`RecordingRetry`). */
  recordings: { begin(turn: TurnOf): TurnRecorder };
}

/** A client connection that can still receive a status line and headers. */
export interface ResponseSink extends ClientSink {
  readonly headersSent: boolean;
  /** `flush`: send the headers at once, ahead of a stream's first event. */
  writeHead(status: number, headers: OutgoingHttpHeaders, flush?: boolean): void;
}

/** One proxied request, as the conversation machine's steps see it. */
export interface ExchangeRequest {
  /** `req_…`: sent to the client as `x-engram-request-id`, the turn's entry in the request log. */
  requestId: string;
  adapter: ProtocolAdapter;
  orgId: string;
  agentId: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /**
   * `rawBody` as the transport already parsed it (a WebSocket frame, read as JSON to find
   * its event type): the resolve step parses `rawBody` only without it.
   */
  body?: JsonObject;
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
  /**
   * The conversation the request continues; undefined when it opens one (it holds no
   * earlier answer Engram knows): the conversation is named once its first answer is
   * relayed (`settledConversationId`), so a repeated opening never finds another's state.
   */
  conversationId: string | undefined;
  /** What names the conversation before its answers do: its opening (and session), or the id the request carries. */
  opening: string;
  /** The conversation's state when the request arrived (a new one when it was not stored yet). */
  state: ConversationState;
  /** The stored state and its revision (null: this request opens the conversation). */
  stored: Revisioned<ConversationState> | null;
  forward: ForwardBase;
  /** The request continued an earlier response. */
  chain?: ResolvedChain & { previousId: string };
  /** What the conversation may see and where what it teaches goes: its scope and user (`scope.ts`). */
  visible: Visibility;
  /** The end user and project the request names in its headers: whose Responses records it continues and keeps. */
  owner: Visibility;
  /** A client's own bookkeeping request (`chore.ts`): no memory goes in or comes out. */
  chore: boolean;
}

export interface Injected {
  forwardBody: Buffer;
  injected: number;
  /** The reflections injected, with their score and signal (for the request log; ids only). */
  reflections: InjectedReflection[];
  /** What else the request log says of memory in this turn. */
  memory: InjectedMemory;
  state: ConversationState;
}

/** What reached the model besides this turn's additions, and why nothing was added when nothing was (DESIGN section 12): the request log's words for it. */
export type InjectedMemory = Pick<RequestEntry, 'kept' | 'rebuilt' | 'reason' | 'bar' | 'nearMisses'>;

export interface Forwarded {
  ok: boolean;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

export type Relayed = RelayOutcome & { final: boolean };

/** What settling a completed answer keeps, decided once when it is published for extraction. */
export interface Settlement {
  settledAt: number;
  /** The conversation, named now that its answer is known; undefined when nothing names it (its state is not kept). */
  conversationId: string | undefined;
  /** The Responses record to store (a response the client asked to keep). */
  response?: NewLink;
  /** The new turns for extraction (a final answer, on an agent that learns), redacted by the worker. */
  job?: UnredactedJob;
  /** The history was shorter than the watermark: learnt afresh from its start. */
  compacted: boolean;
  /** The turn's writes, in the retry queue's order. */
  recorder: TurnRecorder;
}

export interface Published extends PublishResult {
  settlement: Settlement;
}

export interface Recorded extends RecordResult {
  /** The conversation the turn was recorded in (named by its answer when the turn opened it). */
  conversationId: string | undefined;
}

/** The conversation machine's types for Engram's steps (`conversationMachine<EngramTurn>()`). */
export interface EngramTurn extends TurnTypes {
  request: ExchangeRequest;
  authenticated: TokenLookup;
  resolved: Resolved;
  injected: Injected;
  forwarded: Forwarded;
  relayed: Relayed;
  published: Published;
  recorded: Recorded;
}
