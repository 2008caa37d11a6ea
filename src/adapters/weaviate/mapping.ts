/**
 * Pure conversions between the port's reflections and Weaviate objects, and the two
 * rules the adapter applies itself: the upsert merge rule (the embedded store does it in
 * SQL; Weaviate has no conditional write, so it is read, merged here, then written) and
 * the cosine of a keyword match to the query vector.
 */
import { isVisible, TAG_AUTHORS, type Reflection, type ReflectionKind, type ReflectionSource, type TagAuthor } from '../../domain/types.js';
import { storedSupersession, type ListQuery } from '../../ports/reflections.js';
import type { ReflectionProperties } from './schema.js';
import { keywordTerms } from '../../memory/keywords.js';
import { originFromText, originText } from '../../domain/reflection-origin.js';

const KINDS: ReadonlySet<string> = new Set<ReflectionKind>(['factual', 'procedural']);
const SOURCES: ReadonlySet<string> = new Set<ReflectionSource>(['conversation', 'transcript', 'mcp']);
const AUTHORS: ReadonlySet<string> = new Set<TagAuthor>(TAG_AUTHORS);

/**
 * A reflection as an object's properties (`lastUsedAt` left out while null; the
 * supersession and tag author while absent, `superseded` always written).
 */
export function toProperties(r: Reflection): ReflectionProperties {
  const properties: ReflectionProperties = {
    reflectionId: r.id,
    agentId: r.agentId,
    kind: r.kind,
    content: r.content,
    topic: r.topic,
    tags: [...r.tags],
    terms: termsOf(r),
    source: r.source,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    useCount: r.useCount,
    embedderId: r.embedderId,
  };
  // Absent rather than null: the gRPC batch serialiser has no null for a number.
  if (r.lastUsedAt !== null) properties.lastUsedAt = r.lastUsedAt;
  if (r.origin) properties.origin = originText(r.origin) as string;
  const { supersededBy, supersededAt } = storedSupersession(r);
  properties.superseded = supersededBy !== undefined;
  if (supersededBy !== undefined) {
    properties.supersededBy = supersededBy;
    properties.supersededAt = supersededAt;
  }
  if (r.tagsBy) properties.tagsBy = r.tagsBy;
  Object.assign(properties, scopeProperties(r));
  return properties;
}

/** What BM25 searches: the keyword terms of content, topic and tags, as the embedded store indexes them. */
export function termsOf(r: Pick<Reflection, 'content' | 'topic' | 'tags'>): string {
  return keywordTerms(`${r.content} ${r.topic} ${r.tags.join(' ')}`).join(' ');
}

/**
 * An object's properties as a reflection. Read defensively: an object written by an
 * older release, or a property Weaviate returns empty (an empty `text[]`, an unset
 * number), still yields a well-formed reflection of the agent whose tenant held it.
 */
export function fromProperties(properties: Readonly<Record<string, unknown>>, agentId: string): Reflection {
  const p = properties;
  return {
    id: text(p.reflectionId),
    agentId,
    kind: KINDS.has(text(p.kind)) ? (text(p.kind) as ReflectionKind) : 'factual',
    content: text(p.content),
    topic: text(p.topic),
    tags: Array.isArray(p.tags) ? p.tags.filter((t): t is string => typeof t === 'string') : [],
    source: SOURCES.has(text(p.source)) ? (text(p.source) as ReflectionSource) : 'conversation',
    createdAt: num(p.createdAt) ?? 0,
    updatedAt: num(p.updatedAt) ?? 0,
    lastUsedAt: num(p.lastUsedAt) ?? null,
    useCount: num(p.useCount) ?? 0,
    embedderId: text(p.embedderId),
    ...originFromText(p.origin),
    // Current while the id is empty or absent (objects older than the property have none).
    ...(text(p.supersededBy) === '' ? {} : { supersededBy: text(p.supersededBy), supersededAt: num(p.supersededAt) ?? 0 }),
    ...(AUTHORS.has(text(p.tagsBy)) ? { tagsBy: text(p.tagsBy) as TagAuthor } : {}),
    ...(text(p.scope) === '' ? {} : { scope: text(p.scope) }),
    ...(text(p.user) === '' ? {} : { user: text(p.user) }),
  };
}

/** The scope and user as written on every object: '' and false when none (a PATCH cannot remove a property). */
export function scopeProperties(r: Pick<Reflection, 'scope' | 'user'>): Partial<ReflectionProperties> {
  return { scope: r.scope ?? '', scoped: Boolean(r.scope), user: r.user ?? '', personal: Boolean(r.user) };
}

/**
 * The port's upsert rule: the incoming reflection replaces kind, content, topic, tags,
 * tagsBy, the supersession (`storedSupersession`), source, origin, updatedAt and
 * embedderId (and the vector, written beside it), and the stored one keeps the earliest
 * createdAt, the larger useCount and the later lastUsedAt, so re-learning a reflection
 * never resets how it has been used.
 */
export function mergeUpsert(stored: Reflection | undefined, incoming: Reflection): Reflection {
  const { supersededBy: _by, supersededAt: _at, ...rest } = incoming;
  const next: Reflection = { ...rest, tags: [...incoming.tags], ...storedSupersession(incoming) };
  if (!stored) return next;
  next.createdAt = Math.min(stored.createdAt, incoming.createdAt);
  next.useCount = Math.max(stored.useCount, incoming.useCount);
  next.lastUsedAt = laterOf(stored.lastUsedAt, incoming.lastUsedAt);
  return next;
}

/**
 * What an upsert must PATCH onto a stored object: the replaced fields always, and a
 * counter only where the merge rule lets the incoming value win. Leaving the counters out
 * otherwise (the usual case: re-extraction brings useCount 0, lastUsedAt null) means an
 * upsert never overwrites uses another replica wrote between its read and its write.
 */
export function upsertChanges(stored: Reflection, merged: Reflection): Partial<ReflectionProperties> {
  const changes: Partial<ReflectionProperties> = {
    kind: merged.kind,
    content: merged.content,
    topic: merged.topic,
    tags: [...merged.tags],
    terms: termsOf(merged),
    source: merged.source,
    updatedAt: merged.updatedAt,
    embedderId: merged.embedderId,
    // Replaced like the content ('' clears it: a PATCH cannot remove a property).
    origin: originText(merged.origin) ?? '',
    ...supersessionChanges(merged),
    tagsBy: merged.tagsBy ?? '',
    ...scopeProperties(merged),
  };
  if (merged.createdAt !== stored.createdAt) changes.createdAt = merged.createdAt;
  if (merged.useCount !== stored.useCount) changes.useCount = merged.useCount;
  if (merged.lastUsedAt !== null && merged.lastUsedAt !== stored.lastUsedAt) changes.lastUsedAt = merged.lastUsedAt;
  return changes;
}

/**
 * The supersession as a PATCH writes it: the flag always, the id or '' (current), and the
 * time only beside an id (a PATCH cannot remove a number; a stale one is never read).
 */
export function supersessionChanges(r: Reflection): Partial<ReflectionProperties> {
  const { supersededBy, supersededAt } = storedSupersession(r);
  return supersededBy === undefined
    ? { superseded: false, supersededBy: '' }
    : { superseded: true, supersededBy, supersededAt };
}

/**
 * Whether `list` keeps a reflection under the query's filters: the same rule the
 * adapter's Weaviate filters express, applied here to lists read whole by cursor.
 */
export function listed(r: Reflection, query: ListQuery): boolean {
  const superseded = r.supersededBy !== undefined;
  if (query.kind !== undefined && r.kind !== query.kind) return false;
  if (query.superseded !== undefined && superseded !== query.superseded) return false;
  if (query.visible && !isVisible(r, query.visible)) return false;
  if (query.scope !== undefined && (r.scope ?? null) !== query.scope) return false;
  if (query.user !== undefined && (r.user ?? null) !== query.user) return false;
  return !query.needsTags || (!superseded && r.tagsBy === undefined);
}

export function laterOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/**
 * Cosine similarity. Vectors are unit length by the embedder's contract, but dividing by
 * the norms costs nothing here and keeps a stray unnormalised vector from scoring above 1.
 * Different lengths (another embedder) or a zero vector: 0.
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Weaviate's cosine distance is `1 - cosine`. */
export function cosineFromDistance(distance: number): number {
  return 1 - distance;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

/**
 * `list` order: most recently updated first (least recently with `oldestFirst`), then by
 * id, so pages never overlap or skip when timestamps tie. Weaviate sorts the same way
 * server-side (`updatedAt` descending or ascending, `reflectionId` ascending); this is the
 * same order for lists assembled here.
 */
export function compareForList(a: Reflection, b: Reflection, oldestFirst = false): number {
  const byTime = oldestFirst ? a.updatedAt - b.updatedAt : b.updatedAt - a.updatedAt;
  return byTime || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
