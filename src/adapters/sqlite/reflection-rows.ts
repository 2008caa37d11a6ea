/** Rows of the `reflections` table and their mapping to domain records. */
import type { Reflection, ReflectionKind } from '../../domain/types.js';
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
}

/** Every column but the vector, which only the snapshot reads. */
export const COLUMNS =
  'seq, agent_id, id, kind, content, topic, tags, source, created_at, updated_at, last_used_at, use_count, embedder_id, origin';

/**
 * What a snapshot reads of each of an agent's rows, as an array (`raw()`): building an
 * object per row costs better-sqlite3 more than the rest of the read, at 10,000 rows.
 */
export const SNAPSHOT_COLUMNS =
  'seq, id, kind, content, topic, tags, source, created_at, updated_at, last_used_at, use_count, embedder_id, origin, vector';

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
  vector: Uint8Array,
];

export function toSnapshotEntry(agentId: string, row: SnapshotTuple): SnapshotEntry {
  const [seq, id, kind, content, topic, tags, source, createdAt, updatedAt, lastUsedAt, useCount, embedderId, origin, vector] = row;
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
  };
}
