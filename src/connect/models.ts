/**
 * Which model a client's configuration names. It must be one the agent's upstream serves,
 * so `engram connect` asks the upstream's list through Engram (`GET <agent>/v1/models`,
 * relayed with the agent's key) and picks from it.
 */
import type { ModelChoice } from './types.js';

/** The model a client of each family names when the upstream's list is not known. */
export const DEFAULT_MODEL: Readonly<Record<ModelChoice['family'], string>> = { openai: 'gpt-4.1', anthropic: 'claude-sonnet-4-5' };

/** Model ids that fit a family's clients: chat models, not embeddings, images or audio. */
const FAMILY_PATTERN: Record<ModelChoice['family'], RegExp> = {
  openai: /^(gpt-|o\d|chatgpt-)(?!.*(audio|realtime|transcribe|tts|image|search))/,
  anthropic: /^claude-/,
};

/** The ids of a models list in either dialect (`{data: [{id}]}`); undefined when the answer is not one. */
export function modelIds(answer: unknown): string[] | undefined {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  return data.map((entry) => (entry as { id?: unknown } | null)?.id).filter((id): id is string => typeof id === 'string' && id !== '');
}

/**
 * The kind's usual model when the upstream serves it, else the first served one of the
 * family (in the upstream's order), else the first served at all; undefined for an empty list.
 */
export function pickModel(served: readonly string[], choice: ModelChoice): string | undefined {
  if (served.includes(choice.fallback)) return choice.fallback;
  return served.find((id) => FAMILY_PATTERN[choice.family].test(id)) ?? served[0];
}
