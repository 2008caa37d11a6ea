/**
 * What Engram knows of one client kind (Claude Code, Codex, Copilot CLI, an SDK, ...), in
 * one place: how its requests name a session and the place it runs in, which of its
 * requests are its own chores, which of its texts carry instruction files, how to read its
 * transcripts, and how `engram connect` sets it up. Generic code iterates `CLIENTS`
 * (`clients/index.ts`) and never names a client; a new kind is a folder and a line there.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { PlaceMarkers } from '../domain/scope.js';
import type { ProtocolId } from '../domain/types.js';
import type { ConversationReader, JsonObject, MessageKinds, RequestCodec } from '../protocols/types.js';
import type { TranscriptFormat } from '../transcripts/types.js';
import type { HookSpec } from '../connect/hooks.js';
import type { ConnectRecipe } from '../connect/types.js';

export interface ClientProfile {
  /**
   * The kind's word everywhere: `engram connect <id>`, `engram transcripts upload <id>`,
   * the token name `connect <id>`, stored transcript conversation ids `t:<id>:…`. Never renamed.
   */
  id: string;
  /** As people call it, for messages and the dashboard: "Claude Code". */
  title: string;
  session?: SessionSignal;
  place?: PlaceSignals;
  /** Requests of the client's own (a title, a summary) beyond the generic rule of `conversation/chore.ts`. */
  chores?: readonly ChoreRule[];
  /** A text the client puts among the user's messages that carries the project's instruction files (`AGENTS.md`, `CLAUDE.md`). */
  isInstructionFile?(text: string): boolean;
  /**
   * How the client names a tool of an MCP server registered under `server` to the model: a prefix
   * before the tool's own name (`mcp__engram__` for `mcp__engram__recall`), or a namespace holding it (Codex over Responses).
   */
  mcpTools?: { prefix(server: string): string; namespace?(server: string): string };
  transcript?: TranscriptProfile;
  hooks?: HookProfile;
  connect?: ConnectRecipe;
}

/**
 * How a request names the client's session. The id must be the one its transcript's
 * `meta.sessionId` carries: an uploaded transcript of a session the proxy saw is not learnt twice.
 */
export interface SessionSignal {
  /** Headers carrying the session id, tried before any body signal (Claude Code's `x-claude-code-session-id`). */
  headers?: readonly string[];
  /** A session id in the body, read for requests of the protocols listed. */
  body?: {
    protocols: readonly ProtocolId[];
    read(body: JsonObject, adapter: ConversationReader): string | undefined;
  };
}

/** Where the client says it runs. The texts' markers are read by the pure `domain/scope.ts`. */
export interface PlaceSignals extends PlaceMarkers {
  /** Repository roots the request's headers list (Codex's turn metadata). */
  rootsFromHeaders?(headers: IncomingHttpHeaders): string[];
  /** Repository roots the body lists in a field of the client's own (`client_metadata`). */
  rootsFromBody?(body: JsonObject): string[];
  /** Body keys the walk for place texts never enters (they hold the client's metadata, not its texts). */
  skipKeys?: readonly string[];
  /** A user-role text the client writes itself about its place (Codex's `<environment_context>`). */
  isPlaceMessage?(text: string): boolean;
}

/** A housekeeping request of the client's own: answered, never learnt from. */
export type ChoreRule = (adapter: RequestCodec & MessageKinds & ConversationReader, body: JsonObject) => boolean;

/** The client's transcript format, and the words its upload path takes. */
export interface TranscriptProfile extends TranscriptFormat {
  /** The `…/transcripts/<route>` words that upload this format, the one the CLI uses first. */
  routes: readonly string[];
}

/**
 * The client's session hooks: the scripts `engram connect` writes (`HookSpec`) and what
 * the session-start endpoint answers in the client's own hook-output form.
 */
export interface HookProfile extends HookSpec {
  /** The answer holds the index's counts beside the context (Copilot CLI), not only `hookSpecificOutput`. */
  answer: 'additionalContext' | 'hookSpecificOutput';
}
