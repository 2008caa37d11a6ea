import { isObject } from './shared.js';
import type { TokenUsage } from './types.js';

/**
 * The token counts of a non-streaming answer's `usage` object, read under the protocol's
 * own names. Undefined when the answer reports none (some compatible servers omit it). A
 * count that is not a non-negative integer counts 0 rather than poisoning the day's sum.
 * `names.cached` is the path under `usage` of the input's cached part; `names.added`, counts
 * a protocol keeps beside its input count (Messages' cache reads and writes), added to it.
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
