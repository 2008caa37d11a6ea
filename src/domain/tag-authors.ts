/**
 * Who wrote a reflection's subject tags (`Reflection.tagsBy`). Only subject tags count:
 * Engram's own markers (`added-by-hand`, `edited-by-hand`) say nothing of the subject, so
 * a reflection carrying only those has no author; it waits for the tagging job.
 */
import { ADDED_BY_HAND_TAG, EDITED_BY_HAND_TAG, subjectTags } from './reflection-text.js';
import type { Reflection, ReflectionSource, TagAuthor } from './types.js';

/**
 * The author of the tags a reflection arrives with from this source: the extraction model
 * for what it learnt (a conversation, an uploaded transcript), the agent for what it
 * stored on purpose (MCP `remember`).
 */
export function tagAuthorOf(source: ReflectionSource | string): TagAuthor {
  return source === 'conversation' || source === 'transcript' ? 'extraction' : 'agent';
}

/** `author` when the tags hold a subject tag; undefined otherwise (no one tagged it). */
export function taggedBy(tags: readonly string[], author: TagAuthor): TagAuthor | undefined {
  return subjectTags(tags).length > 0 ? author : undefined;
}

/**
 * Who most likely wrote the subject tags of a reflection stored before `tagsBy` existed
 * (SQLite migration 12, an archive of version 1): a person when Engram marked it added or
 * edited by hand (the person saw its tags and kept them), else the author its source
 * implies; undefined without subject tags. Migration 12 runs this function: a change here
 * changes what that migration does to files not yet upgraded, so change it only on purpose.
 */
export function presumedTagAuthor(reflection: Pick<Reflection, 'tags'> & { source: ReflectionSource | string }): TagAuthor | undefined {
  const byHand = reflection.tags.includes(ADDED_BY_HAND_TAG) || reflection.tags.includes(EDITED_BY_HAND_TAG);
  return taggedBy(reflection.tags, byHand ? 'person' : tagAuthorOf(reflection.source));
}

const AUTHOR_LABELS: Readonly<Record<TagAuthor, string>> = {
  extraction: 'the extraction model',
  tagging: 'the tagging job',
  person: 'a person',
  agent: 'the agent (remember)',
};

/**
 * Who wrote a reflection's tags, as a person reads it (the dashboard, the CLI): the
 * extraction model, the tagging job, a person, the agent through `remember`, or "not
 * tagged yet". An author this release does not know is shown as it is named.
 */
export function tagAuthorLabel(author: string | null | undefined): string {
  if (!author) return 'not tagged yet';
  return (AUTHOR_LABELS as Record<string, string>)[author] ?? author;
}
