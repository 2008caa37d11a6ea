/**
 * What every wire protocol implements (chat completions, messages, responses), as a few
 * small contracts, each with what it guarantees: a request to check and edit
 * (`RequestCodec`), its entries (`MessageKinds`) and conversation (`ConversationReader`),
 * the answer (`AnswerDecoder`), errors (`ErrorRenderer`), the upstream (`UpstreamEndpoint`)
 * and the memory jobs' calls (`ForcedToolCalls`). `ProtocolAdapter` is all of them.
 * Generic code (conversation, injection, extraction, streaming) talks only to these and
 * never asks which protocol it has.
 */
import type { EngramError } from '../errors.js';
import type { AssembledAnswer, Turn } from '../domain/transcript.js';
import type { ProtocolId, ReflectionKind } from '../domain/types.js';

export type JsonObject = Record<string, unknown>;

/** One Server-Sent Event as parsed by `protocols/sse.ts`. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** What an assembler may hold. */
export interface AssemblerOptions {
  /** Most bytes of answer text kept (`ENGRAM_ANSWER_MAX_BYTES`); the rest is counted, not kept. Default: no limit. */
  maxBytes?: number;
}

/** Folds a response (SSE events or one JSON body) into what extraction needs. */
export interface AnswerAssembler {
  push(event: SseEvent): void;
  finish(): AssembledAnswer;
}

/** A reflection as the extraction model proposed it (before validation). */
export interface ProposedReflection {
  kind: ReflectionKind;
  content: string;
  topic: string;
  /** Phrases it should be found under (searched, never injected); absent when the model gave none. */
  tags?: string[];
  /** The number of the transcript turn the model learnt it from (the `[n]` before each turn), when it said. */
  turn?: number;
  /**
   * Ids of the existing reflections (shown to the model in `<existing-reflections>`) that
   * this one replaces: a changed fact, a replaced command or path. Absent when it names none.
   * Only ids the model was shown count (the writer checks).
   */
  supersedes?: string[];
  /**
   * It holds everywhere, not only in the project the conversation works in (DESIGN
   * section 13): about the person, the tools, or the user said so. Absent: the project's.
   */
  everywhere?: boolean;
}

/** A tool as the request offers it to the model; a namespace's functions carry its name. */
export interface OfferedTool {
  name: string;
  description: string;
  namespace?: string;
  /** Named to the model but not loaded yet (Claude Code's tool search): the model must load it first. */
  deferred?: boolean;
}

/** A tool the model called, by the name it used (and its namespace, when it has one). */
export interface ToolRef {
  name: string;
  namespace?: string;
}

/** A tool call with what the model gave it: the command a shell runs, the file a read opens. */
export interface ToolCall extends ToolRef {
  /**
   * Its input as the protocol carries it: an object (the parsed JSON arguments), or text
   * (a free-form tool such as Codex's `apply_patch`, or arguments too long or too broken to parse).
   */
  input: unknown;
}

/**
 * A tool the model is made to call (a forced tool call): its name, what it is for, and the
 * JSON Schema of its input. The schema must suit strict function calling, which Responses
 * asks for: every property listed in `required` (a nullable type for an optional one) and
 * `additionalProperties: false` on every object.
 */
export interface ForcedTool {
  name: string;
  description: string;
  schema: JsonObject;
}

export interface RenderedError {
  status: number;
  body: unknown;
}

/**
 * Stateful chains (Responses' `previous_response_id`): a request that continues an
 * earlier response instead of carrying the whole history.
 */
export interface ChainSupport {
  /** The response this request continues, if any. */
  previousId(body: JsonObject): string | undefined;
  /** The request as if the client had sent the whole history: `history` then its own input, no chain reference. */
  expand(body: JsonObject, history: unknown[]): JsonObject;
  /** The client lets the response be kept for later chaining and reading (`store`, default true). */
  stored(body: JsonObject): boolean;
}

/** Tells a text a client put among the user's messages that carries the project's instruction files (`ClientProfile.isInstructionFile`). */
export type IsInstructionFile = (text: string) => boolean;

/**
 * The request as a body to check and a message list to edit: what the proxy needs to
 * forward a request with memory added.
 *
 * `validate` is called on every body first; every other member, of this contract and the
 * others taking a `JsonObject`, may count on the shape it checked (a non-empty `model`, a
 * message list). Nothing here changes a body or a message: edits return copies, so the
 * client's body stays as it came.
 */
export interface RequestCodec {
  /** Checks the request shape; throws an `EngramError` (400) naming the bad field as `param`. */
  validate(body: unknown): asserts body is JsonObject;
  model(body: JsonObject): string;
  /** Top-level field of the request body holding the message list. */
  readonly messagesField: string;
  /**
   * The client's message list, the sequence that insertions index into: the body's own
   * array when it holds one (never a copy, so an index means the same entry in both).
   */
  messages(body: JsonObject): unknown[];
  /** Shallow copy of `body` with its message list replaced. */
  withMessages(body: JsonObject, messages: unknown[]): JsonObject;
  /** A copy of `message` (user input or tool result) with `text` appended as the last piece of its content. */
  appendText(message: unknown, text: string): unknown;
}

/**
 * What one entry of the message list is. Each member takes any value (an entry of a shape
 * the protocol does not know is none of these, never an error) and reads that entry only.
 * They run on every entry of every request's history, so they copy and parse nothing; the
 * one exception, `toolCalls`, says so.
 */
export interface MessageKinds {
  /** A system or developer entry inside the message list (Claude Code appends them after the user's turn). */
  isSystemEntry(message: unknown): boolean;
  /** A message typed by the user (not a tool result, not a system entry). */
  isUserInput(message: unknown): boolean;
  /** A tool's result handed back to the model (a chat `tool` message, a user message of `tool_result` blocks, a `function_call_output` item). */
  isToolResult(message: unknown): boolean;
  /** A tool result that reports a failure (an error flag, or an error, exit code or traceback at its start). */
  toolResultFailed(message: unknown): boolean;
  /** The tools an assistant message (or output item) calls. */
  calledTools(message: unknown): ToolRef[];
  /**
   * The tool calls of an assistant message (or output item) with their inputs, built-in
   * ones included (a Responses shell or patch call). Parses the arguments, so it is for the
   * few messages that need them (a turn's new ones), not for walks over the whole history.
   */
  toolCalls(message: unknown): ToolCall[];
  /**
   * The text of a user message, for retrieval queries (client context the protocol marks,
   * like Claude Code's `<system-reminder>` blocks, left out); '' for an assistant's
   * message, a tool's output or any other item.
   */
  queryText(message: unknown): string;
  /**
   * The text of the tool results a message hands back, in the pieces the message holds it
   * in (a result of several text parts gives several; images and other parts none). Nothing
   * is joined or copied: a caller reads a bounded window of each, whatever its size.
   */
  toolOutputs(message: unknown): string[];
}

/**
 * What a validated request says about its conversation, in neutral form: read from the
 * body alone, the same body always reading the same.
 */
export interface ConversationReader {
  /** The tools the request offers, flattened. */
  offeredTools(body: JsonObject): OfferedTool[];
  /**
   * The request asks for its answer as JSON in a schema (structured output: Anthropic's
   * `output_config.format`, chat's `response_format`, Responses' `text.format`), not as
   * a reply to read.
   */
  structuredAnswer(body: JsonObject): boolean;
  /**
   * The client's turns in neutral form (system prompt left out, Engram's blocks kept).
   * A user message that only carries instruction files (`isInstructionFile`) becomes a note
   * where the protocol sends them as messages of their own (Responses).
   */
  transcript(body: JsonObject, isInstructionFile?: IsInstructionFile): Turn[];
  /**
   * The texts that instruct the model in this request, sent again in every session of
   * the client, most specific first: instruction files the client put among the messages
   * (`isInstructionFile`, from the clients' profiles), then system and developer entries,
   * then the system prompt (`system`, `instructions`). Engram's blocks kept; extraction strips them.
   */
  instructions(body: JsonObject, isInstructionFile: IsInstructionFile): string[];
  /** The system prompt as sent (`system`, `instructions`, a leading system or developer message's content); a client may name its session in it. */
  systemPrompt(body: JsonObject): unknown;
  /** Text used to derive a conversation id when no better signal exists. */
  conversationSeed(body: JsonObject): string;
}

/**
 * The upstream's answer folded into what the turn records and extraction reads. An
 * assembler is pushed one answer's events in the order they came, then `finish`ed once;
 * an event it cannot read is skipped, never thrown. It keeps at most
 * `AssemblerOptions.maxBytes` of the answer's text, however long the answer.
 */
export interface AnswerDecoder {
  createAssembler(options?: AssemblerOptions): AnswerAssembler;
  /** The same for an answer that came whole, as one JSON body (a request that did not stream). */
  assembleJson(body: unknown): AssembledAnswer;
}

/**
 * The one place an `EngramError` becomes what this protocol's clients read as an error:
 * the provider's own envelope, so their SDKs raise it as they would the provider's. It
 * carries what the error says (its message; its code and `param` where the envelope has
 * room for them), nothing more.
 */
export interface ErrorRenderer {
  /** Status and body, for an error found before any byte of the answer was sent. */
  renderError(error: EngramError): RenderedError;
  /** SSE bytes announcing a failure after the stream has started: the last the client is sent. */
  streamErrorFrame(error: EngramError): string;
}

/** Where and as whom Engram calls an agent's upstream in this protocol. */
export interface UpstreamEndpoint {
  /** Path appended to the agent's upstream base URL, e.g. `/v1/chat/completions`. */
  readonly upstreamPath: string;
  /** Headers that authenticate Engram to the upstream with the agent's key: the only headers that carry it. */
  upstreamAuth(apiKey: string): Record<string, string>;
}

/**
 * Engram's own calls to an agent's upstream (the memory jobs): one request forcing one
 * tool, and the tool's arguments read back from the answer. No memory job knows the wire:
 * it names a `ForcedTool` and validates the arguments itself.
 */
export interface ForcedToolCalls {
  /**
   * A non-streaming request with `instructions` as the system prompt and `userText` as the
   * one user message, offering exactly `tool` and requiring the model to call it: the
   * shape of every call Engram itself makes to an agent's upstream. It passes this
   * protocol's own `validate`.
   */
  toolRequest(model: string, instructions: string, userText: string, tool: ForcedTool): JsonObject;
  /**
   * What the model gave its first call of `toolName` in the answer to such a request (the
   * parsed JSON body), parsed, unchecked: the caller validates it. Throws a
   * `ToolAnswerError` (`upstream_stream_failed`, worth a retry) when the answer holds no
   * such call, or when its arguments are not JSON.
   */
  toolArguments(body: unknown, toolName: string): unknown;
  /**
   * The tokens a non-streaming answer (of `toolRequest`) says the call used, as the
   * upstream reports them; undefined when it reports none.
   */
  usage(body: unknown): TokenUsage | undefined;
}

/**
 * One wire protocol (chat completions, messages, responses): every contract above, by
 * id. Generic code takes the contracts it uses and never asks which protocol it has.
 */
export interface ProtocolAdapter extends RequestCodec, MessageKinds, ConversationReader, AnswerDecoder, ErrorRenderer, UpstreamEndpoint, ForcedToolCalls {
  readonly id: ProtocolId;
  /** Present when the protocol chains responses by id. */
  readonly chain?: ChainSupport;
}

/** Tokens one upstream call used, as its answer's `usage` reports them. */
export interface TokenUsage {
  /** Every input token, those the provider read from its prompt cache included. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache (billed at a fraction). */
  cachedInputTokens: number;
}
