/**
 * What of a reflection is searched by meaning: its content and its tags. Tags are the
 * words and phrases a reflection should be found under without being said in it (the
 * goal or symptom of someone who needs it, the generic names of what it names); they are
 * searched, never injected. The tags Engram itself sets to mark a reflection made or
 * edited by a person say nothing of its subject and are left out.
 */
import type { Reflection } from './types.js';

export const ADDED_BY_HAND_TAG = 'added-by-hand';
export const EDITED_BY_HAND_TAG = 'edited-by-hand';
const MARKER_TAGS: ReadonlySet<string> = new Set([ADDED_BY_HAND_TAG, EDITED_BY_HAND_TAG]);

export function isMarkerTag(tag: string): boolean {
  return MARKER_TAGS.has(tag);
}

/**
 * Written or edited by a person (it carries one of the markers): what a person wrote
 * wins over what extraction learns, so extraction never supersedes it.
 */
export function isByHand(reflection: Pick<Reflection, 'tags'>): boolean {
  return reflection.tags.some(isMarkerTag);
}

/**
 * What the markers say, in words a person reads beside a reflection ("edited by hand"),
 * where the markers themselves are never shown among its tags; undefined for one no
 * person wrote or changed.
 */
export function byHandNote(tags: readonly string[]): string | undefined {
  const added = tags.includes(ADDED_BY_HAND_TAG);
  const edited = tags.includes(EDITED_BY_HAND_TAG);
  return added && edited ? 'added and edited by hand' : added ? 'added by hand' : edited ? 'edited by hand' : undefined;
}

/** The tags that say what a reflection is about (not Engram's markers). */
export function subjectTags(tags: readonly string[]): string[] {
  return tags.filter((tag) => !isMarkerTag(tag));
}

/** The text a reflection's vector is made from: the content, then its subject tags. */
export function embeddingText(reflection: Pick<Reflection, 'content' | 'tags'>): string {
  const tags = subjectTags(reflection.tags);
  return tags.length === 0 ? reflection.content : `${reflection.content}\n${tags.join('; ')}`;
}
