/**
 * What the three adapters' `toolArguments` share: arguments that travel as JSON text
 * (chat completions, responses) are parsed here, and an answer that holds no usable call
 * is one error, `ToolAnswerError`, which says which tool and what was wrong (memory jobs
 * tell a person so: `memory/job-failure.ts`).
 */
import { EngramError } from '../errors.js';

/** An answer to a forced tool choice that gives no usable call: worth a retry (`upstream_stream_failed`). */
export class ToolAnswerError extends EngramError {
  /** The forced tool. */
  readonly tool: string;
  /** `no_call`, or how the call's arguments are wrong ("with arguments that are not JSON"). */
  readonly problem: 'no_call' | string;

  constructor(tool: string, problem: 'no_call' | string, message: string) {
    super('upstream_stream_failed', message);
    this.tool = tool;
    this.problem = problem;
  }
}

/** The answer holds no call of `toolName`: the model ignored the forced choice, or the answer was cut. */
export function noToolCall(toolName: string): ToolAnswerError {
  return new ToolAnswerError(toolName, 'no_call', `The answer holds no ${toolName} call`);
}

/** `toolName` was called, but with arguments it does not take: `problem` says how ("without a `reflections` list"). */
export function badToolArguments(toolName: string, problem: string): ToolAnswerError {
  return new ToolAnswerError(toolName, problem, `${toolName} was called ${problem}`);
}

/** A call's arguments given as JSON text, parsed; a text that is not JSON is an error worth a retry. */
export function parsedArguments(text: string, toolName: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badToolArguments(toolName, 'with arguments that are not JSON');
  }
}
