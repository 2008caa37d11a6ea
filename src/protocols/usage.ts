import { isObject } from './shared.js';
import type { TokenUsage } from './types.js';

/**
 * The token counts of a non-streaming answer's `usage` object, read under the protocol's
 * own names (`prompt_tokens`/`completion_tokens` on Chat Completions, `input_tokens`/
 * `output_tokens` on Responses and Messages). Undefined when the answer reports none
 * (some compatible servers omit it): the call still counts, its tokens cannot. A count
 * that is not a non-negative integer counts 0 rather than poisoning the day's sum.
 *
 * `inputTokens` counts every input token, those read from the provider's prompt cache
 * included; `cachedInputTokens` says how many of them were (`names.cached`, a path under
 * `usage`). Where the protocol counts cache reads and writes beside its input count
 * (Messages: `cache_read_input_tokens`, `cache_creation_input_tokens`), `names.added`
 * names them, and they are added to `inputTokens`.
 */
export function tokenUsage(
  body: unknown,
  names: { input: string; output: string; cached: readonly string[]; added?: readonly string[] },
): TokenUsage | undefined {
  const usage = isObject(body) ? body.usage : undefined;
  if (!isObject(usage)) return undefined;
  const added = (names.added ?? []).reduce((sum, name) => sum + count(usage[name]), 0);
  return {
    inputTokens: count(usage[names.input]) + added,
    outputTokens: count(usage[names.output]),
    cachedInputTokens: count(names.cached.reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), usage)),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
