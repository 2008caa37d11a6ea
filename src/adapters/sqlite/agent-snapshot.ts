/**
 * Everything a search needs of one agent, kept in memory between requests: the vector
 * matrix, the BM25 keyword index and the reflections themselves, so a search runs no
 * SQL beyond the version check. Building one reads and tokenises all of the agent's
 * rows, so this process's own writes patch it in place instead; writes by another
 * connection show as a version it did not expect, and the snapshot is rebuilt.
 *
 * Usage counters (`useCount`, `lastUsedAt`) are not versioned: this process's own
 * `markUsed` patches them here (pending or flushed alike), uses recorded by another
 * connection show after the next rebuild.
 *
 * Only current reflections are held: searches never return superseded ones, so leaving
 * them out costs a search nothing. A write that supersedes a reflection removes it; one
 * that restores it adds it back (with its vector, which the write supplies).
 */
import { isVisible, type Reflection, type Visibility } from '../../domain/types.js';
import { KeywordIndex, type KeywordDocument } from './keyword-index.js';
import { KIND_CODES, VectorMatrix, type VectorRow } from './vector-matrix.js';

/** One stored current reflection as a snapshot is built from it. */
export interface SnapshotEntry extends VectorRow {
  reflection: Reflection;
}

/** The text a reflection is keyword-indexed by. */
export function documentText(doc: { content: string; topic: string; tags: readonly string[] }): string {
  return `${doc.content} ${doc.topic} ${doc.tags.join(' ')}`;
}

/** A committed write: the reflection as stored; `vector` only when it changed. */
export type SnapshotChange =
  | { type: 'put'; seq: number; reflection: Reflection; vector?: Uint8Array }
  | { type: 'remove'; seq: number };

export class AgentSnapshot {
  /** `reflection_tenants.version` this snapshot reflects. */
  version: number;
  readonly matrix: VectorMatrix;
  readonly keywords = new KeywordIndex();
  readonly #rows = new Map<number, Reflection>();
  readonly #seqOfId = new Map<string, number>();
  /** Rows with a scope or a user: while none, a search needs no visibility filter. */
  readonly #partitioned = new Set<number>();

  constructor(entries: readonly SnapshotEntry[], version: number) {
    this.version = version;
    this.matrix = new VectorMatrix(entries);
    const documents: KeywordDocument[] = [];
    for (const { seq, reflection } of entries) {
      this.#rows.set(seq, reflection);
      this.#seqOfId.set(reflection.id, seq);
      if (reflection.scope !== undefined || reflection.user !== undefined) this.#partitioned.add(seq);
      documents.push({ seq, kind: kindCode(reflection), text: documentText(reflection) });
    }
    this.keywords.putAll(documents);
  }

  /** Reflections held. */
  get size(): number {
    return this.matrix.count;
  }

  /** Whether any reflection held has a scope or a user. */
  get partitioned(): boolean {
    return this.#partitioned.size > 0;
  }

  /** Whether the row is visible to a conversation (`isVisible`). */
  visible(seq: number, visibility: Visibility): boolean {
    const stored = this.#rows.get(seq);
    return stored !== undefined && isVisible(stored, visibility);
  }

  /** The stored reflection's id. */
  idOf(seq: number): string | undefined {
    return this.#rows.get(seq)?.id;
  }

  /** A copy of the current reflection `id`, safe to hand out; undefined when it is not held (unknown, or superseded). */
  byId(id: string): Reflection | undefined {
    const seq = this.#seqOfId.get(id);
    return seq === undefined ? undefined : this.reflection(seq);
  }

  /** A copy of the stored reflection, safe to hand out. */
  reflection(seq: number): Reflection | undefined {
    const stored = this.#rows.get(seq);
    return stored && { ...stored, tags: [...stored.tags] };
  }

  /** Records `count` uses, the latest at `at`, like `markUsed` does in SQL. */
  use(id: string, count: number, at: number): void {
    const seq = this.#seqOfId.get(id);
    const stored = seq === undefined ? undefined : this.#rows.get(seq);
    if (!stored) return;
    // In place: only copies leave the snapshot.
    stored.useCount += count;
    stored.lastUsedAt = Math.max(stored.lastUsedAt ?? at, at);
  }

  /**
   * Applies this process's own committed write, which moved the agent from `version - 1`
   * to `version`. False when the snapshot cannot follow (another writer came between,
   * or the matrix has no room): drop it and build a new one.
   */
  apply(version: number, changes: readonly SnapshotChange[]): boolean {
    if (version !== this.version + 1) return false;
    for (const change of changes) {
      if (change.type === 'remove' || change.reflection.supersededBy !== undefined) {
        this.#remove(change.seq);
        continue;
      }
      // A reflection new to the snapshot (added, or restored) comes with its vector; one
      // without cannot be placed: false, and the snapshot is rebuilt.
      if (!this.matrix.put(change.seq, change.reflection.kind, change.vector)) return false;
      this.#index(change.seq, change.reflection);
    }
    this.version = version;
    return true;
  }

  #remove(seq: number): void {
    const stored = this.#rows.get(seq);
    if (stored) this.#seqOfId.delete(stored.id);
    this.#rows.delete(seq);
    this.#partitioned.delete(seq);
    this.matrix.remove(seq);
    this.keywords.remove(seq);
  }

  #index(seq: number, reflection: Reflection): void {
    const stored = this.#rows.get(seq);
    this.#rows.set(seq, reflection);
    this.#seqOfId.set(reflection.id, seq);
    if (reflection.scope !== undefined || reflection.user !== undefined) this.#partitioned.add(seq);
    else this.#partitioned.delete(seq);
    const kind = kindCode(reflection);
    // Usage-only and kind-only changes keep the words: skip re-tokenising.
    if (stored && documentText(stored) === documentText(reflection)) this.keywords.setKind(seq, kind);
    else this.keywords.put(seq, kind, documentText(reflection));
  }
}

function kindCode(reflection: Reflection): number {
  return KIND_CODES[reflection.kind] ?? KIND_CODES.factual;
}
