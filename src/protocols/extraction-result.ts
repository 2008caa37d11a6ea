import { EngramError } from '../errors.js';
import { isObject } from './shared.js';
import type { ProposedReflection } from './types.js';

/**
 * The `record_reflections` arguments, checked loosely: malformed entries are dropped
 * (the writer validates again), a missing list is an error worth a retry.
 */
export function proposedFrom(args: unknown): ProposedReflection[] {
  if (!isObject(args) || !Array.isArray(args.reflections)) {
    throw new EngramError('upstream_stream_failed', 'record_reflections was called without a `reflections` list');
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
          },
        ]
      : [],
  );
}
