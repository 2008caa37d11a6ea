/**
 * What the three adapters' `toolArguments` share: arguments that travel as JSON text
 * (chat completions, responses) are parsed here, and a missing call is one error.
 */
import { EngramError } from '../errors.js';

/** The answer holds no call of `toolName`: the model ignored the forced choice, or the answer was cut. */
export function noToolCall(toolName: string): EngramError {
  return new EngramError('upstream_stream_failed', `The answer holds no ${toolName} call`);
}

/** A call's arguments given as JSON text, parsed; a text that is not JSON is an error worth a retry. */
export function parsedArguments(text: string, toolName: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new EngramError('upstream_stream_failed', `${toolName} was called with arguments that are not JSON`);
  }
}
