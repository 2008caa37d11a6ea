/**
 * The protocol-neutral form of a conversation that extraction reads. Every protocol
 * adapter (and later every transcript normaliser) produces it.
 */
export type TurnRole = 'user' | 'assistant' | 'tool';

export interface Turn {
  role: TurnRole;
  /** Plain text: tool calls rendered as `[tool call name(args)]`, images as `[image]`. */
  text: string;
}

/** Summary of what the upstream answered, assembled by the extraction side of the tee. */
export interface AssembledAnswer {
  /** The answer ends the agent's turn (not a tool call, not cut off by a length limit). */
  final: boolean;
  /** Upstream's stop reason as reported (`stop`, `end_turn`, `tool_calls`, ...). */
  stopReason: string | null;
  turns: Turn[];
  /** An error event arrived inside an otherwise successful stream. */
  errored: boolean;
  /** Protocols with stateful chains: the response to record, so later requests can continue it. */
  response?: AnsweredResponse;
  /**
   * The answer's text was over the assembler's budget (`ENGRAM_ANSWER_MAX_BYTES`): `turns`
   * hold its first `keptBytes`. The client had all of it.
   */
  truncated?: AnswerTruncation;
}

/** How much of an answer's text was assembled, of how much the upstream sent (UTF-8 bytes). */
export interface AnswerTruncation {
  keptBytes: number;
  bytes: number;
}

export interface AnsweredResponse {
  id: string;
  /** The response object as the upstream gave it. */
  body: Record<string, unknown>;
  /** Its output items, the history a continuation adds after the request's input. */
  output: unknown[];
}
