import { isObject } from './shared.js';
import type { TokenUsage } from './types.js';

/**
 * The token counts of a non-streaming answer's `usage` object, read under the protocol's
 * own names (`prompt_tokens`/`completion_tokens` on Chat Completions, `input_tokens`/
 * `output_tokens` on Responses and Messages). Undefined when the answer reports none
 * (some compatible servers omit it): the call still counts, its tokens cannot. A count
 * that is not a non-negative integer counts 0 rather than poisoning the day's sum.
 */
export function tokenUsage(body: unknown, input: string, output: string): TokenUsage | undefined {
  const usage = isObject(body) ? body.usage : undefined;
  if (!isObject(usage)) return undefined;
  const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
  return { inputTokens: count(usage[input]), outputTokens: count(usage[output]) };
}
