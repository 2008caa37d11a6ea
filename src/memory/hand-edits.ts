/**
 * Reflections a person adds, edits, restores or deletes (the management API and the
 * dashboard alike). An addition takes MCP `remember`'s path, marked with a tag; an edit is
 * cleaned like a learnt reflection and keeps its id and origin; tags a person gives are the
 * person's (`tagsBy`). A failed rebuild of the root index only delays it until the next
 * write, so it is reported, not turned into an error for a change that succeeded.
 */
import type { Reflection, ReflectionKind, Visibility } from '../domain/types.js';
import { reflectionId } from './reflection-id.js';
import { MAX_SCOPE_LENGTH, validName } from '../domain/scope.js';
import { ADDED_BY_HAND_TAG, EDITED_BY_HAND_TAG, embeddingText, isMarkerTag, subjectTags } from '../domain/reflection-text.js';
import { taggedBy } from '../domain/tag-authors.js';
import { EngramError } from '../errors.js';
import type { ReflectionPatch } from '../ports/index.js';
import { checkReflection, createReflectionWriter, validateReflection, type ReflectionWriterDeps } from './reflection-writer.js';
import { rebuildRootIndex } from './root-index.js';

/**
 * Tags that mark a reflection a person wrote or edited, which `source` cannot say (`mcp`
 * covers every reflection stored on purpose): anyone can filter on them; not searched.
 */
export { ADDED_BY_HAND_TAG, EDITED_BY_HAND_TAG } from '../domain/reflection-text.js';

export interface NewHandReflection {
  content: string;
  kind: ReflectionKind;
  topic?: string;
  tags?: string[];
  /**
   * The project it holds in (DESIGN section 13); absent or null: it holds everywhere.
   * Whether it restates a stored reflection is judged on what a conversation of this
   * project and user sees, so the same words in another project or another user's are
   * not a restatement.
   */
  scope?: string | null;
  /** The app's end user it is for; absent or null: the agent's own, shared by all its users. */
  user?: string | null;
}

export type HandEdit = Partial<Omit<NewHandReflection, 'scope' | 'user'>> & {
  /**
   * Make a superseded reflection current again (history restored by hand): injected and
   * found again. The reflection that replaced it stays as it is. Like any hand edit it is
   * marked `edited-by-hand`, so extraction never supersedes it again; on a current
   * reflection that mark is all it changes.
   */
  restore?: boolean;
  /** Move it to this project's scope; null: it holds everywhere (DESIGN section 13). Absent: unchanged. */
  scope?: string | null;
};

export interface HandEditDeps extends ReflectionWriterDeps {
  /** The change was stored but the root index could not be rebuilt. */
  onIndexError(error: unknown, agentId: string): void;
}

export interface HandEdits {
  /** Rejects with `conflict` (a stored reflection says the same; the agent is full) or `invalid_request`. */
  add(agentId: string, input: NewHandReflection): Promise<Reflection>;
  /** Rejects with `not_found` or `invalid_request`. */
  edit(agentId: string, id: string, change: HandEdit): Promise<Reflection>;
  /** `edit` with `restore` alone: a superseded reflection made current again. Rejects with `not_found`. */
  restore(agentId: string, id: string): Promise<Reflection>;
  /** False when there was no such reflection. */
  remove(agentId: string, id: string): Promise<boolean>;
  /** Deletes what was learnt from one conversation; returns the deleted ids. */
  removeLearntIn(agentId: string, reflections: Reflection[]): Promise<string[]>;
}

/** A scope or user name given by hand: undefined for none (absent or null); refused when not a usable name. */
function checkedName(name: string | null | undefined, param: 'scope' | 'user'): string | undefined {
  if (name === undefined || name === null) return undefined;
  if (!validName(name)) {
    throw new EngramError('invalid_request', `A ${param} is a printable name of 1 to ${MAX_SCOPE_LENGTH} characters`, { param });
  }
  return name;
}

/**
 * The answer to a hand-written reflection the writer refused (nothing else refuses one
 * that passed the API's schema): it says too little (`contentProblem`, in its words), or
 * holds no text once its secrets are removed.
 */
function saysTooLittle(input: { content: string; kind: string }): EngramError {
  const verdict = checkReflection(input);
  const message =
    'refused' in verdict && verdict.refused === 'no_content'
      ? `\`content\` says too little to keep: ${verdict.why}`
      : '`content` holds no text once secrets are removed';
  return new EngramError('invalid_request', message, { param: 'content' });
}

function withTag(tags: readonly string[], tag: string): string[] {
  return [...new Set([...tags, tag])];
}

export function createHandEdits(deps: HandEditDeps): HandEdits {
  // The tags a person gives are the person's (`tagsBy`), whatever the `mcp` source says.
  const writer = createReflectionWriter({ ...deps, tagAuthor: 'person' });
  const { reflections, embedder } = deps;

  const rebuildIndex = async (agentId: string): Promise<void> => {
    try {
      await rebuildRootIndex(agentId, deps);
    } catch (error) {
      deps.onIndexError(error, agentId);
    }
  };

  /**
   * The stored reflection with these very words a conversation of `partition` sees, if
   * any: its own (same scope and user), then those of its user everywhere, of the agent in
   * its scope, of the agent everywhere. A near restatement has another id and is not named.
   */
  const sameWords = async (agentId: string, cleaned: { kind: ReflectionKind; content: string }, partition: Visibility): Promise<Reflection | undefined> => {
    const seen: Visibility[] = [partition, { user: partition.user }, { scope: partition.scope }, {}];
    for (const { scope, user } of seen) {
      const found = await reflections.get(agentId, reflectionId(agentId, cleaned.kind, cleaned.content, { ...(scope !== undefined ? { scope } : {}), ...(user !== undefined ? { user } : {}) }));
      if (found) return found;
    }
    return undefined;
  };

  const edits: HandEdits = {
    async add(agentId, input) {
      const scope = checkedName(input.scope, 'scope');
      const user = checkedName(input.user, 'user');
      const partition = { ...(scope !== undefined ? { scope } : {}), ...(user !== undefined ? { user } : {}) };
      const result = await writer.write(agentId, [{ content: input.content, kind: input.kind, topic: input.topic, tags: input.tags ?? [] }], 'mcp', partition);
      const [stored] = result.stored;
      if (stored) {
        // The writer rebuilt the index; the tag does not show in it, nor in the vector.
        return (await reflections.update(agentId, stored.id, { tags: withTag(stored.tags, ADDED_BY_HAND_TAG) })) ?? stored;
      }
      if (result.overLimit > 0) {
        throw new EngramError(
          'conflict',
          `This agent already holds ${result.limit.toLocaleString('en-US')} reflections, its limit (ENGRAM_MAX_REFLECTIONS): delete some first`,
        );
      }
      if (result.noContent > 0) throw saysTooLittle(input);
      if (result.duplicates > 0) {
        const cleaned = validateReflection(input);
        const same = cleaned && (await sameWords(agentId, cleaned, partition));
        throw new EngramError('conflict', `A stored reflection says the same${same ? ` (\`${same.id}\`)` : ''}; nothing was added`, { param: 'content' });
      }
      throw saysTooLittle(input);
    },

    async edit(agentId, id, change) {
      const current = await reflections.get(agentId, id);
      if (!current) throw new EngramError('not_found', `No reflection \`${id}\``);
      const edited = {
        kind: change.kind ?? current.kind,
        content: change.content ?? current.content,
        topic: change.topic ?? current.topic,
        // Engram's markers are its own to set: kept whatever tags are given, never taken from them.
        tags: change.tags === undefined ? current.tags : [...subjectTags(change.tags), ...current.tags.filter(isMarkerTag)],
      };
      const cleaned = validateReflection(edited);
      if (!cleaned) throw saysTooLittle(edited);
      const patch: ReflectionPatch = { tags: withTag(cleaned.tags, EDITED_BY_HAND_TAG) };
      // Tags given are the person's, kept or changed (they saw them); none left, no author.
      if (change.tags !== undefined) patch.tagsBy = taggedBy(cleaned.tags, 'person') ?? null;
      if (change.kind !== undefined) patch.kind = cleaned.kind;
      if (change.topic !== undefined) patch.topic = cleaned.topic;
      if (change.content !== undefined) patch.content = cleaned.content;
      if (change.restore) patch.supersededBy = null;
      if (change.scope !== undefined) patch.scope = checkedName(change.scope, 'scope') ?? null;
      // The vector is made from the content and the tags: either changing re-embeds.
      const searched = embeddingText({ content: cleaned.content, tags: cleaned.tags });
      if (searched !== embeddingText(current)) {
        const [vector] = await embedder.embed([searched]);
        patch.vector = vector;
        patch.embedderId = embedder.id;
      }
      const updated = await reflections.update(agentId, id, patch);
      if (!updated) throw new EngramError('not_found', `No reflection \`${id}\``);
      await rebuildIndex(agentId);
      return updated;
    },

    restore(agentId, id) {
      return edits.edit(agentId, id, { restore: true });
    },

    async remove(agentId, id) {
      if (!(await reflections.delete(agentId, id))) return false;
      await rebuildIndex(agentId);
      return true;
    },

    async removeLearntIn(agentId, learnt) {
      const ids: string[] = [];
      for (const reflection of learnt) if (await reflections.delete(agentId, reflection.id)) ids.push(reflection.id);
      if (ids.length > 0) await rebuildIndex(agentId);
      return ids;
    },
  };
  return edits;
}
