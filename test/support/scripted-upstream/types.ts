/** A content answer: what the scripted model "says". */
export interface TextReply {
  type: 'text';
  text: string;
  /**
   * Before the text: a thinking block with a signature (messages), a reasoning item with
   * a summary (responses). Chat completions ignores it.
   */
  thinking?: string;
}

export interface ToolCallReply {
  type: 'tool_call';
  name: string;
  arguments: Record<string, unknown>;
  /** Defaults to a hash-derived `call_...` (chat, responses) or `toolu_...` (messages). */
  id?: string;
  /** Responses only: the namespace of the called function (Codex CLI's MCP tools). */
  namespace?: string;
  /** Optional text before the call. */
  text?: string;
}

export interface ErrorReply {
  type: 'error';
  status: number;
  /** Default: the provider's own error envelope for this status. */
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Streaming requests only: answer 200, send the first N events of `text` (default
   * text if absent), then the provider's in-stream error event, then end the stream.
   * Without it (or for non-streaming requests) the error is an HTTP status.
   */
  afterEvents?: number;
  text?: string;
}

/** Accept the request and never send headers (for timeouts). */
export interface HangReply {
  type: 'hang';
}

/**
 * Streaming: send N events (pings included) of the answer `text`, then destroy the socket.
 * Non-streaming: destroy the socket before responding.
 */
export interface BreakReply {
  type: 'break';
  afterEvents: number;
  text?: string;
}

/**
 * Streaming: send N events of the answer `text`, then fall silent with the connection
 * open (a provider that hangs mid-generation). Non-streaming: send the headers and the
 * first half of the JSON body, then fall silent.
 */
export interface StallReply {
  type: 'stall';
  afterEvents: number;
  text?: string;
}

/**
 * Streaming only: the answer's opening events, then its first text delta again and again,
 * each carrying `deltaBytes` of text (default 60 KB), as fast as the client reads, never
 * ending (a provider gone wrong, or a stranger's server; issue 31). Stops when the client
 * goes away. A non-streaming request gets the same as a JSON body that never ends.
 */
export interface EndlessReply {
  type: 'endless';
  deltaBytes?: number;
}

export type Reply = TextReply | ToolCallReply | ErrorReply | HangReply | BreakReply | StallReply | EndlessReply;

/** The replies that carry model output and are rendered by a protocol responder. */
export type Answer = TextReply | ToolCallReply;

export interface ReplyOptions {
  /** Delay between SSE events. */
  chunkDelayMs?: number;
  /**
   * Messages only: a ping event after every N events. Without it the stream carries
   * the single ping the real API sends after the first content_block_start.
   */
  pingEvery?: number;
}

export type Protocol = 'chat-completions' | 'messages' | 'responses';

export interface RecordedRequest {
  method: string;
  /** Including the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  /** The parsed body; null when the body is empty or not JSON. */
  json: any;
  protocol: Protocol | 'other';
  /** True when the request offers a tool named `record_reflections`. */
  extraction: boolean;
  /** True when the request offers a tool named `record_tags` (Engram's tagging job). */
  tagging: boolean;
  /** The client (Engram) closed the connection before the answer was complete. */
  abandoned: boolean;
}

export interface ExtractedReflection {
  kind: 'factual' | 'procedural';
  content: string;
  topic: string;
  /** The default extractor gives the default tagger's; without them a reflection waits for the tagging job. */
  tags?: string[];
  turn?: number | null;
  /** Ids of the existing reflections (shown in `<existing-reflections>`) it replaces. */
  supersedes?: string[];
  /** It holds in every project (`record_reflections`' `everywhere`). */
  everywhere?: boolean;
}

export type Extractor = (req: RecordedRequest, transcript: string) => ExtractedReflection[] | Reply;

/** One reflection a tagging request shows, read from its `[id] (kind) content` line. */
export interface TaggingLine {
  id: string;
  kind: string;
  content: string;
}

export interface TaggedReflection {
  id: string;
  tags: string[];
}

/** Answers a tagging request: the tags of each reflection (a `record_tags` call), or any other reply. */
export type Tagger = (req: RecordedRequest, lines: TaggingLine[]) => TaggedReflection[] | Reply;

export interface ScriptedUpstream {
  /** e.g. http://127.0.0.1:PORT (no trailing slash; clients append /v1/...). */
  url: string;
  /** Every request, in arrival order, recorded before it is answered. */
  requests: RecordedRequest[];
  /** Requests to /v1/chat/completions, /v1/messages and /v1/responses other than extraction and tagging calls. */
  conversationRequests(): RecordedRequest[];
  extractionRequests(): RecordedRequest[];
  taggingRequests(): RecordedRequest[];
  /** Replies consumed in order by conversation requests. */
  enqueue(...replies: Array<Reply | [Reply, ReplyOptions]>): void;
  /** Used when the queue is empty. Default: text `echo: <last user text>`. */
  setDefaultReply(fn: (req: RecordedRequest) => Reply): void;
  setExtractor(fn: Extractor): void;
  /** Default: a few tags made of each line's own words (`defaultTags`). */
  setTagger(fn: Tagger): void;
  /** Clear requests, queue and remembered responses; restore the default reply, extractor and tagger. */
  reset(): void;
  /** Stop listening and destroy every connection (keep-alive, hanging, streaming). */
  close(): Promise<void>;
}

export interface ScriptedUpstreamOptions {
  /**
   * Remember the id of every Responses answer (unless the request says `store: false`)
   * and accept `previous_response_id` naming one. Without it the upstream keeps no state,
   * like a provider with storage off: any `previous_response_id` is a 400.
   */
  statefulResponses?: boolean;
  /**
   * The provider key this upstream accepts (as `Authorization: Bearer` or `x-api-key`):
   * a request without it is a 401 in OpenAI's envelope, as a provider answers a wrong key.
   * Without it any key, or none, is accepted.
   */
  apiKey?: string;
}

/** Facts about the request that shape the rendered answer. */
export interface AnswerContext {
  model: string;
  /** Input tokens not read from or written to the prompt cache. */
  inputTokens: number;
  /** Messages: the tokens of the prefix a `cache_control` block ends, read from the cache (seen before) or written to it. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Chat completions: `stream_options.include_usage`. */
  includeUsage: boolean;
  /** The parsed request body: a Responses answer echoes the request's parameters. */
  request: any;
}

export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * What differs between the provider protocols. The server holds no
 * protocol-specific code; it asks the responder.
 */
export interface ProtocolResponder {
  readonly protocol: Protocol;
  /** Names of the tools the request offers. */
  toolNames(body: any): string[];
  /** Text content of each user message, in order (tool results excluded). */
  userTexts(body: any): string[];
  /** The non-streaming response body. */
  body(answer: Answer, ctx: AnswerContext): unknown;
  /** The streaming events, in order, including any terminator. */
  events(answer: Answer, ctx: AnswerContext, options: ReplyOptions): SseEvent[];
  /** The provider's HTTP error envelope. */
  errorBody(status: number, message: string, requestId: string): unknown;
  /** The provider's in-stream error event, sent after `sent` events of the answer. */
  streamError(status: number, message: string, sent: number): SseEvent;
  /** Provider-flavoured response headers (request id). */
  headers(requestId: string): Record<string, string>;
  /** Stateful protocols (responses): the stored answer the request continues, if any. */
  previousId?(body: any): string | undefined;
  /** Stateful protocols: the 400 body for a continued answer the provider does not hold. */
  previousNotFound?(id: string): unknown;
  /** Stateful protocols: the id the provider stores this answer under; undefined when not stored. */
  storedId?(answer: Answer, ctx: AnswerContext): string | undefined;
}
