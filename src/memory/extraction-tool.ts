/**
 * The tool every extraction call forces (DESIGN section 5): `record_reflections`, its
 * strict-compatible schema, and what the model gave it read back loosely.
 */
import { badToolArguments } from '../protocols/forced-tool.js';
import { isObject } from '../protocols/shared.js';
import type { ForcedTool, ProposedReflection } from '../protocols/types.js';

/** A reflection's tags as the forced tools (`record_reflections`, `record_tags`) ask for them. */
export const TAGS_PROPERTY = { type: 'array', items: { type: 'string' }, description: 'Phrases to find it under later: goals, symptoms, generic names, synonyms.' };

/**
 * A forced tool's input, `{ reflections: [...] }`, strict-compatible: strict tool schemas
 * (Responses) need every property of an entry listed as required, so each one is.
 */
export function reflectionsSchema<const T extends Record<string, object>>(properties: T) {
  return {
    type: 'object',
    properties: {
      reflections: { type: 'array', items: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false } },
    },
    required: ['reflections'],
    additionalProperties: false,
  } as const;
}

/** JSON Schema of the `record_reflections` tool input (DESIGN section 5). */
export const RECORD_REFLECTIONS_SCHEMA = reflectionsSchema({
  kind: { type: 'string', enum: ['factual', 'procedural'] },
  content: { type: 'string' },
  topic: { type: 'string' },
  tags: TAGS_PROPERTY,
  // Nullable, being required.
  turn: { type: ['integer', 'null'], description: 'The n of the transcript turn (<turn n=...>) this is learnt from, or null.' },
  // An empty list when it replaces nothing.
  supersedes: {
    type: 'array',
    items: { type: 'string' },
    description: 'Ids of the existing reflections this one replaces (a changed fact); usually empty.',
  },
  everywhere: {
    type: 'boolean',
    description: 'true when it holds in every project (about the person, the tools, or the user said so); false when it concerns this project.',
  },
});

export const RECORD_REFLECTIONS_TOOL = 'record_reflections';

/** The forced tool of an extraction call. */
export const RECORD_REFLECTIONS: ForcedTool = {
  name: RECORD_REFLECTIONS_TOOL,
  description: 'Record the reflections worth remembering from this conversation. Call it once; an empty list is a valid answer.',
  schema: RECORD_REFLECTIONS_SCHEMA,
};

/**
 * The `record_reflections` arguments, checked loosely: malformed entries are dropped
 * (the writer validates again), a missing list is an error worth a retry.
 */
export function proposedFrom(args: unknown): ProposedReflection[] {
  return reflectionsIn(args, RECORD_REFLECTIONS_TOOL).filter(isObject).flatMap((entry) =>
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

/** The `reflections` list of a forced tool's arguments; a missing list is an error worth a retry. */
export function reflectionsIn(args: unknown, tool: string): unknown[] {
  if (!isObject(args) || !Array.isArray(args.reflections)) throw badToolArguments(tool, 'without a `reflections` list');
  return args.reflections;
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
