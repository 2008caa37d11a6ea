/**
 * The one way reflections enter the store: from extraction, MCP `remember`, transcript
 * uploads and hand additions. Validates, redacts, deduplicates, embeds, stores, marks the
 * reflections a changed fact replaces (extraction's `supersedes`), and rebuilds the
 * agent's root index.
 */
import type { Reflection, ReflectionKind, ReflectionOrigin, ReflectionSource, TagAuthor, Visibility } from '../domain/types.js';
import type { ProposedReflection } from '../protocols/types.js';
import { redactSecrets } from '../redaction/redact.js';
import { reflectionId } from './reflection-id.js';
import { embeddingText, isByHand, isMarkerTag, subjectTags } from '../domain/reflection-text.js';
import { contentProblem } from '../domain/reflection-content.js';
import { tagAuthorOf, taggedBy } from '../domain/tag-authors.js';
import { MAX_REFLECTIONS_PER_AGENT } from '../domain/limits.js';
import { oneLine, truncateEnd } from '../domain/text.js';
import type { Embedder, ReflectionStore, StoredReflection } from '../ports/index.js';
import type { Control } from '../control/control.js';
import { cosine, embedText } from './embedders/local-embedder.js';
import { rebuildRootIndex } from './root-index.js';

/**
 * Cosine of the hashed word features (`embedText`) at or above which a new reflection
 * restates an existing one: case, punctuation and small-word changes score 0.93-1.0,
 * looser rewordings 0.90-0.92, while distinct facts that differ in one name, version or
 * tool ("owned by Alice" / "by Bob", "/v2" / "/v3", "uvu" / "vitest") reach 0.89. Judged
 * on the words, whatever the configured embedder: meaning-based vectors put "owned by
 * Alice" next to "owned by Bob", which are two facts. Erring towards keeping: a
 * near-duplicate costs a line, a lost fact costs the fact.
 */
export const NEAR_DUPLICATE_THRESHOLD = 0.92;
export const MAX_CONTENT_CHARS = 1000;
export const MAX_TOPIC_CHARS = 60;
export const DEFAULT_TOPIC = 'general';
/** Tags kept per reflection, and characters per tag: a handful of short phrases. */
export const MAX_TAGS = 12;
export const MAX_TAG_CHARS = 60;
/** Existing neighbours looked at per new reflection (some may come from an older embedder). */
const NEIGHBOURS = 3;

export interface ValidReflection {
  kind: ReflectionKind;
  content: string;
  topic: string;
  /** Searched, never injected (`domain/reflection-text.ts`). */
  tags: string[];
}

export interface WriteResult {
  /** Reflections added by this write. */
  stored: Reflection[];
  /** Proposals dropped as restating another (in the batch or in the store); the stored one was touched. */
  duplicates: number;
  /** Proposals dropped as invalid (unknown kind, no text). */
  rejected: number;
  /** Proposals refused as saying too little to be a reflection (`contentProblem`). */
  noContent: number;
  /** New reflections not stored because the agent holds `limit` already. */
  overLimit: number;
  /** The most reflections one agent may hold (`ENGRAM_MAX_REFLECTIONS`). */
  limit: number;
  /** Existing reflections this write marked superseded (history) by what it stored or restated. */
  superseded: number;
  /** Superseded reflections learnt again word for word that became current again (see `WriteOptions.supersedable`). */
  restored: number;
}

export interface WriteOptions {
  /** Where each proposal was learnt (extraction); absent for reflections stored on purpose. */
  origin?: (proposal: ProposedReflection) => ReflectionOrigin;
  /**
   * The ids a proposal's `supersedes` may name: those the extraction model was shown. Any
   * other id (invented, or quoted by a turn) is ignored; absent, `supersedes` is ignored.
   *
   * Once a proposal is stored, or turns out to restate an existing reflection, each id it
   * names that is in this set, is current, is not by a person's hand (`isByHand`: hand
   * edits win over extraction) and is not itself kept by this write (a reflection
   * restated unchanged stays one reflection, never superseded by itself or by another
   * proposal of the same answer) is marked superseded by the kept reflection.
   *
   * A proposal that restates a superseded reflection word for word (its very id) keeps it
   * history, superseding nothing, unless it also supersedes the reflection that replaced
   * it: then the fact changed back, and the old reflection is current again in place of
   * its replacement. Re-learning a replaced fact in passing ("we used to run X") must not
   * bring it back beside the fact that replaced it.
   */
  supersedable?: ReadonlySet<string>;
  /**
   * The conversation's project (DESIGN section 13): what it learns is stored in it,
   * unless the proposal says it holds everywhere (`everywhere: true`).
   */
  scope?: string;
  /**
   * The app's end user the conversation is with: everything learnt is theirs. Duplicates
   * are looked for only among what the conversation sees, and only the user's own
   * reflections (the agent's shared ones when there is no user) can be superseded.
   */
  user?: string;
}

export interface ReflectionWriter {
  write(agentId: string, proposed: readonly unknown[], source: ReflectionSource, options?: WriteOptions): Promise<WriteResult>;
}

export interface ReflectionWriterDeps {
  reflections: ReflectionStore;
  embedder: Embedder;
  control: Control;
  now: () => number;
  nearDuplicateThreshold?: number;
  /** The most reflections one agent may hold; new ones past it are not stored (`overLimit`). */
  maxReflections?: number;
  /**
   * Who writes the tags of what this writer stores (`Reflection.tagsBy`). Absent: the
   * source says (`tagAuthorOf`: the extraction model for what is learnt, the agent for
   * MCP `remember`); hand edits write as `person`.
   */
  tagAuthor?: TagAuthor;
}

/**
 * What the writer makes of one proposal: its stored form, or why it is not a reflection:
 * `invalid` (not an object, a kind other than `factual` or `procedural`, no text once
 * secrets are removed) or `no_content` (it says too little: `contentProblem`, with `why`).
 */
export type ReflectionVerdict = { valid: ValidReflection } | { refused: 'invalid' } | { refused: 'no_content'; why: string };

/**
 * The stored form of one proposal: kind `factual` or `procedural` (any case); content on
 * one line, secrets redacted, at most 1,000 characters, saying enough to be a reflection
 * (`contentProblem`, judged without the redacted secrets); topic a short lowercase
 * phrase, `general` when missing; tags lowercase phrases on one line of at most
 * `MAX_TAG_CHARS`, at most `MAX_TAGS` distinct ones besides Engram's own marks, a tag
 * holding a secret left out whole (anything else given as tags is dropped, not an error).
 */
export function checkReflection(proposal: unknown): ReflectionVerdict {
  if (typeof proposal !== 'object' || proposal === null) return { refused: 'invalid' };
  const { kind, content, topic, tags } = proposal as Record<string, unknown>;
  const normalisedKind = typeof kind === 'string' ? kind.trim().toLowerCase() : '';
  if (normalisedKind !== 'factual' && normalisedKind !== 'procedural') return { refused: 'invalid' };
  if (typeof content !== 'string') return { refused: 'invalid' };
  const text = truncateEnd(oneLine(redactSecrets(content)), MAX_CONTENT_CHARS);
  if (!/[\p{L}\p{N}]/u.test(text.replace(/\[REDACTED:[a-z_]+\]/g, ''))) return { refused: 'invalid' };
  const why = contentProblem(text);
  if (why) return { refused: 'no_content', why };
  const topicText = typeof topic === 'string' ? oneLine(redactSecrets(topic)).toLowerCase().replace(/^[#\s]+/, '') : '';
  return {
    valid: {
      kind: normalisedKind,
      content: text,
      topic: topicText === '' ? DEFAULT_TOPIC : truncateEnd(topicText, MAX_TOPIC_CHARS),
      tags: validTags(tags),
    },
  };
}

/** The stored form of one proposal (`checkReflection`), or `undefined` when it is refused. */
export function validateReflection(proposal: unknown): ValidReflection | undefined {
  const verdict = checkReflection(proposal);
  return 'valid' in verdict ? verdict.valid : undefined;
}

/**
 * `tags` as a reflection stores them: lowercase phrases on one line of at most
 * `MAX_TAG_CHARS`, at most `MAX_TAGS` distinct subject tags in the order given (Engram's
 * marks kept besides), a tag holding a secret dropped whole, anything but strings ignored.
 * The one rule for every writer of tags (extraction, `remember`, hand edits, the tagging job).
 */
export function validTags(tags: unknown): string[] {
  if (!Array.isArray(tags)) return [];
  const kept = new Set<string>();
  // Engram's own marks (made or edited by hand) do not count against the cap.
  let subject = 0;
  for (const tag of tags) {
    if (typeof tag !== 'string') continue;
    if (isMarkerTag(tag)) {
      kept.add(tag);
      continue;
    }
    if (subject === MAX_TAGS) continue;
    const line = oneLine(tag);
    // A tag that holds a secret is dropped whole: a redacted phrase finds nothing.
    if (redactSecrets(line) !== line) continue;
    const text = truncateEnd(line.toLowerCase(), MAX_TAG_CHARS);
    if (!/[\p{L}\p{N}]/u.test(text) || kept.has(text)) continue;
    kept.add(text);
    subject++;
  }
  return [...kept];
}

export function createReflectionWriter(deps: ReflectionWriterDeps): ReflectionWriter {
  const threshold = deps.nearDuplicateThreshold ?? NEAR_DUPLICATE_THRESHOLD;
  const limit = deps.maxReflections ?? MAX_REFLECTIONS_PER_AGENT;
  return {
    async write(agentId, proposed, source, options = {}) {
      const author = deps.tagAuthor ?? tagAuthorOf(source);
      let rejected = 0;
      let noContent = 0;
      let duplicates = 0;
      const unique = new Map<string, ValidReflection & { origin?: ReflectionOrigin; supersedes: Set<string> } & Partition>();
      const visible: Visibility = partitionOf(options, false);
      for (const proposal of proposed) {
        const verdict = checkReflection(proposal);
        const valid = 'valid' in verdict ? verdict.valid : undefined;
        const partition = partitionOf(options, (proposal as { everywhere?: unknown } | null)?.everywhere === true);
        if (!valid) {
          if ('refused' in verdict && verdict.refused === 'no_content') noContent++;
          else rejected++;
        }
        else if (unique.has(idOf(agentId, valid, partition))) {
          duplicates++;
          const first = unique.get(idOf(agentId, valid, partition))!;
          first.tags = mergedTags(first.tags, valid.tags) ?? first.tags;
          for (const id of supersededIn(proposal, options.supersedable)) first.supersedes.add(id);
        }
        else {
          unique.set(idOf(agentId, valid, partition), {
            ...valid,
            ...partition,
            ...(options.origin ? { origin: options.origin(proposal as ProposedReflection) } : {}),
            supersedes: new Set(supersededIn(proposal, options.supersedable)),
          });
        }
      }
      if (unique.size === 0) return { stored: [], duplicates, rejected, noContent, overLimit: 0, limit, superseded: 0, restored: 0 };

      const candidates = [...unique];
      const vectors = await deps.embedder.embed(candidates.map(([, r]) => embeddingText(r)));
      const words = candidates.map(([, r]) => embedText(r.content));
      const fresh: Array<StoredReflection & { words: Float32Array }> = [];
      // What each proposal that names reflections it replaces kept: itself once stored, or what it restates.
      const claims: Claim[] = [];
      const now = deps.now();
      // Restated reflections, with the tags the restatement brings that they lack.
      const touched = new Map<string, { reflection: Reflection; tags: string[] }>();
      // New reflections that gained a later proposal's tags in this batch: embedded again.
      const retag = new Set<StoredReflection>();
      const touch = (reflection: Reflection, tags: readonly string[]) => {
        const entry = touched.get(reflection.id) ?? { reflection, tags: [] };
        entry.tags.push(...tags);
        touched.set(reflection.id, entry);
      };
      for (const [index, [id, valid]] of candidates.entries()) {
        const vector = vectors[index];
        const said = words[index];
        const claim = (kept: Pick<Reflection, 'id' | 'supersededBy'>, isNew = false) =>
          claims.push({ kept: kept.id, isNew, replacedBy: kept.supersededBy, supersedes: valid.supersedes });
        const existing = await deps.reflections.get(agentId, id);
        if (existing) {
          duplicates++;
          touch(existing, valid.tags);
          claim(existing);
          continue;
        }
        const earlier = fresh.find((other) => cosine(other.words, said) >= threshold);
        if (earlier) {
          duplicates++;
          const merged = mergedTags(earlier.tags, valid.tags);
          if (merged) {
            earlier.tags = merged;
            retag.add(earlier);
          }
          claim(earlier, true);
          continue;
        }
        // The nearest by meaning are the candidates; whether one says the same is judged on the words.
        const near = (await deps.reflections.nearest(agentId, { vector, limit: NEIGHBOURS, visible })).find(
          (n) => cosine(embedText(n.reflection.content), said) >= threshold,
        );
        if (near) {
          duplicates++;
          touch(near.reflection, valid.tags);
          claim(near.reflection);
          continue;
        }
        claim({ id }, true);
        fresh.push({
          id,
          agentId,
          ...valid,
          source,
          createdAt: now,
          updatedAt: now,
          lastUsedAt: null,
          useCount: 0,
          embedderId: deps.embedder.id,
          vector,
          words: said,
        });
      }

      // Past the cap, the first proposals are kept (an extraction lists its best first).
      const room = fresh.length === 0 ? 0 : Math.max(0, limit - (await deps.reflections.count(agentId)));
      const overLimit = Math.max(0, fresh.length - room);
      fresh.splice(room);
      const reembed = fresh.filter((reflection) => retag.has(reflection));
      if (reembed.length > 0) {
        const again = await deps.embedder.embed(reembed.map(embeddingText));
        reembed.forEach((reflection, index) => (reflection.vector = again[index]));
      }
      // Who wrote the tags, once the batch has merged them; none without subject tags.
      for (const reflection of fresh) {
        const tagsBy = taggedBy(reflection.tags, author);
        if (tagsBy) reflection.tagsBy = tagsBy;
      }
      await deps.reflections.upsert(fresh.map(({ words: _words, ...stored }) => stored));
      // A restated memory counts as fresh again (an empty patch only bumps `updatedAt`), and
      // it gains the restatement's new tags, up to the cap: a lesson learnt again from a
      // request phrased another way is then found under that phrasing too. Tags added to a
      // reflection that had none are this writer's; added to others' tags, the first
      // author stays.
      for (const { reflection, tags } of touched.values()) {
        const merged = mergedTags(reflection.tags, tags);
        if (!merged) {
          await deps.reflections.update(agentId, reflection.id, {});
          continue;
        }
        const [vector] = await deps.embedder.embed([embeddingText({ content: reflection.content, tags: merged })]);
        const firstTags = subjectTags(reflection.tags).length === 0 ? taggedBy(merged, author) : undefined;
        await deps.reflections.update(agentId, reflection.id, {
          tags: merged,
          vector,
          embedderId: deps.embedder.id,
          ...(firstTags ? { tagsBy: firstTags } : {}),
        });
      }
      const { superseded, restored } = await markSuperseded(deps, agentId, claims, new Set(fresh.map((r) => r.id)), now, options.user);
      if (fresh.length > 0 || touched.size > 0) {
        await rebuildRootIndex(agentId, { reflections: deps.reflections, control: deps.control });
      }
      const stored = fresh.map(({ words: _words, vector: _vector, ...reflection }): Reflection => reflection);
      return { stored, duplicates, rejected, noContent, overLimit, limit, superseded, restored };
    },
  };
}

/** A reflection one proposal kept (stored, or restated) and the shown ids the proposal said it replaces. */
interface Claim {
  kept: string;
  /** Kept as a new reflection of this write: it exists only if it was stored (within the limit). */
  isNew: boolean;
  /** The kept reflection is history: the reflection that replaced it. */
  replacedBy: string | undefined;
  supersedes: ReadonlySet<string>;
}

/** The ids a raw proposal names in `supersedes` that may be superseded (`WriteOptions.supersedable`). */
function supersededIn(proposal: unknown, supersedable: ReadonlySet<string> | undefined): string[] {
  if (!supersedable || supersedable.size === 0) return [];
  const named = (proposal as { supersedes?: unknown }).supersedes;
  return Array.isArray(named) ? named.filter((id): id is string => typeof id === 'string' && supersedable.has(id)) : [];
}

/**
 * Carries out the claims in the order of the answer (`WriteOptions.supersedable` has the
 * rules): each reflection named is superseded once, by the first claim that names it.
 */
async function markSuperseded(
  deps: Pick<ReflectionWriterDeps, 'reflections'>,
  agentId: string,
  claims: readonly Claim[],
  stored: ReadonlySet<string>,
  now: number,
  user: string | undefined,
): Promise<{ superseded: number; restored: number }> {
  const kept = new Set(claims.map((claim) => claim.kept));
  const done = new Set<string>();
  const current = new Set<string>();
  let superseded = 0;
  let restored = 0;
  const supersede = async (id: string, by: string): Promise<boolean> => {
    if (kept.has(id) || done.has(id)) return false;
    const target = await deps.reflections.get(agentId, id);
    // One user's conversation never retires another's reflections, nor the agent's shared ones.
    if (!target || target.supersededBy !== undefined || isByHand(target) || target.user !== user) return false;
    await deps.reflections.update(agentId, id, { supersededBy: by, supersededAt: now });
    done.add(id);
    superseded++;
    return true;
  };
  for (const claim of claims) {
    if (claim.supersedes.size === 0 || (claim.isNew && !stored.has(claim.kept))) continue;
    if (claim.replacedBy !== undefined && !current.has(claim.kept)) {
      // History learnt again: current again only in place of what replaced it.
      if (!claim.supersedes.has(claim.replacedBy) || !(await supersede(claim.replacedBy, claim.kept))) continue;
      await deps.reflections.update(agentId, claim.kept, { supersededBy: null });
      current.add(claim.kept);
      restored++;
    }
    for (const id of claim.supersedes) await supersede(id, claim.kept);
  }
  return { superseded, restored };
}

/** `current` with the subject tags of `added` it lacks, while fewer than `MAX_TAGS`; undefined when none is added. */
function mergedTags(current: readonly string[], added: readonly string[]): string[] | undefined {
  const merged = [...current];
  let subject = subjectTags(current).length;
  for (const tag of added) {
    if (subject >= MAX_TAGS) break;
    if (merged.includes(tag)) continue;
    merged.push(tag);
    subject++;
  }
  return merged.length > current.length ? merged : undefined;
}

function idOf(agentId: string, reflection: ValidReflection, partition: Partition): string {
  return reflectionId(agentId, reflection.kind, reflection.content, partition);
}

/** Where a new reflection is stored: the conversation's user, and its scope unless it holds everywhere. */
type Partition = Pick<Reflection, 'scope' | 'user'>;

function partitionOf(options: Pick<WriteOptions, 'scope' | 'user'>, everywhere: boolean): Partition {
  return {
    ...(options.scope !== undefined && !everywhere ? { scope: options.scope } : {}),
    ...(options.user !== undefined ? { user: options.user } : {}),
  };
}

