/** Rows of the `reflections` table and their mapping to domain records. */
import { TAG_AUTHORS, type Reflection, type ReflectionKind, type TagAuthor } from '../../domain/types.js';
import { originFromText } from '../../domain/reflection-origin.js';
import type { SnapshotEntry } from './agent-snapshot.js';

export interface ReflectionRow {
  seq: number;
  agent_id: string;
  id: string;
  kind: string;
  content: string;
  topic: string;
  tags: string;
  source: string;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
  use_count: number;
  embedder_id: string;
  /** JSON `ReflectionOrigin`, or null. */
  origin: string | null;
  /** Null while current. */
  superseded_by: string | null;
  superseded_at: number | null;
  /** A `TagAuthor`, or null while no one has tagged it. */
  tags_by: string | null;
  /** Null: holds everywhere. */
  scope: string | null;
  /** Null: the agent's own. */
  user_id: string | null;
}

/** Every column but the vector, which only the snapshot reads. */
export const COLUMNS =
  'seq, agent_id, id, kind, content, topic, tags, source, created_at, updated_at, last_used_at, use_count, embedder_id, origin, ' +
  'superseded_by, superseded_at, tags_by, scope, user_id';

/**
 * What a snapshot reads of each of an agent's rows, as an array (`raw()`): building an
 * object per row costs better-sqlite3 more than the rest of the read, at 10,000 rows.
 * A snapshot holds current reflections only (searches never return superseded ones), so
 * it reads no superseded_* columns: its query leaves those rows out.
 */
export const SNAPSHOT_COLUMNS =
  'seq, id, kind, content, topic, tags, source, created_at, updated_at, last_used_at, use_count, embedder_id, origin, tags_by, scope, user_id, vector';

/** The condition that keeps superseded rows out of a snapshot. */
export const CURRENT = 'superseded_by IS NULL';

export type SnapshotTuple = [
  seq: number,
  id: string,
  kind: string,
  content: string,
  topic: string,
  tags: string,
  source: string,
  createdAt: number,
  updatedAt: number,
  lastUsedAt: number | null,
  useCount: number,
  embedderId: string,
  origin: string | null,
  tagsBy: string | null,
  scope: string | null,
  user: string | null,
  vector: Uint8Array,
];

export function toSnapshotEntry(agentId: string, row: SnapshotTuple): SnapshotEntry {
  const [seq, id, kind, content, topic, tags, source, createdAt, updatedAt, lastUsedAt, useCount, embedderId, origin, tagsBy, scope, user, vector] = row;
  return {
    seq,
    kind,
    vector,
    reflection: {
      id,
      agentId,
      kind: kind as ReflectionKind,
      content,
      topic,
      tags: JSON.parse(tags) as string[],
      source: source as Reflection['source'],
      createdAt,
      updatedAt,
      lastUsedAt,
      useCount,
      embedderId,
      ...originFromText(origin),
      ...tagAuthorFrom(tagsBy),
      ...scopeFrom(scope, user),
    },
  };
}

/** The vector's own bytes (little-endian float32), without copying. */
export function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function toReflection(row: ReflectionRow): Reflection {
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: row.kind as ReflectionKind,
    content: row.content,
    topic: row.topic,
    tags: JSON.parse(row.tags) as string[],
    source: row.source as Reflection['source'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    useCount: row.use_count,
    embedderId: row.embedder_id,
    ...originFromText(row.origin),
    ...supersessionFrom(row.superseded_by, row.superseded_at),
    ...tagAuthorFrom(row.tags_by),
    ...scopeFrom(row.scope, row.user_id),
  };
}

/** The keys of a superseded reflection; none while current (`superseded_at` is only read beside an id). */
function supersessionFrom(by: string | null, at: number | null): Pick<Reflection, 'supersededBy' | 'supersededAt'> {
  return by === null ? {} : { supersededBy: by, supersededAt: at ?? 0 };
}

const AUTHORS: ReadonlySet<string> = new Set(TAG_AUTHORS);

/** The `tagsBy` key when the column holds a known author; absent otherwise (untagged). */
function tagAuthorFrom(text: string | null): Pick<Reflection, 'tagsBy'> {
  return text !== null && AUTHORS.has(text) ? { tagsBy: text as TagAuthor } : {};
}

/** The `scope` and `user` keys, each only when set (absent: everywhere, the agent's own). */
function scopeFrom(scope: string | null, user: string | null): Pick<Reflection, 'scope' | 'user'> {
  return { ...(scope === null ? {} : { scope }), ...(user === null ? {} : { user }) };
}
