import { badToolArguments } from './forced-tool.js';
import { isObject } from './shared.js';
import { RECORD_REFLECTIONS_TOOL, type ProposedReflection } from './types.js';

/**
 * The `record_reflections` arguments, checked loosely: malformed entries are dropped
 * (the writer validates again), a missing list is an error worth a retry.
 */
export function proposedFrom(args: unknown): ProposedReflection[] {
  if (!isObject(args) || !Array.isArray(args.reflections)) {
    throw badToolArguments(RECORD_REFLECTIONS_TOOL, 'without a `reflections` list');
  }
  return args.reflections.filter(isObject).flatMap((entry) =>
    (entry.kind === 'factual' || entry.kind === 'procedural') && typeof entry.content === 'string'
      ? [
          {
            kind: entry.kind,
            content: entry.content,
            topic: typeof entry.topic === 'string' ? entry.topic : '',
            ...(Array.isArray(entry.tags) && { tags: entry.tags.filter((tag): tag is string => typeof tag === 'string') }),
            ...(Number.isInteger(entry.turn) && (entry.turn as number) >= 0 ? { turn: entry.turn as number } : {}),
            ...supersededIds(entry.supersedes),
            ...(entry.everywhere === true ? { everywhere: true } : {}),
          },
        ]
      : [],
  );
}

/** More ids than the extraction request ever shows: the rest of a longer list is dropped. */
const MAX_SUPERSEDED = 16;

/**
 * The ids a proposal says it replaces, as `{ supersedes }` when there is one: strings only,
 * trimmed, the brackets of the `[ref_...]` form the model was shown taken off, each once.
 * Whether an id was shown and may be superseded is the writer's to decide.
 */
function supersededIds(value: unknown): { supersedes?: string[] } {
  if (!Array.isArray(value)) return {};
  const ids = new Set<string>();
  for (const item of value) {
    if (typeof item !== 'string') continue;
    const id = item.trim().replace(/^\[(.*)\]$/, '$1').trim();
    if (id !== '') ids.add(id);
    if (ids.size === MAX_SUPERSEDED) break;
  }
  return ids.size === 0 ? {} : { supersedes: [...ids] };
}
